#!/usr/bin/env bash
# The demo's scans and reconstructions (what scripts/demo.sh runs after setting up, and what the test
# tests/cli_readme.sh runs to check the README's demo table):
#   scripts/demo_run.sh MRIRECON OUTDIR [-q]
# 1. one coil, 201 radial spokes (fully sampled), 30 dB; 2. one coil, 48 spokes (4x undersampled), 20 dB:
# every method (the default iterative reconstruction with total variation, CG with the quadratic prior, KB
# and bilinear gridding); 3. eight coils, 201 spokes, 30 dB: SENSE with the scan's maps (every method),
# with maps estimated from the data, and each coil alone + root-sum-of-squares.
set -euo pipefail
bin=$1
out=$2
quiet=${3:-}
mkdir -p "$out"
"$bin" phantom -o "$out/scan.h5" --dim 2 --matrix 128 --traj radial --spokes 201 --readout 256 --snr 30 --seed 1 $quiet
"$bin" info "$out/scan.h5" >"$out/info.txt"
[ -n "$quiet" ] || cat "$out/info.txt"
"$bin" recon "$out/scan.h5" -o "$out/recon" --method all --force $quiet
"$bin" phantom -o "$out/under.h5" --dim 2 --matrix 128 --traj radial --spokes 48 --readout 256 --snr 20 --seed 1 $quiet
"$bin" recon "$out/under.h5" -o "$out/under" --method all --force $quiet
"$bin" phantom -o "$out/scan8.h5" --dim 2 --matrix 128 --traj radial --spokes 201 --readout 256 --snr 30 --seed 1 \
  --coils 8 $quiet
"$bin" recon "$out/scan8.h5" -o "$out/sense" --method all --force $quiet
"$bin" recon "$out/scan8.h5" -o "$out/estimate" --sens estimate --force -q
"$bin" recon "$out/scan8.h5" -o "$out/rss" --sens rss --force -q
