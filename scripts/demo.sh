#!/usr/bin/env bash
# The built-in demo: install + build (scripts/setup.sh), then the whole pipeline on simulated scans
# (scripts/demo_run.sh):
#   1. one coil: phantom (analytic 2D Shepp-Logan k-space, radial 201 spokes x 256, 30 dB SNR) -> every
#      method: the default iterative reconstruction (total variation by ADMM, lambda chosen from the
#      scan's noise level: nothing hand-picked; the encoding model chosen by cost: NUFFT or exact sums),
#      CG with the quadratic prior (the earlier default), Kaiser-Bessel and bilinear gridding -> images
#      (HDF5, PNG, NIfTI), compare.png, convergence.png, report.md / report.json;
#   2. the same object 4x undersampled (48 spokes) at 20 dB: where the sparsity prior matters;
#   3. eight coils (phantom --coils 8: analytic coil maps and exact coil data, 30 dB) -> SENSE with the
#      scan's maps, SENSE with maps estimated from the data (--sens estimate, what a real scan without maps
#      gets) and each coil alone combined by root-sum-of-squares (--sens rss); the last two are scored
#      against the truth weighted by the coils' root-sum-of-squares (docs/RECON.md);
#   4. a table of every reconstruction next to each other.
# Results go to ./demo (override with DEMO_DIR); a second run replaces them (--force: the demo's own
# folders).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
bin=build/mrirecon
out="${DEMO_DIR:-demo}"
mkdir -p "$out"
scripts/demo_run.sh "$bin" "$out"
echo
echo "demo: every reconstruction (the defaults: total variation, automatic lambda):"
scripts/demo_table.sh "$out" # the table the README shows (tests/cli_readme.sh checks it)
echo
echo "demo: pictures in $out/recon/*.png and $out/under/*.png (compare.png: truth | iterative | CG | KB gridding |"
echo "      bilinear gridding, error maps below) and the same for the 8-coil scan in $out/sense/*.png (SENSE,"
echo "      gridding combined with the maps)"
echo "demo: reports in $out/recon/report.md, $out/under/report.md (undersampled) and $out/sense/report.md (SENSE):"
cat "$out/under/report.md"
