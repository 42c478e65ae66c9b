#!/usr/bin/env bash
# The defaults on the standard suite (docs/VALIDATION.md, "The standard suite with the defaults"):
# writes the 30 scans of `mrirecon phantom --suite`, reconstructs each with `mrirecon recon --method
# all` and nothing else (extra recon options may follow), and prints a Markdown table: PSNR of every
# method against both truths, the default method's (the first of --method all: iterative) margin over
# the best other method (negative: behind) and whether it is first or within 0.2 dB on both truths.
# Exit status 1 when a scan misses that.
#   bash scripts/suite_check.sh [BUILD_DIR/mrirecon] [WORK_DIR] [-- recon options]
set -u
bin=${1:-build/mrirecon}
work=${2:-/tmp/mrirecon-suite}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = "--" ] && shift
"$bin" phantom --suite "$work/suite" -q >/dev/null || { echo "suite_check: phantom --suite failed" >&2; exit 1; }
header=0
misses=0
t0=$(date +%s)
for f in "$work"/suite/*.h5; do
  name=$(basename "$f" .h5)
  out="$work/recon/$name"
  if ! "$bin" recon "$f" -o "$out" --method all --force -q "$@" >/dev/null 2>"$work/$name.err"; then
    echo "| $name | failed: $(tail -1 "$work/$name.err") | | | | | |"
    misses=$((misses + 1))
    continue
  fi
  if [ $header = 0 ]; then # the methods, in metrics.csv's order (the default first)
    methods=$(awk -F, 'NR > 1 && !seen[$1]++ { printf "%s%s", n++ ? " | " : "", $1 }' "$out/metrics.csv")
    first=${methods%% |*}
    echo "| scan | $methods (image / bandlimited, dB) | $first - best other | $first first or within 0.2 dB |"
    echo "|---|$(echo "$methods" | sed 's/[^|]*/---/g')|---|---|"
    header=1
  fi
  row=$(awk -F, -v name="$name" '
    NR > 1 { if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } p[$1 "," $2] = $4 }
    END {
      line = "| " name " |"
      for (i = 0; i < n; i++)
        line = line sprintf(" %.2f / %.2f |", p[order[i] ",image"], p[order[i] ",bandlimited"])
      ok = 0
      for (t = 0; t < 2; t++) {
        tr = t ? "bandlimited" : "image"
        best = -1e9
        for (i = 1; i < n; i++) if (p[order[i] "," tr] > best) best = p[order[i] "," tr]
        d[t] = p[order[0] "," tr] - best
        ok += d[t] >= -0.2
      }
      printf "%s %+.2f / %+.2f | %s |\n", line, d[0], d[1], ok == 2 ? "yes" : "**no**"
    }' "$out/metrics.csv")
  echo "$row"
  case "$row" in *"**no**"*) misses=$((misses + 1)) ;; esac
done
n=$(ls "$work"/suite/*.h5 | wc -l)
echo
echo "$((n - misses)) of $n scans: the default method first or within 0.2 dB of the best other method on both truths ($(($(date +%s) - t0)) s)."
[ "$misses" -eq 0 ]
