#!/usr/bin/env bash
# The built-in demo: install + build (scripts/setup.sh), then the whole pipeline on simulated scans:
#   1. one coil: phantom (analytic 2D Shepp-Logan k-space, radial 201 spokes x 256, 30 dB SNR)
#      -> CG with the defaults (exact Q and F^H d, Toeplitz normal, Dirac basis, finite-difference
#      regularisation with lambda chosen from the scan's noise level: no hand-picked lambda),
#      Kaiser-Bessel and bilinear gridding -> images (HDF5 + PNG), compare.png, convergence.png,
#      report.md / report.json;
#   2. eight coils of the same object (phantom --coils 8: analytic coil maps and exact coil data,
#      30 dB) -> SENSE (one CG on the combined image with the coil maps), SENSE with maps estimated
#      from the data (--sens estimate, what a real scan without maps gets) and, for comparison, each
#      coil alone combined by root-sum-of-squares (--sens rss); the last two are scored against the
#      truth weighted by the coils' root-sum-of-squares (docs/RECON.md);
#   3. a table of the four CG reconstructions next to each other.
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
echo "demo: one coil vs eight coils (CG with the defaults: 60 iterations, automatic lambda):"
scripts/demo_table.sh "$out" # the table the README shows (tests/cli_readme.sh checks it)
echo
echo "demo: pictures in $out/recon/*.png (compare.png: truth | CG | KB gridding | bilinear gridding, error maps"
echo "      below) and the same for the 8-coil scan in $out/sense/*.png (SENSE CG, gridding combined with the maps)"
echo "demo: report in $out/recon/report.md (one coil) and $out/sense/report.md (SENSE):"
cat "$out/recon/report.md"
