"""Errors become exceptions with the command's messages: wrong options (UsageError, the command's exit 2),
bad files and bad arrays (naming the file or the array and the problem)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import mrirecon


@pytest.mark.parametrize("kwargs, argv", [
    ({"foo": 1}, ["--foo"]),
    ({"iters": "abc"}, ["--iters=abc"]),
    ({"iters": -3}, ["--iters=-3"]),
    ({"sens": "bogus"}, ["--sens=bogus"]),
    ({"method": "magic"}, ["--method=magic"]),
    ({"reg": "tv", "solver": "cg"}, ["--reg=tv", "--solver=cg"]),
    ({"lambda_": 1e-3, "lambda_rel": 0.1}, ["--lambda=0.001", "--lambda-rel=0.1"]),
    ({"sens_maps": "x.h5", "sens": "rss"}, ["--sens-maps=x.h5", "--sens=rss"]),
    ({"kernel_width": 5, "method": "cg"}, ["--kernel-width=5", "--method=cg"]),
    ({"precision": "fp64", "device": "cpu"}, ["--precision=fp64", "--device=cpu"]),
    ({"device": "tpu"}, ["--device=tpu"]),
    ({"force": "yes"}, ["--force=yes"]),
])
def test_wrong_option_has_the_commands_message(cli, small_scan, work, kwargs, argv):
    want = cli.error("recon", small_scan, "-o", work / "never", *argv, code=2)
    with pytest.raises(mrirecon.UsageError) as e:
        mrirecon.recon(small_scan, **kwargs)
    assert str(e.value) == want and e.value.status == "USAGE"
    assert isinstance(e.value, ValueError) and isinstance(e.value, mrirecon.Error)
    assert not (work / "never").exists()


def test_phantom_option_errors(cli, work):
    for kwargs, argv in (({"traj": "kooshball", "dim": 2}, ["--traj=kooshball", "--dim=2"]),
                         ({"interleaves": 4}, ["--interleaves=4"]),
                         ({"snr": float("nan")}, ["--snr=nan"]),
                         ({"matrix": "12x"}, ["--matrix=12x"])):
        want = cli.error("phantom", "-o", work / "never.h5", *argv, code=2)
        with pytest.raises(mrirecon.UsageError) as e:
            mrirecon.phantom(**kwargs)
        assert str(e.value) == want
    with pytest.raises(mrirecon.UsageError, match="--suite"):
        mrirecon.phantom(suite=work / "suite")
    with pytest.raises(mrirecon.UsageError, match="--help prints nothing here"):
        mrirecon.phantom(help=True)


def test_reader_options_do_not_apply_to_a_scan_in_memory(small_scan):
    scan = mrirecon.read(small_scan)
    with pytest.raises(mrirecon.UsageError) as e:
        mrirecon.recon(scan, traj_units="cycles")
    assert "--traj-units applies to reading a scan file" in str(e.value) and scan.name in str(e.value)
    with pytest.raises(mrirecon.InvalidArgumentError, match="--volume 1, but the input holds 1 volume"):
        mrirecon.recon(scan, volume=1, quiet=True)


def test_missing_and_malformed_files(cli, work):
    missing = work / "nothing_here.h5"
    with pytest.raises(mrirecon.Error) as e:
        mrirecon.read(missing)
    assert str(missing) in str(e.value)
    bad = work / "garbage.h5"
    bad.write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(range(256)) * 8)
    want = cli.error("recon", bad, "-o", work / "never", code=1)
    with pytest.raises(mrirecon.Error) as e:
        mrirecon.recon(bad, quiet=True)
    assert f"mrirecon recon: {e.value}" == want and str(bad) in str(e.value)
    assert not isinstance(e.value, mrirecon.UsageError)
    with pytest.raises(mrirecon.Error) as e2:
        mrirecon.read(bad)
    assert str(e2.value) == str(e.value) and type(e2.value) is type(e.value)


def test_a_damaged_scan_file(cli, small_scan, work):
    """A scan whose trajectory holds a NaN: the reader's message names the file and the dataset."""
    h5py = pytest.importorskip("h5py", reason="h5py makes the damaged file")
    bad = work / "nan.h5"
    bad.write_bytes(small_scan.read_bytes())
    with h5py.File(bad, "r+") as f:
        f["/kspace/traj"][5, 0] = np.nan
    with pytest.raises(mrirecon.FormatError) as e:
        mrirecon.read(bad)
    assert str(bad) in str(e.value) and "traj" in str(e.value)
    assert f"mrirecon recon: {e.value}" == cli.error("recon", bad, "-o", work / "never", code=1)


def test_bad_arrays(small_scan):
    s = mrirecon.read(small_scan)
    t = s.trajectory.copy()
    t[10, 1] = np.nan
    with pytest.raises(mrirecon.InvalidArgumentError) as e:
        mrirecon.recon(mrirecon.Scan(t, s.data, s.matrix, name="mine"))
    assert str(e.value) == "mine: trajectory: non-finite value nan at flat index 31"
    with pytest.raises(mrirecon.InvalidArgumentError, match=r"mine: data has shape \(1, 99\), expected \(1, "):
        mrirecon.recon(mrirecon.Scan(s.trajectory, s.data[:, :99], s.matrix, name="mine"))
    with pytest.raises(mrirecon.InvalidArgumentError, match=r"sens has shape \(2, 1, 48, 48\), expected \(1, 1,"):
        mrirecon.recon(mrirecon.Scan(s.trajectory, s.data, s.matrix, sens=np.ones((2, 1, 48, 48))))
    w = np.ones(s.nsamples)
    w[3] = -1
    with pytest.raises(mrirecon.InvalidArgumentError, match=r"arrays: weights: negative weight -1 at \[3\]"):
        mrirecon.recon(mrirecon.Scan(s.trajectory, s.data, s.matrix, weights=w))
    with pytest.raises(mrirecon.InvalidArgumentError, match="matrix"):
        mrirecon.Scan(s.trajectory, s.data, (1, 2, 3, 4))
    with pytest.raises(mrirecon.InvalidArgumentError, match="k-space: 0 samples"):
        mrirecon.recon(mrirecon.Scan(np.zeros((0, 3)), np.zeros((1, 0)), 16))
    with pytest.raises(mrirecon.InvalidArgumentError, match="fov"):
        mrirecon.recon(mrirecon.Scan(s.trajectory, s.data, s.matrix, fov=-1))


def test_gpu_without_a_gpu(cli, small_scan, work):
    r = cli.run("recon", small_scan, "-o", work / "gpu_try", "--device", "gpu", "--method", "cg", "--iters", "2",
                "-q", check=False)
    if r.returncode == 0:
        pytest.skip("a usable GPU is present")
    with pytest.raises(mrirecon.NoDeviceError) as e:
        mrirecon.recon(small_scan, device="gpu", method="cg", iters=2, quiet=True)
    assert f"mrirecon recon: {e.value}" in r.stderr.splitlines() and e.value.status == "ENODEV"


def test_library_not_found(tmp_path):
    env = dict(os.environ, MRIRECON_LIB=str(tmp_path / "nowhere.so"))
    code = "import mrirecon\ntry:\n    mrirecon.phantom()\nexcept mrirecon.LibraryNotFoundError as e:\n    print(e)\n"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "libmrirecon.so not found" in r.stdout and "nowhere.so" in r.stdout and "MRIRECON_LIB" in r.stdout
