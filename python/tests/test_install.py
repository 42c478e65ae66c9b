"""`pip install ./python` (docs/PYTHON.md): the wheel holds the package and the library, and the installed
package finds the library next to itself without MRIRECON_LIB. Nothing is downloaded: the build backend
uses the standard library alone (python/_build/backend.py)."""

import os
import pathlib
import subprocess
import sys
import zipfile

import pytest

import mrirecon

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _pip(*args, env=None):
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, env=env)


def test_pip_install_packs_the_library(tmp_path):
    if _pip("--version").returncode != 0:
        pytest.skip("pip is not available for this Python")
    lib = mrirecon.library_path()
    env = dict(os.environ, MRIRECON_LIB=lib, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = _pip("wheel", "--no-deps", "-w", str(tmp_path / "wheels"), str(ROOT / "python"), env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    (wheel,) = (tmp_path / "wheels").glob("mrirecon-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "mrirecon/libmrirecon.so" in names and "mrirecon/__init__.py" in names
    assert any(n.endswith(".dist-info/RECORD") for n in names)
    r = _pip("install", "--no-deps", "--no-index", "--target", str(tmp_path / "site"), str(wheel), env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("MRIRECON_LIB", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tmp_path / "site")
    code = "import mrirecon; print(mrirecon.library_path()); print(mrirecon.phantom(matrix=16).matrix)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    path, matrix = r.stdout.split("\n")[:2]
    assert path == str(tmp_path / "site" / "mrirecon" / "libmrirecon.so") and matrix == "(16, 16, 1)"
