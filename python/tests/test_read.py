"""Every format the readers accept, into numpy arrays, as the command reads it."""

import shutil
import subprocess

import numpy as np
import pytest

import mrirecon
from conftest import assert_same_image


def test_mrirecon_hdf5(cli, work):
    path = work / "read_coils.h5"
    cli.run("phantom", "-o", path, "--matrix", "40", "--spokes", "50", "--readout", "80", "--coils", "3", "--snr",
            "25", "--seed", "7", "-q")
    s = mrirecon.read(path)
    m = s.nsamples
    assert s.matrix == (40, 40, 1) and s.image_shape == (1, 40, 40) and m == 50 * 80 and s.ncoils == 3
    assert s.trajectory.dtype == np.float32 and s.trajectory.shape == (m, 3)
    assert np.all(s.trajectory[:, 2] == 0) and np.abs(s.trajectory[:, :2]).max() <= 20.0 + 1e-5
    assert s.data.dtype == np.complex64 and s.data.shape == (3, m)
    assert s.sens.dtype == np.complex64 and s.sens.shape == (3, 1, 40, 40)
    assert s.truth.shape == (1, 40, 40) and s.truth_bandlimited.shape == (1, 40, 40) and s.weights.shape == (m,)
    assert s.time is None and s.fieldmap is None
    assert s.fov == (240.0, 240.0, 0.0) and s.noise_sigma > 0 and s.traj_kind == "radial2d"
    assert s.format == "mrirecon-kspace" and (s.volume, s.volumes, s.label) == (0, 1, "volume0")
    assert s.phantom == "shepp-logan-2d" and s.name == str(path)
    # the same scan as the phantom made in the process with the same options
    p = mrirecon.phantom(matrix=40, spokes=50, readout=80, coils=3, snr=25, seed=7)
    for a in ("trajectory", "data", "sens", "truth", "truth_bandlimited", "weights"):
        assert np.array_equal(getattr(p, a), getattr(s, a)), a
    assert p.noise_sigma == s.noise_sigma


def test_readout_times_and_field_map(cli, work):
    path = work / "field.h5"
    cli.run("phantom", "-o", path, "--matrix", "32", "--traj", "spiral", "--interleaves", "8", "--dwell", "8",
            "--te", "2", "--fieldmap", "c=20,x=100", "-q")
    s = mrirecon.read(path)
    assert s.time.shape == (s.nsamples,) and s.time.dtype == np.float32
    assert abs(float(s.time.min()) - 2e-3) < 1e-6 and float(s.time.max()) > 2e-3
    assert s.fieldmap.shape == (1, 32, 32) and abs(float(s.fieldmap.mean()) - 20) < 2
    # through the package and back: the file written again holds the same arrays
    s.write(work / "field_again.h5")
    t = mrirecon.read(work / "field_again.h5")
    for a in ("trajectory", "data", "time", "fieldmap", "weights", "truth"):
        assert np.array_equal(getattr(s, a), getattr(t, a)), a


def test_bart_pair(cli, work, small_scan):
    prefix = work / "bart" / "s"
    prefix.parent.mkdir()
    cli.run("convert", small_scan, prefix)
    h5 = mrirecon.read(small_scan)
    for name in (prefix, str(prefix) + "_ksp", str(prefix) + "_ksp.hdr", str(prefix) + "_traj.cfl"):
        b = mrirecon.read(name)
        assert b.format == "bart" and b.matrix == h5.matrix
        assert np.array_equal(b.trajectory, h5.trajectory) and np.array_equal(b.data, h5.data)
        assert b.truth is None and b.weights is None
    # the command reconstructs the pair as the package does
    out = work / "bart_cli"
    cli.run("recon", str(prefix) + "_ksp", "-o", out, "--method", "gridding-kb", "-q")
    rec = mrirecon.recon(prefix, method="gridding-kb", quiet=True)
    assert_same_image(rec.image, mrirecon.read_image(out / "image_gridding-kb.h5"), "BART pair")


def test_bart_names_and_reader_options(cli, work, small_scan):
    """A k-space array and a trajectory named as BART names them (bart phantom -k -t t k), with --traj and
    --matrix, and a Scan.write to BART read back."""
    d = work / "bartnames"
    d.mkdir()
    cli.run("convert", small_scan, d / "p")
    for part, new in (("p_ksp", "k"), ("p_traj", "t")):
        for ext in (".hdr", ".cfl"):
            shutil.copy(str(d / part) + ext, str(d / new) + ext)
    s = mrirecon.read(d / "k", traj=d / "t", matrix=(64, 64))
    assert s.matrix == (64, 64, 1) and s.format == "bart"
    with pytest.raises(mrirecon.UsageError) as e:
        mrirecon.read(small_scan, matrix=(64, 64))
    want = cli.error("recon", small_scan, "-o", work / "never", "--matrix=64,64", code=2)
    assert str(e.value).replace("mrirecon read:", "mrirecon recon:") == want
    # Scan.write as BART and back
    scan = mrirecon.read(small_scan)
    scan.write(d / "w_ksp.cfl")
    back = mrirecon.read(d / "w")
    assert np.array_equal(back.data, scan.data) and np.array_equal(back.trajectory, scan.trajectory)
    if shutil.which("bart"):
        r = subprocess.run(["bart", "show", "-m", str(d / "w_ksp")], capture_output=True, text=True)
        assert r.returncode == 0 and "Dimensions" in r.stdout, r.stderr


def test_ismrmrd(cli, work):
    ref = work / "ism_ref.h5"
    mrd = cli.ismrmrd(work, "ism", "--coils", "2", "--ref", ref, "--noise", "4", "--units", "normalized")
    s = mrirecon.read(mrd)
    assert s.format == "ismrmrd" and s.ncoils == 2 and s.prewhitened and s.noise_samples > 0
    assert s.geometry is not None and s.recon_matrix == s.matrix
    raw = mrirecon.read(mrd, prewhiten=False, traj_units="normalized")
    assert not raw.prewhitened
    r = mrirecon.read(ref)  # the same multi-coil scan written by the tool in our format
    assert np.allclose(raw.trajectory, r.trajectory, atol=1e-4) and np.allclose(raw.data, r.data, atol=1e-5)
    # recon of the file and of the Scan read from it: the command's image, placed alike
    out = work / "ism_cli"
    cli.run("recon", mrd, "-o", out, "--method", "gridding-kb", "-q")
    want = mrirecon.read_image(out / "image_gridding-kb.h5")
    a = mrirecon.recon(mrd, method="gridding-kb", quiet=True)
    b = mrirecon.recon(s, method="gridding-kb", quiet=True)
    assert_same_image(a.image, want, "ISMRMRD file")
    assert_same_image(b.image, want, "ISMRMRD Scan")
    assert a.geometry == b.geometry and a.geometry is not None
    assert b.report["read"]["format"] == "ismrmrd" and b.report["read"]["prewhitened"]


def test_several_volumes(cli, work):
    mrd = cli.ismrmrd(work, "vol", "--repetitions", "3")
    with pytest.raises(mrirecon.InvalidArgumentError, match=r"holds 3 volumes .*--volume"):
        mrirecon.read(mrd)
    scans = mrirecon.read_all(mrd)
    assert [s.label for s in scans] == ["rep000", "rep001", "rep002"] and [s.volume for s in scans] == [0, 1, 2]
    assert all(s.volumes == 3 for s in scans)
    with pytest.raises(mrirecon.InvalidArgumentError, match="holds 3 volume"):
        mrirecon.read(mrd, volume=3)
