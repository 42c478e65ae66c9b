#!/usr/bin/env bash
# The demo's results as the Markdown table the README shows: the PSNR against the band-limited truth of
# every method of each run of scripts/demo_run.sh (from their metrics.csv; "-" where a run has no such
# method), and the default reconstruction's time:
#   scripts/demo_table.sh DEMO_DIR
# tests/cli_readme.sh checks that the README's table is this script's output for a fresh demo run; after a
# change of the demo or of the defaults, paste `bash scripts/demo_table.sh demo` into the README.
set -euo pipefail
out=$1
echo "| scan (PSNR vs the band-limited truth) | iterative (default: total variation) | cg (quadratic prior) | KB gridding | bilinear gridding |"
echo "|---|---|---|---|---|"
row() { # LABEL DIR
  awk -F, -v l="$1" '$2 == "bandlimited" { p[$1] = sprintf("%.2f dB", $4) }
    END { printf "| %s | %s | %s | %s | %s |\n", l, ("iterative" in p) ? p["iterative"] : "-", ("cg" in p) ? p["cg"] : "-",
                  ("gridding-kb" in p) ? p["gridding-kb"] : "-", ("gridding-bilinear" in p) ? p["gridding-bilinear"] : "-" }' "$2/metrics.csv"
}
row "one coil, 201 spokes, 30 dB" "$out/recon"
row "one coil, 48 spokes (4x undersampled), 20 dB" "$out/under"
row "8 coils, SENSE with the scan's maps" "$out/sense"
row "8 coils, SENSE with estimated maps" "$out/estimate"
row "8 coils, each alone + root-sum-of-squares" "$out/rss"
