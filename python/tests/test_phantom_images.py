"""Phantoms with the phantom command's options; images written in every format and read back."""

import numpy as np
import pytest

import mrirecon
from conftest import assert_same_image


@pytest.mark.parametrize("argv", [
    ["--matrix", "32", "--traj", "golden", "--spokes", "30", "--readout", "64", "--snr", "20", "--seed", "9"],
    ["--matrix", "24", "--traj", "spiral", "--interleaves", "6", "--coils", "2", "--marker"],
    ["--matrix", "16", "--dim", "3", "--traj", "stack-of-stars", "--spokes", "12", "--readout", "32",
     "--partitions", "8", "--weights", "none", "--no-truth"],
    ["--matrix", "24", "--traj", "random", "--samples", "900", "--seed", "4", "--fov", "200"],
])
def test_phantom_is_the_commands_scan(cli, work, argv):
    path = work / ("ph_" + "_".join(a.strip("-") for a in argv[:4]) + ".h5")
    cli.run("phantom", "-o", path, *argv, "-q")
    want = mrirecon.read(path)
    kwargs = {}
    i = 0
    while i < len(argv):  # the same options as keywords
        name = argv[i][2:].replace("-", "_")
        if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            kwargs[name] = argv[i + 1]
            i += 2
        else:
            kwargs[name] = True
            i += 1
    got = mrirecon.phantom(**kwargs, quiet=True)
    assert got.format == "phantom" and got.matrix == want.matrix and got.fov == want.fov
    for a in ("trajectory", "data", "weights", "truth", "truth_bandlimited", "sens", "time", "fieldmap"):
        x, y = getattr(got, a), getattr(want, a)
        assert (x is None) == (y is None), a
        assert x is None or np.array_equal(x, y), a
    assert got.noise_sigma == want.noise_sigma and got.traj_kind == want.traj_kind


def test_phantom_output_file(work):
    out = work / "written_by_python.h5"
    s = mrirecon.phantom(matrix=32, spokes=40, readout=64, snr=30, output=out, quiet=True)
    assert s.name == str(out)
    r = mrirecon.read(out)
    assert np.array_equal(r.data, s.data) and np.array_equal(r.trajectory, s.trajectory)


def _image():
    rng = np.random.default_rng(11)
    img = (rng.standard_normal((3, 20, 24)) + 1j * rng.standard_normal((3, 20, 24))).astype(np.complex64)
    img[1, 2:5, 3:6] += 5  # a bright marker near the top-left corner
    return img


GEOMETRY = {"position": (10.0, -20.0, 5.0), "read_dir": (0.0, 1.0, 0.0), "phase_dir": (1.0, 0.0, 0.0),
            "slice_dir": (0.0, 0.0, -1.0)}


@pytest.mark.parametrize("name, fmt", [("a.h5", None), ("b.nii", None), ("c", "cfl"), ("d.cfl", None),
                                        ("e.mrd", None), ("f.h5", "mrirecon"), ("g", "bart")])
def test_write_image_round_trip(tmp_path, name, fmt):
    img = _image()
    path = tmp_path / name
    mrirecon.write_image(path, img, fmt, fov=(240, 200, 15), nifti="complex", method="mine")
    back, info = mrirecon.read_image(path.with_suffix("") if name.endswith(".cfl") else path, info=True)
    assert_same_image(back, img, name)
    if not (fmt in ("cfl", "bart") or name.endswith(".cfl")):  # a BART array holds no voxel size
        assert info["fov"] == (240.0, 200.0, 15.0), info


def test_write_image_geometry_and_magnitude(tmp_path):
    img = _image()
    for name in ("g.nii", "g.mrd", "g.h5"):
        mrirecon.write_image(tmp_path / name, img, fov=(240, 200, 15), geometry=GEOMETRY, nifti="complex")
        back, info = mrirecon.read_image(tmp_path / name, info=True)
        assert_same_image(back, img, name)
        g = info["geometry"]
        if name == "g.h5" and g is None:
            continue  # our HDF5 image keeps no placement
        assert g is not None, name
        for k in GEOMETRY:
            assert np.allclose(g[k], GEOMETRY[k], atol=1e-4), (name, k, g[k])
    mrirecon.write_image(tmp_path / "m.nii", img)  # the default NIfTI is the float32 magnitude
    back = mrirecon.read_image(tmp_path / "m.nii")
    assert np.allclose(back.real, np.abs(img), rtol=1e-6) and not back.imag.any()
    two_d = img[1]
    mrirecon.write_image(tmp_path / "two.h5", two_d)
    assert mrirecon.read_image(tmp_path / "two.h5").shape == (1, 20, 24)


def test_write_image_pictures_and_dicom(tmp_path):
    img = _image()
    mrirecon.write_image(tmp_path / "p.png", img[:1], window=3.0)
    data = (tmp_path / "p.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(data[16:20], "big") == 24 and int.from_bytes(data[20:24], "big") == 20
    mrirecon.write_image(tmp_path / "vol.png", img)  # 3D: three labelled planes, larger than the image
    assert int.from_bytes((tmp_path / "vol.png").read_bytes()[16:20], "big") > 24
    try:
        mrirecon.write_image(str(tmp_path / "dcm") + "/", img, fov=(240, 200, 15))
    except mrirecon.NotSupportedError as e:
        assert "DCMTK" in str(e)
        pytest.skip("this build has no DICOM output (libdcmtk-dev)")
    files = sorted(p.name for p in (tmp_path / "dcm").iterdir())
    assert files == ["IM0001.dcm", "IM0002.dcm", "IM0003.dcm"]
    pydicom = pytest.importorskip("pydicom", reason="pydicom reads the DICOM files back")
    d = pydicom.dcmread(tmp_path / "dcm" / "IM0001.dcm")
    assert (d.Rows, d.Columns) == (20, 24)


def test_write_image_errors(tmp_path):
    img = _image()
    with pytest.raises(mrirecon.InvalidArgumentError, match="image format 'tiff' is not one of"):
        mrirecon.write_image(tmp_path / "x.tif", img, "tiff")
    bad = img.copy()
    bad[0, 0, 1] = np.inf
    with pytest.raises(mrirecon.InvalidArgumentError, match=r"x.h5: the image has a non-finite value inf at flat"):
        mrirecon.write_image(tmp_path / "x.h5", bad)
    with pytest.raises(mrirecon.InvalidArgumentError, match="expected"):
        mrirecon.write_image(tmp_path / "x.h5", np.zeros(5))
    with pytest.raises(mrirecon.Error) as e:
        mrirecon.write_image(tmp_path / "no" / "such" / "dir" / "x.h5", img)
    assert "no/such/dir" in str(e.value)
    with pytest.raises(mrirecon.Error) as e:
        mrirecon.read_image(tmp_path / "missing.nii")
    assert "missing.nii" in str(e.value)


def test_help_and_options():
    text = mrirecon.help("recon")
    assert text.startswith("Usage: mrirecon recon [OPTIONS] SCAN") and "--reg LIST" in text
    opts = mrirecon.options("recon")
    assert opts["reg"][1] == "string" and opts["output"][0] == "o" and opts["force"][1] == "flag"
    assert {"auto", "file", "estimate", "rss"} <= set(opts["sens"][2])
    assert "traj-units" in mrirecon.options("read") and "volume" in mrirecon.options("read")
    assert "coils" in mrirecon.options("phantom")
    with pytest.raises(mrirecon.InvalidArgumentError, match="unknown command 'bench'"):
        mrirecon.help("bench")
