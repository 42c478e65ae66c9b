#!/usr/bin/env bash
# The README's demo table is what the demo prints: runs the demo's commands (scripts/demo_run.sh, the same
# scan and reconstructions as scripts/demo.sh), makes the table (scripts/demo_table.sh) and compares it
# with the block between "<!-- demo-table" and "<!-- demo-table end -->" in README.md: the same rows, every
# PSNR within 0.05 dB (the CPU kernel levels differ in the last digits). When the demo or the defaults
# change, the README block is regenerated with scripts/demo_table.sh, and this test keeps checking it.
#   bash tests/cli_readme.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect(), check()
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/demo_run.sh" "$bin" "$dir/demo" -q >"$dir/run.log" 2>&1 || { echo "FAIL: the demo's commands"; cat "$dir/run.log"; exit 1; }
"$root/scripts/demo_table.sh" "$dir/demo" >"$dir/table.md" || { echo "FAIL: demo_table.sh"; exit 1; }
sed -n '/^<!-- demo-table:/,/^<!-- demo-table end -->/p' "$root/README.md" | grep '^|' >"$dir/readme.md"
[ -s "$dir/readme.md" ] || { echo "FAIL: no demo table in README.md"; exit 1; }
echo "demo run:"; cat "$dir/table.md"
echo "README:"; cat "$dir/readme.md"
awk -F'|' 'NR == FNR { run[FNR] = $0; n = FNR; next }
  { m = FNR; split(run[FNR], a, "|")
    if (a[2] != $2) { printf "FAIL: row %d: README \"%s\", demo \"%s\"\n", FNR, $2, a[2]; bad = 1; next }
    for (c = 3; c <= NF - 1; c++) { x = a[c] + 0; y = $c + 0
      if ((x - y > 0.05 || y - x > 0.05) || (a[c] ~ /dB/) != ($c ~ /dB/)) {
        printf "FAIL: row %d (%s) column %d: README %s, demo %s\n", FNR, $2, c - 1, $c, a[c]; bad = 1 } } }
  END { if (m != n) { printf "FAIL: README has %d rows, the demo %d\n", m, n; bad = 1 }
        if (!bad) print "ok: the README demo table matches the demo run within 0.05 dB"; exit bad }' \
  "$dir/table.md" "$dir/readme.md" || fail=1
exit $fail
