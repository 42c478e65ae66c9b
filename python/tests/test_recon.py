"""Reconstruction from Python equals the command's: from the file, from the Scan read from it, from the
Scan made by phantom() and from a Scan built from plain arrays; options reach the pipeline."""

import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import mrirecon
from conftest import DEMO, assert_same_image, rel_l2

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_demo_scan_from_file_is_the_commands_image(demo_scan, demo_cli):
    cli = mrirecon.read_image(demo_cli / "image_iterative.h5")
    rec = mrirecon.recon(demo_scan, quiet=True)
    assert rec.methods == ["iterative"]
    assert rec.image.dtype == np.complex64 and rec.image.shape == (1, 128, 128)
    assert_same_image(rec.image, cli, "recon(file)")
    # the report is report.json's content (its timings aside)
    want = json.loads((demo_cli / "report.json").read_text())
    for key in ("scan", "read", "image"):
        assert rec.report[key] == want[key], key
    for key in ("lambda", "reg", "solver", "model", "device"):
        assert rec.report["settings"][key] == want["settings"][key], key
    got_m, want_m = rec.report["methods"][0], want["methods"][0]
    assert got_m["metrics"] == want_m["metrics"]
    assert got_m["iterations"] == want_m["iterations"] and got_m["history"] == want_m["history"]
    assert rec.psnr("image") == want_m["metrics"]["image"]["psnr_db"]


def test_demo_scan_from_arrays_is_the_commands_image(demo_scan, demo_cli):
    cli = mrirecon.read_image(demo_cli / "image_iterative.h5")
    scan = mrirecon.read(demo_scan)
    assert_same_image(mrirecon.recon(scan, quiet=True).image, cli, "recon(read(file))")
    # plain arrays: trajectory, data, matrix, the noise level (no weights, no truth)
    arrays = mrirecon.Scan(scan.trajectory.copy(), scan.data[0].copy(), 128, fov=240,
                           noise_sigma=scan.noise_sigma)
    rec = mrirecon.recon(arrays, quiet=True)
    assert_same_image(rec.image, cli, "recon(Scan(arrays))")
    assert rec.report["read"]["format"] == "arrays" and rec.report["input"] == "arrays"
    assert rec.psnr("image") is None  # no truth given
    # the phantom made in the process, with the command's options
    made = mrirecon.phantom(dim=2, matrix=128, traj="radial", spokes=201, readout=256, snr=30, seed=1)
    assert_same_image(mrirecon.recon(made, quiet=True).image, cli, "recon(phantom(...))")


def test_readme_python_example(cli, tmp_path):
    """The README's Python section runs as shown (within 10 lines) and prints relative L2 0 against the
    command's image of the demo."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    lines = [ln for ln in code.splitlines() if ln.strip()]
    assert len(lines) <= 10, f"the README's Python example has {len(lines)} lines"
    demo = tmp_path / "demo"
    demo.mkdir()
    cli.run("phantom", "-o", demo / "scan.h5", *DEMO, "-q")
    cli.run("recon", demo / "scan.h5", "-o", demo / "recon", "--method", "all", "-q")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "python"),
                                                                      os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = r.stdout.split()
    assert "0.0" in out, f"the example did not print a relative L2 of 0.0:\n{r.stdout}"


def test_reg_gradient_is_the_cg_method(small_scan, cli, tmp_path):
    """--reg gradient reaches the pipeline: the iterative method with the quadratic prior is CG's image."""
    tv = mrirecon.recon(small_scan, quiet=True)
    grad = mrirecon.recon(small_scan, reg="gradient", quiet=True)
    cg = mrirecon.recon(small_scan, method="cg", quiet=True)
    assert grad.report["settings"]["reg"] == "gradient" and tv.report["settings"]["reg"] == "tv"
    assert grad.report["methods"][0]["solver"] == "cg"
    assert rel_l2(grad.image, cg.image) <= 1e-6, rel_l2(grad.image, cg.image)
    assert rel_l2(grad.image, tv.image) > 1e-3, "reg='gradient' changed nothing"
    cli.run("recon", small_scan, "-o", tmp_path / "cg", "--method", "cg", "-q")
    assert_same_image(cg.image, mrirecon.read_image(tmp_path / "cg" / "image_cg.h5"), "method='cg'")


def test_options_reach_the_pipeline(small_scan):
    rec = mrirecon.recon(small_scan, iters=7, lambda_=2e-3, solver="admm", quiet=True)
    s, m = rec.report["settings"], rec.report["methods"][0]
    assert m["iterations"] == 7 and s["iters"] == 7
    assert s["lambda"] == 2e-3 and m["solver"] == "admm"
    rel = mrirecon.recon(small_scan, method="cg", lambda_rel=0.05, iters=5, tol=0, quiet=True)
    assert rel.report["methods"][0]["iterations"] == 5
    assert abs(rel.report["settings"]["lambda_rel"] - 0.05) < 1e-9


def test_every_method_and_gridding_equal_the_command(small_scan, cli, tmp_path):
    rec = mrirecon.recon(small_scan, method="all", quiet=True)
    assert rec.methods == ["iterative", "cg", "gridding-kb", "gridding-bilinear"]
    cli.run("recon", small_scan, "-o", tmp_path / "all", "--method", "all", "-q")
    for m in rec.methods:
        assert_same_image(rec.images[m], mrirecon.read_image(tmp_path / "all" / f"image_{m}.h5"), m)
    kb = mrirecon.recon(small_scan, method="gridding-kb", kernel_width=4, oversample=1.5, quiet=True)
    cli.run("recon", small_scan, "-o", tmp_path / "kb", "--method", "gridding-kb", "--kernel-width", "4",
            "--oversample", "1.5", "-q")
    assert_same_image(kb.image, mrirecon.read_image(tmp_path / "kb" / "image_gridding-kb.h5"), "kb options")
    assert rel_l2(kb.image, rec.images["gridding-kb"]) > 1e-4, "kernel_width/oversample changed nothing"


def test_sense_and_rss_equal_the_command(coil_scan, cli, tmp_path):
    for sens in mrirecon.options("recon")["sens"][2]:  # every coil handling the command knows
        rec = mrirecon.recon(coil_scan, sens=sens, iters=20, quiet=True)
        assert rec.report["settings"]["sens"] in (sens, "file", "estimate"), (sens, rec.report["settings"]["sens"])
        cli.run("recon", coil_scan, "-o", tmp_path / sens, "--sens", sens, "--iters", "20", "-q")
        assert_same_image(rec.image, mrirecon.read_image(tmp_path / sens / "image_iterative.h5"), f"sens={sens}")
    if "coils-compress" in mrirecon.options("recon"):  # an option of the table, with no line of Python for it
        rec = mrirecon.recon(coil_scan, coils_compress=2, iters=20, quiet=True)
        cli.run("recon", coil_scan, "-o", tmp_path / "cc", "--coils-compress", "2", "--iters", "20", "-q")
        assert_same_image(rec.image, mrirecon.read_image(tmp_path / "cc" / "image_iterative.h5"), "coils_compress")
    # the coil maps given as arrays: the same SENSE image
    scan = mrirecon.read(coil_scan)
    assert scan.sens.shape == (4, 1, 48, 48) and scan.data.shape == (4, scan.nsamples)
    own = mrirecon.Scan(scan.trajectory, scan.data, scan.matrix, fov=scan.fov, noise_sigma=scan.noise_sigma,
                        sens=scan.sens)
    rec = mrirecon.recon(own, sens="file", iters=20, quiet=True)
    assert_same_image(rec.image, mrirecon.read_image(tmp_path / "file" / "image_iterative.h5"), "sens arrays")


def test_output_folder_as_the_command(small_scan, tmp_path):
    out = tmp_path / "out"
    rec = mrirecon.recon(small_scan, output=out, method="iterative,gridding-kb", quiet=True)
    names = sorted(p.name for p in out.iterdir())
    for f in ("image_iterative.h5", "image_iterative.png", "image_iterative.nii", "image_gridding-kb.h5",
              "report.json", "report.md", "metrics.csv", "compare.png"):
        assert f in names, f"{f} missing from {names}"
    assert_same_image(rec.image, mrirecon.read_image(out / "image_iterative.h5"), "output=")
    with pytest.raises(mrirecon.UsageError) as e:  # another run's outputs: refused as the command does
        mrirecon.recon(small_scan, output=out, quiet=True)
    assert str(e.value).startswith("mrirecon recon: ") and str(out) in str(e.value)
    mrirecon.recon(small_scan, output=out, force=True, quiet=True)


def test_reconstruction_write_keeps_voxel_size(small_scan, tmp_path):
    rec = mrirecon.recon(small_scan, quiet=True)
    assert rec.fov[:2] == (240.0, 240.0)
    rec.write(tmp_path / "x.nii", nifti="complex")
    img, info = mrirecon.read_image(tmp_path / "x.nii", info=True)
    assert_same_image(img, rec.image, "Reconstruction.write")
    assert info["fov"][:2] == (240.0, 240.0) and rec.geometry is None
    # a placement given with the arrays reaches the report and the files
    s = mrirecon.read(small_scan)
    g = {"position": (1.0, 2.0, 3.0), "read_dir": (0.0, -1.0, 0.0), "phase_dir": (1.0, 0.0, 0.0),
         "slice_dir": (0.0, 0.0, 1.0)}
    own = mrirecon.Scan(s.trajectory, s.data, s.matrix, fov=240, geometry=g)
    assert own.fov == (240.0, 240.0, 0.0)
    placed = mrirecon.recon(own, quiet=True, output=tmp_path / "placed", format="nifti,mrd")
    assert placed.geometry == g and placed.report["image"]["scanner_geometry"] is True
    assert placed.fov == (240.0, 240.0, 0.0) and placed.report["image"]["fov_mm"][:2] == [240, 240]
    assert placed.report["read"]["format"] == "arrays"
    _, info = mrirecon.read_image(tmp_path / "placed" / "image_iterative.mrd", info=True)
    assert info["geometry"] == g


def test_several_volumes_give_a_list(cli, tmp_path):
    mrd = cli.ismrmrd(tmp_path, "p", "--slices", "2")
    recs = mrirecon.recon(mrd, method="gridding-kb", quiet=True)
    assert isinstance(recs, list) and [r.label for r in recs] == ["slice000", "slice001"]
    one = mrirecon.recon(mrd, method="gridding-kb", volume=1, quiet=True)
    assert isinstance(one, mrirecon.Reconstruction) and one.label == "slice001"
    assert_same_image(one.image, recs[1].image, "volume=1")
    assert len(mrirecon.recon_all(mrd, method="gridding-kb", volume=0, quiet=True)) == 1
