#!/usr/bin/env bash
# The defaults on the standard suite (docs/VALIDATION.md, "The standard suite with the defaults"):
# writes the 30 scans of `mrirecon phantom --suite`, reconstructs each with `mrirecon recon --method
# all` and nothing else (extra recon options may follow), and prints a Markdown table: PSNR of CG, KB
# and bilinear gridding against both truths, CG's margin over the best gridding (negative: behind)
# and whether CG is first or within 0.2 dB on both truths. Exit status 1 when a scan misses that.
#   bash scripts/suite_check.sh [BUILD_DIR/mrirecon] [WORK_DIR] [-- recon options]
set -u
bin=${1:-build/mrirecon}
work=${2:-/tmp/mrirecon-suite}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = "--" ] && shift
"$bin" phantom --suite "$work/suite" -q >/dev/null || { echo "suite_check: phantom --suite failed" >&2; exit 1; }
echo "| scan | CG image / bandlimited [dB] | KB gridding | bilinear gridding | CG - best gridding | CG first or within 0.2 dB |"
echo "|---|---|---|---|---|---|"
misses=0
t0=$(date +%s)
for f in "$work"/suite/*.h5; do
  name=$(basename "$f" .h5)
  out="$work/recon/$name"
  if ! "$bin" recon "$f" -o "$out" --method all --force -q "$@" >/dev/null 2>"$work/$name.err"; then
    echo "| $name | failed: $(tail -1 "$work/$name.err") | | | | no |"
    misses=$((misses + 1))
    continue
  fi
  row=$(awk -F, -v name="$name" '
    NR > 1 { p[$1 "," $2] = $4 }
    END {
      for (t = 0; t < 2; t++) {
        tr = t ? "bandlimited" : "image"
        c[t] = p["cg," tr]; k[t] = p["gridding-kb," tr]; b[t] = p["gridding-bilinear," tr]
        best = k[t] > b[t] ? k[t] : b[t]; d[t] = c[t] - best; ok = ok + (d[t] >= -0.2)
      }
      printf "| %s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %+.2f / %+.2f | %s |\n", name, c[0], c[1], k[0], k[1],
             b[0], b[1], d[0], d[1], ok == 2 ? "yes" : "**no**"
    }' "$out/metrics.csv")
  echo "$row"
  case "$row" in *"**no**"*) misses=$((misses + 1)) ;; esac
done
n=$(ls "$work"/suite/*.h5 | wc -l)
echo
echo "$((n - misses)) of $n scans: CG first or within 0.2 dB of the best gridding on both truths ($(($(date +%s) - t0)) s)."
[ "$misses" -eq 0 ]
