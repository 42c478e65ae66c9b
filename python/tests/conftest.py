"""Shared fixtures of the Python package's tests (run by ctest as tests/cli_python.sh, or by hand:
MRIRECON_LIB=build/libmrirecon.so PYTHONPATH=python python3 -m pytest python/tests).

The command-line binary (the reference the package must agree with) is MRIRECON_BIN, else the mrirecon
next to the library in use; the helper tools of the CLI tests (tool_ismrmrd_write) are looked up next to
it. Scans are made with the command, as a user makes them."""

import os
import pathlib
import subprocess
import tempfile

import numpy as np
import pytest

if "MRIRECON_CACHE_DIR" not in os.environ:  # keep the Q cache of the tests out of ~/.cache
    os.environ["MRIRECON_CACHE_DIR"] = tempfile.mkdtemp(prefix="mrirecon-pytest-cache-")

import mrirecon  # noqa: E402

# the demo's first scan (scripts/demo_run.sh)
DEMO = ["--dim", "2", "--matrix", "128", "--traj", "radial", "--spokes", "201", "--readout", "256", "--snr", "30",
        "--seed", "1"]
# a small scan for the tests that look at options rather than images
SMALL = ["--matrix", "48", "--spokes", "60", "--readout", "96", "--snr", "30", "--seed", "3"]


class Cli:
    """The mrirecon command: run(...) returns the CompletedProcess; first_error(...) the first stderr line
    of a failing run (the message the package must raise)."""

    def __init__(self, path):
        self.path = path
        self.dir = pathlib.Path(path).parent

    def run(self, *args, check=True):
        r = subprocess.run([self.path, *map(str, args)], capture_output=True, text=True)
        if check and r.returncode != 0:
            raise AssertionError(f"mrirecon {' '.join(map(str, args))} exited {r.returncode}:\n{r.stderr}")
        return r

    def error(self, *args, code):
        """The command's message ("mrirecon COMMAND: ...") of a run that must exit with `code`."""
        r = self.run(*args, check=False)
        assert r.returncode == code, f"exit {r.returncode}, expected {code}:\n{r.stderr}"
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith(f"mrirecon {args[0]}: ")]
        assert lines, f"no 'mrirecon {args[0]}: ' line in:\n{r.stderr}"
        return lines[0]

    def tool(self, name):
        p = self.dir / name
        return str(p) if p.is_file() else None

    def phantom(self, path, *args):
        """A scan written by the command (-q); its path."""
        self.run("phantom", "-o", path, *args, "-q")
        return path

    def ismrmrd(self, folder, name, *tool_args):
        """A small phantom written as an ISMRMRD file by tests/tool_ismrmrd_write (with tool_args); the
        test SKIPs when the tool was built without libismrmrd."""
        src = self.phantom(folder / f"{name}_src.h5", "--matrix", "32", "--spokes", "40", "--readout", "64",
                           "--snr", "30")
        out = folder / f"{name}.mrd"
        tool = self.tool("tool_ismrmrd_write")
        if not tool or subprocess.run([tool, src, out, *map(str, tool_args)], capture_output=True).returncode:
            pytest.skip("tool_ismrmrd_write was built without libismrmrd (apt-get install libismrmrd-dev)")
        return out


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("MRIRECON_BIN") or str(pathlib.Path(mrirecon.library_path()).parent / "mrirecon")
    if not os.access(path, os.X_OK):
        pytest.skip(f"the mrirecon command is needed as the reference: {path} not found (set MRIRECON_BIN)")
    return Cli(path)


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("work")


@pytest.fixture(scope="session")
def demo_scan(cli, work):
    """The demo's first scan, written by the command."""
    return cli.phantom(work / "demo.h5", *DEMO)


@pytest.fixture(scope="session")
def demo_cli(cli, work, demo_scan):
    """The command's reconstruction of the demo scan (the defaults): its output folder."""
    out = work / "demo_cli"
    cli.run("recon", demo_scan, "-o", out, "-q")
    return out


@pytest.fixture(scope="session")
def small_scan(cli, work):
    return cli.phantom(work / "small.h5", *SMALL)


@pytest.fixture(scope="session")
def coil_scan(cli, work):
    """4 coils with maps, noisy."""
    return cli.phantom(work / "coils.h5", "--matrix", "48", "--spokes", "60", "--readout", "96", "--coils", "4",
                       "--snr", "30", "--seed", "5")


def rel_l2(a, b):
    a = np.asarray(a, dtype=np.complex128)
    b = np.asarray(b, dtype=np.complex128)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def assert_same_image(got, want, what):
    """Bit for bit, and say by how much otherwise."""
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    if not np.array_equal(got, want):
        raise AssertionError(f"{what}: not bit-identical: relative L2 {rel_l2(got, want):.3e}, "
                             f"max |diff| {np.max(np.abs(got - want)):.3e}")
