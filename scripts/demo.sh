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
"$bin" phantom -o "$out/scan.h5" --dim 2 --matrix 128 --traj radial --spokes 201 --readout 256 --snr 30 --seed 1
"$bin" info "$out/scan.h5"
"$bin" recon "$out/scan.h5" -o "$out/recon" --method all --force
"$bin" phantom -o "$out/scan8.h5" --dim 2 --matrix 128 --traj radial --spokes 201 --readout 256 --snr 30 --seed 1 \
  --coils 8
"$bin" recon "$out/scan8.h5" -o "$out/sense" --method all --force
"$bin" recon "$out/scan8.h5" -o "$out/estimate" --sens estimate --force -q
"$bin" recon "$out/scan8.h5" -o "$out/rss" --sens rss --force -q
echo
echo "demo: one coil vs eight coils (CG with the defaults: 60 iterations, automatic lambda; PSNR in dB):"
printf "  %-34s %12s %18s %9s\n" "reconstruction" "vs image" "vs band-limited" "seconds"
row() { # LABEL DIR
  awk -F, -v l="$1" '$1 == "cg" && $2 == "image" { i = $4; s = $7 } $1 == "cg" && $2 == "bandlimited" { b = $4 }
    END { printf "  %-34s %12.2f %18.2f %9.3f\n", l, i, b, s }' "$2/metrics.csv"
}
row "one coil" "$out/recon"
row "8 coils, SENSE (the maps)" "$out/sense"
row "8 coils, SENSE (estimated maps)" "$out/estimate"
row "8 coils, each alone + RSS" "$out/rss"
echo
echo "demo: pictures in $out/recon/*.png (compare.png: truth | CG | KB gridding | bilinear gridding, error maps"
echo "      below) and the same for the 8-coil scan in $out/sense/*.png (SENSE CG, gridding combined with the maps)"
echo "demo: report in $out/recon/report.md (one coil) and $out/sense/report.md (SENSE):"
cat "$out/recon/report.md"
