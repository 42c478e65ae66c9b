#!/usr/bin/env bash
# The demo's results as the Markdown table the README shows (CG's PSNR of each run of
# scripts/demo_run.sh against the truth image and the band-limited truth, from their metrics.csv):
#   scripts/demo_table.sh DEMO_DIR
# tests/cli_readme.sh checks that the README's table is this script's output for a fresh demo run; after a
# change of the demo or of the defaults, paste `bash scripts/demo_table.sh demo` into the README.
set -euo pipefail
out=$1
echo "| reconstruction (CG, the defaults) | PSNR vs truth image | PSNR vs band-limited truth |"
echo "|---|---|---|"
row() { # LABEL DIR
  awk -F, -v l="$1" '$1 == "cg" && $2 == "image" { i = $4 } $1 == "cg" && $2 == "bandlimited" { b = $4 }
    END { printf "| %s | %.2f dB | %.2f dB |\n", l, i, b }' "$2/metrics.csv"
}
row "one coil" "$out/recon"
row "8 coils, SENSE (the maps)" "$out/sense"
row "8 coils, SENSE (estimated maps)" "$out/estimate"
row "8 coils, each alone + RSS" "$out/rss"
