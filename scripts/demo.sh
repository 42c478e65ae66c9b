#!/usr/bin/env bash
# The built-in demo: install + build (scripts/setup.sh), then the whole pipeline on a simulated scan:
#   phantom (analytic 2D Shepp-Logan k-space, radial 201 spokes x 256, 30 dB SNR)
#   -> reconstruction by CG (exact Q and F^H d, Toeplitz normal; finite-difference regularisation,
#      lambda = 1e-5, about 0.07 x the diagonal of F^H F, which suits the 30 dB noise), Kaiser-Bessel and
#      bilinear gridding
#   -> images (HDF5 + PNG), compare.png, convergence.png, report.md / report.json.
# Results go to ./demo (override with DEMO_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
bin=build/mrirecon
out="${DEMO_DIR:-demo}"
mkdir -p "$out"
"$bin" phantom -o "$out/scan.h5" --dim 2 --matrix 128 --traj radial --spokes 201 --readout 256 --snr 30 --seed 1
"$bin" info "$out/scan.h5"
"$bin" recon "$out/scan.h5" -o "$out/recon" --method all --reg gradient --lambda 1e-5
echo
echo "demo: pictures in $out/recon/*.png (compare.png: truth | CG | KB gridding | bilinear gridding, error maps below)"
echo "demo: report in $out/recon/report.md:"
cat "$out/recon/report.md"
