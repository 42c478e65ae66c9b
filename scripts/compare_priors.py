#!/usr/bin/env python3
"""mrirecon's sparsity priors against BART's on the same scans (docs/VALIDATION.md, "Priors").

Each case is a 2D scan made by BART (`bart traj -r`, scaled by 0.5, `bart phantom -k -t`, optionally
`-s C` coils) or by `mrirecon phantom` (golden-angle radial, spirals), with complex Gaussian noise of a
given SNR drawn here (numpy, seeded). Every reconstruction is scored by PSNR against the band-limited
truth after a least-squares fit of one real scale factor to the magnitudes (so BART's and our intensity
units do not matter). Compared:
  - mrirecon with its defaults (`recon SCAN`), and a sweep of --lambda-rel around its automatic lambda
    for each prior (tv, l1 ... as asked), to see how far the automatic lambda is from the best;
  - BART `pics -R T:3:0:L -i 100` (isotropic TV, ADMM) and `pics -e -l1 -r L -i 100` (wavelets, FISTA)
    over L in 0.001 ... 0.1, their best.
Needs bart on PATH, python3 with numpy and h5py, and a build (default build/). Writes the cases and
every image below OUT (default prior_compare/) and prints a Markdown table; --json FILE keeps all
numbers. Reconstruction times are wall times of the commands on this machine.

  python3 scripts/compare_priors.py [--build DIR] [--out DIR] [--cases NAME,...] [--no-bart]
                                    [--ours-sweep] [--threads N]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

try:
    import h5py
except ImportError:
    sys.exit("compare_priors: needs h5py (pip install h5py)")

BART_LAMBDAS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1]


def run(cmd, env=None):
    t0 = time.time()
    # passive OpenMP waiting for both programs: on a shared machine spinning threads cost more than they save
    env = dict(env if env is not None else os.environ, OMP_WAIT_POLICY="passive")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("compare_priors: %s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr[-2000:]))
    return time.time() - t0, r.stdout


def readcfl(name):
    with open(name + ".hdr") as f:
        f.readline()
        dims = [int(x) for x in f.readline().split()]
    n = int(np.prod(dims))
    d = np.fromfile(name + ".cfl", dtype=np.complex64, count=n)
    return d.reshape(dims, order="F")


def writecfl(name, a):
    a = np.asarray(a, dtype=np.complex64)
    with open(name + ".hdr", "w") as f:
        f.write("# Dimensions\n" + " ".join(str(x) for x in a.shape) + "\n")
    a.ravel(order="F").tofile(name + ".cfl")


def psnr_fit(img, truth):
    """PSNR of |img| against |truth| after the least-squares scale a |img|."""
    x = np.abs(np.asarray(img)).ravel().astype(np.float64)
    t = np.abs(np.asarray(truth)).ravel().astype(np.float64)
    a = np.dot(x, t) / max(np.dot(x, x), 1e-300)
    mse = np.mean((a * x - t) ** 2)
    return 20 * np.log10(t.max() / np.sqrt(mse))


def our_image(path):
    with h5py.File(path, "r") as f:
        d = f["image"][()]
    return (d[..., 0] + 1j * d[..., 1]).squeeze()  # [Ny][Nx]


class Case:
    def __init__(self, name, source, traj, spokes, snr, coils=1, seed=1):
        self.name, self.source, self.traj, self.spokes = name, source, traj, spokes
        self.snr, self.coils, self.seed = snr, coils, seed


CASES = {
    "bart-radial-48-20db": Case("bart-radial-48-20db", "bart", "radial", 48, 20),
    "bart-radial-32-20db": Case("bart-radial-32-20db", "bart", "radial", 32, 20),
    "bart-radial-48-15db": Case("bart-radial-48-15db", "bart", "radial", 48, 15),
    "bart-radial-48-25db": Case("bart-radial-48-25db", "bart", "radial", 48, 25),
    "bart-radial-48-30db": Case("bart-radial-48-30db", "bart", "radial", 48, 30),
    "bart-radial-32-15db": Case("bart-radial-32-15db", "bart", "radial", 32, 15),
    "bart-radial-32-25db": Case("bart-radial-32-25db", "bart", "radial", 32, 25),
    "bart-radial-32-30db": Case("bart-radial-32-30db", "bart", "radial", 32, 30),
    "bart-golden-48-20db": Case("bart-golden-48-20db", "bart", "golden", 48, 20),
    "ours-spiral-8-20db": Case("ours-spiral-8-20db", "ours", "spiral", 8, 20),
    "ours-spiral-6-20db": Case("ours-spiral-6-20db", "ours", "spiral", 6, 20),
    "bart-radial8c-64-20db": Case("bart-radial8c-64-20db", "bart", "radial", 64, 20, coils=8),
}


def make_bart_case(c, d, args):
    """BART-made k-space (+ noise here), the band-limited truth, our HDF5 scan with noise_sigma."""
    bart = args.bart
    flags = ["-r"] + (["-G"] if c.traj == "golden" else [])
    run([bart, "traj", "-x", "256", "-y", str(c.spokes)] + flags + [d + "/t0"])
    run([bart, "scale", "0.5", d + "/t0", d + "/b_traj"])
    run([bart, "phantom", "-k", "-t", d + "/b_traj"] + (["-s", str(c.coils)] if c.coils > 1 else []) + [d + "/k0"])
    k = readcfl(d + "/k0")
    rng = np.random.default_rng(c.seed)
    sigma = np.sqrt(np.mean(np.abs(k) ** 2) / (2 * 10 ** (c.snr / 10)))
    k = k + sigma * (rng.standard_normal(k.shape) + 1j * rng.standard_normal(k.shape))
    writecfl(d + "/b_ksp", k)
    # the band-limited truth: the inverse DFT of the analytic Cartesian k-space on the 128 grid
    run([bart, "phantom", "-k", "-x", "128", d + "/kc"])
    run([bart, "fft", "-i", "3", d + "/kc", d + "/tbl"])
    truth = readcfl(d + "/tbl").squeeze()
    if c.coils > 1:
        # ESPIRiT maps from the gridded centre, used by both programs (the same model)
        run([bart, "nufft", "-a", "-d", "128:128:1", d + "/b_traj", d + "/b_ksp", d + "/grid"])
        run([bart, "fft", "-u", "3", d + "/grid", d + "/gridk"])
        run([bart, "ecalib", "-m", "1", d + "/gridk", d + "/b_sens"])
        # the object as SENSE with these maps sees it: weighted by the rss of the true coil profiles
        run([bart, "phantom", "-S", str(c.coils), "-x", "128", d + "/strue"])
        s = readcfl(d + "/strue").squeeze()
        truth = truth * np.sqrt(np.sum(np.abs(s) ** 2, axis=-1))
    else:
        writecfl(d + "/b_sens", np.ones((128, 128, 1, 1), dtype=np.complex64))
    run([args.bin, "convert", d + "/b_ksp.hdr", d + "/scan.h5", "-q"])
    with h5py.File(d + "/scan.h5", "r+") as f:
        f["kspace"].attrs["noise_sigma"] = np.float64(sigma)
    return truth.T if truth.ndim == 2 else truth  # BART's x is the first index: ours [y][x]


def make_our_case(c, d, args):
    """mrirecon phantom (golden-angle radial or spiral), exported to BART for its reconstructions."""
    kind = {"spiral": ["--traj", "spiral", "--interleaves", str(c.spokes)],
            "golden": ["--traj", "golden", "--spokes", str(c.spokes), "--readout", "256"]}[c.traj]
    run([args.bin, "phantom", "-o", d + "/scan.h5", "--dim", "2", "--matrix", "128", "--snr", str(c.snr), "--seed",
         str(c.seed), "-q"] + kind + (["--coils", str(c.coils)] if c.coils > 1 else []))
    run([args.bin, "convert", d + "/scan.h5", d + "/b", "--bart-scale", "-q"])
    writecfl(d + "/b_sens", np.ones((128, 128, 1, 1), dtype=np.complex64))
    with h5py.File(d + "/scan.h5", "r") as f:
        return f["truth"]["bandlimited"][()].squeeze()


def ours(case, d, args, extra, tag):
    out = d + "/ours_" + tag
    cmd = [args.bin, "recon", d + "/scan.h5", "-o", out, "--force", "-q", "--nifti", "none",
           "--threads", str(args.threads)] + (["--sens", "file", "--sens-maps", d + "/sens.h5"] if case.coils > 1 else []) + extra
    t, _ = run(cmd)
    with open(out + "/report.json") as f:
        rep = json.load(f)
    m = rep["methods"][0]
    lam = m["terms"][0]["lambda"] if m.get("terms") else 0.0
    return {"psnr": psnr_fit(our_image(out + "/image_%s.h5" % m["method"]), args.truth), "seconds": t,
            "lambda": lam, "lambda_rel": rep["settings"].get("lambda_rel"), "solver": m.get("solver")}


def bart_pics(case, d, args, reg, lam):
    out = d + "/bart_%s_%g" % (reg, lam)
    regopt = ["-R", "T:3:0:%g" % lam] if reg == "tv" else ["-e", "-l1", "-r", "%g" % lam]
    t, _ = run([args.bart, "pics"] + regopt + ["-i", "100", "-t", d + "/b_traj", d + "/b_ksp", d + "/b_sens", out],
               env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    return {"psnr": psnr_fit(readcfl(out).squeeze().T, args.truth), "seconds": t, "lambda": lam}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="prior_compare")
    ap.add_argument("--bart", default=os.environ.get("BART", "bart"))
    ap.add_argument("--cases", default="bart-radial-48-20db,bart-radial-32-20db")
    ap.add_argument("--priors", default="tv", help="our priors to sweep (comma-separated)")
    ap.add_argument("--no-bart", action="store_true", help="skip BART's reconstructions")
    ap.add_argument("--ours-sweep", action="store_true", help="sweep --lambda-rel around our automatic lambda")
    ap.add_argument("--sweep", default="0.25,0.35,0.5,0.7,1,1.4,2,2.8,4", help="factors of the automatic lambda")
    ap.add_argument("--extra", default="", help="more options for our recon")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    args.bin = os.path.join(args.build, "mrirecon")
    if not shutil.which(args.bart) and not args.no_bart:
        sys.exit("compare_priors: bart not found (--no-bart to skip it)")
    results = {}
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True,
                         text=True).stdout.strip()
    print("# %s, %s, BART %s, %s, %d threads" % (time.strftime("%Y-%m-%d"), run([args.bin, "--version"])[1].splitlines()[0],
          run([args.bart, "version"])[1].strip() if not args.no_bart else "-", cpu, args.threads))
    for name in args.cases.split(","):
        c = CASES[name]
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        args.truth = make_bart_case(c, d, args) if c.source == "bart" else make_our_case(c, d, args)
        if c.coils > 1:  # our SENSE with BART's maps
            s = readcfl(d + "/b_sens").squeeze()  # [x][y][c]
            maps = np.transpose(s, (2, 1, 0))[:, None]  # [C][Nz=1][Ny][Nx]
            with h5py.File(d + "/sens.h5", "w") as f:
                f["sens"] = np.stack([maps.real, maps.imag], axis=-1).astype(np.float32)
        r = {"defaults": ours(c, d, args, args.extra.split() if args.extra else [], "defaults")}
        for prior in args.priors.split(","):
            auto = ours(c, d, args, ["--reg", prior] + (args.extra.split() if args.extra else []), "auto_" + prior)
            r["auto_" + prior] = auto
            if args.ours_sweep:
                sweep = []
                for f in [float(x) for x in args.sweep.split(",")]:
                    rel = f * auto["lambda_rel"]
                    res = ours(c, d, args, ["--reg", prior, "--lambda-rel", "%.6g" % rel] +
                               (args.extra.split() if args.extra else []), "%s_%g" % (prior, f))
                    res["factor"] = f
                    sweep.append(res)
                r["sweep_" + prior] = sweep
        if not args.no_bart:
            for reg in ("tv", "wavelet"):
                r["bart_" + reg] = [bart_pics(c, d, args, reg, lam) for lam in BART_LAMBDAS]
        results[name] = r
        line = "| %s | defaults %.2f dB (%.1f s)" % (name, r["defaults"]["psnr"], r["defaults"]["seconds"])
        for prior in args.priors.split(","):
            if "sweep_" + prior in r:
                best = max(r["sweep_" + prior], key=lambda x: x["psnr"])
                line += " | %s auto %.2f, best %.2f at x%g" % (prior, r["auto_" + prior]["psnr"], best["psnr"],
                                                              best["factor"])
        for reg in ("tv", "wavelet"):
            if "bart_" + reg in r:
                best = max(r["bart_" + reg], key=lambda x: x["psnr"])
                line += " | BART %s best %.2f at %g (%.1f s)" % (reg, best["psnr"], best["lambda"], best["seconds"])
        print(line + " |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
