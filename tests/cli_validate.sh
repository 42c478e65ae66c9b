#!/usr/bin/env bash
# mrirecon validate at a tiny size (16^3, 3 CG iterations): exit 0, the Markdown table on stdout
# with 4 methods x 2 cases and numeric PSNRs, validation.md and the per-case folders written;
# re-running into the same DIR works; usage errors exit 2; an unusable DIR exits 1.
# Usage: bash cli_validate.sh MRIRECON SCRATCH
set -u
MR=$1
S=$2
rm -rf "$S"
mkdir -p "$S"
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

"$MR" validate --help > "$S/help.txt"; rc=$?
[ $rc = 0 ] || fail "--help exit $rc"
grep -q -- '--size' "$S/help.txt" && grep -q -- '--snr' "$S/help.txt" && grep -q -- '--device' "$S/help.txt" ||
  fail "--help lacks options"
ok "--help exits 0 and lists the options"

"$MR" validate -o "$S/out" --size 16 --iters 3 --threads 2 --snr 25 > "$S/table.txt" 2> "$S/err.txt"; rc=$?
cat "$S/table.txt"
[ $rc = 0 ] || { cat "$S/err.txt"; fail "validate exit $rc"; }
grep -q '^3D Shepp-Logan, 16^3 matrix, kooshball 17 spokes x 33 readout = 561 samples' "$S/table.txt" ||
  fail "design line missing or wrong"
grep -q '^| data | method | PSNR image \[dB\] | PSNR bandlimited \[dB\] |' "$S/table.txt" || fail "table header missing"
for c in noiseless snr25; do
  for m in iterative cg gridding-kb gridding-bilinear; do
    line=$(grep "^| $c | $m |" "$S/table.txt") || fail "no row for $c $m"
    psnr=$(echo "$line" | awk -F'|' '{gsub(/ /, "", $4); print $4}')
    awk -v p="$psnr" 'BEGIN{exit !(p+0 > 3 && p+0 < 100)}' || fail "$c $m: PSNR '$psnr' is not a plausible number"
  done
done
ok "table has 8 rows with numeric PSNRs"
[ "$(grep -c '^| ' "$S/table.txt")" = 9 ] || fail "stdout has extra table lines"
grep -q 'validate' "$S/err.txt" || fail "no progress on stderr"
for f in validation.md scan_noiseless.h5 scan_snr25.h5 recon_noiseless/metrics.csv recon_snr25/compare.png; do
  [ -s "$S/out/$f" ] || fail "$f missing"
done
grep -q '^| snr25 | gridding-kb |' "$S/out/validation.md" || fail "validation.md lacks the table"
ok "validation.md, scans and reconstructions written"

"$MR" validate -o "$S/out" --size 16 --iters 2 --threads 2 --snr 25 -q > "$S/table2.txt"; rc=$?
[ $rc = 0 ] || fail "re-run into the same DIR: exit $rc"
ok "re-run into the same DIR"

"$MR" validate --size 16 > /dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "missing -o: exit $rc, expected 2"
"$MR" validate -o "$S/x" --size 3 > /dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "--size 3: exit $rc, expected 2"
"$MR" validate -o "$S/x" --device nope > /dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "--device nope: exit $rc, expected 2"
"$MR" validate -o "$S/x" extra > /dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "positional argument: exit $rc, expected 2"
[ ! -e "$S/x" ] || fail "a usage error created the output directory"
ok "usage errors exit 2 and write nothing"

: > "$S/afile"
"$MR" validate -o "$S/afile/out" --size 16 --iters 2 > "$S/t3.txt" 2> "$S/e3.txt"; rc=$?
[ $rc = 1 ] || fail "DIR under a regular file: exit $rc, expected 1"
grep -q '^mrirecon validate: ' "$S/e3.txt" || fail "no error message: $(cat "$S/e3.txt")"
[ ! -s "$S/t3.txt" ] || fail "a failed run printed a table"
ok "unusable DIR: exit 1 with '$(head -1 "$S/e3.txt")'"
exit 0
