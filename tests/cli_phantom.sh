#!/usr/bin/env bash
# mrirecon phantom: --help exits 0; usage errors exit 2; an unwritable output exits 1 and leaves no
# file; a default 2D scan (201 x 256 = 51456 samples); noise seeds; the book's 3D scan
# (128^3, kooshball 1078 x 264 = 284592 samples, checked only if it finishes within 60 s here);
# the standard suite with one manifest row per file, re-run gives the same manifests and data.
# Usage: bash cli_phantom.sh MRIRECON SCRATCH
set -u
MR=$1
S=$2
rm -rf "$S"
mkdir -p "$S"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
expect_rc() { # expected actual what
  if [ "$1" = "$2" ]; then ok "$3 (exit $2)"; else fail "$3: exit $2, expected $1"; fi
}
# samples reported by `mrirecon info` (empty when info is not available)
info_samples() { "$MR" info "$1" 2>/dev/null | awk '$1 == "samples" {print $2}'; }
have_h5diff=0
command -v h5diff >/dev/null 2>&1 && have_h5diff=1

"$MR" phantom --help > "$S/help.txt"
expect_rc 0 $? "--help"
grep -q -- '--spokes' "$S/help.txt" || fail "--help does not list --spokes"

for bad in "--spokes -1" "--readout 1" "--dim 1" "--snr nan" "--snr -inf" "--turns -1" "--bogus" "--matrix 0" "--matrix 12,x" "--dim 4" "--traj zigzag" \
           "--dim 2 --traj kooshball" "--matrix 8,8,8 --dim 2" "--snr abc" \
           "--spokes 1000000000 --readout 1000000000"; do
  "$MR" phantom -o "$S/bad.h5" $bad 2> "$S/err.txt"
  rc=$?
  expect_rc 2 $rc "usage error: $bad"
  [ -s "$S/err.txt" ] || fail "no message for: $bad"
done
"$MR" phantom 2> /dev/null
expect_rc 2 $? "no -o and no --suite"
[ ! -e "$S/bad.h5" ] || fail "a file was written after a usage error"

"$MR" phantom -o "$S/no/such/dir/x.h5" 2> "$S/err.txt"
expect_rc 1 $? "unwritable output"
grep -q "mrirecon phantom:" "$S/err.txt" || fail "run-time failure without a message"
[ -z "$(ls -A "$S/no" 2>/dev/null)" ] || fail "partial output left behind"

# ---- default 2D scan ---------------------------------------------------------------------------
out=$("$MR" phantom -o "$S/scan2d.h5" -q)
expect_rc 0 $? "default 2D scan"
echo "$out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "expected one summary line on stdout"
echo "$out" | grep -q "128x128, 51456 samples, radial2d" || fail "summary line: $out"
m=$(info_samples "$S/scan2d.h5")
if [ -n "$m" ]; then
  [ "$m" = 51456 ] && ok "info: 51456 samples" || fail "info reports $m samples, expected 51456"
else
  echo "SKIP: mrirecon info unavailable, sample count not checked"
fi

# ---- every trajectory kind writes ---------------------------------------------------------------
for t in "--traj golden --matrix 32" "--traj spiral --matrix 32 --interleaves 3" \
         "--traj random --matrix 32 --samples 777" \
         "--traj kooshball --matrix 16 --spokes 50" "--traj stack-of-stars --matrix 16,16,8 --spokes 9" \
         "--traj stack-of-spirals --matrix 16 --interleaves 2 --partitions 8 --no-truth --weights none"; do
  "$MR" phantom -q -o "$S/kind.h5" $t > /dev/null
  expect_rc 0 $? "phantom $t"
done
"$MR" phantom -q -o "$S/random.h5" --traj random --matrix 32 --samples 777 | grep -q ', 777 samples, random2d' \
  && ok "random: exactly 777 samples" || fail "random: sample count"
"$MR" phantom -q -o "$S/sos.h5" --traj stack-of-stars --matrix 16,16,8 --spokes 9 --readout 20 --partitions 4 \
  | grep -q '16x16x8, 720 samples, stack-of-stars' && ok "stack-of-stars: 4 x 9 x 20 = 720 samples" \
  || fail "stack-of-stars: sample count"

# ---- noise: same seed same data, other seed other data --------------------------------------------
if [ $have_h5diff = 1 ]; then
  "$MR" phantom -q -o "$S/n1.h5" --matrix 32 --snr 20 --seed 5 > /dev/null
  "$MR" phantom -q -o "$S/n2.h5" --matrix 32 --snr 20 --seed 5 > /dev/null
  "$MR" phantom -q -o "$S/n3.h5" --matrix 32 --snr 20 --seed 6 > /dev/null
  h5diff -q "$S/n1.h5" "$S/n2.h5" && ok "same seed: same content" || fail "same seed gave different files"
  h5diff -q "$S/n1.h5" "$S/n3.h5" /kspace/data /kspace/data > /dev/null 2>&1
  rc=$?
  [ $rc = 1 ] && ok "different seed: different data" || fail "different seeds: h5diff exit $rc, expected 1 (differ)"
fi

# ---- the book's 3D scan, when it is quick enough here ---------------------------------------------
t0=$(date +%s)
timeout 60 "$MR" phantom -q -o "$S/book.h5" --dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 \
  > "$S/book.txt"
rc=$?
t1=$(date +%s)
if [ $rc = 124 ]; then
  echo "SKIP: the book's 3D scan took over 60 s here"
else
  expect_rc 0 $rc "book 3D scan ($((t1 - t0)) s)"
  grep -q "128x128x128, 284592 samples, kooshball" "$S/book.txt" || fail "book scan summary: $(cat "$S/book.txt")"
  m=$(info_samples "$S/book.h5")
  if [ -n "$m" ]; then
    [ "$m" = 284592 ] && ok "info: book scan has 284592 samples" || fail "book scan: info reports $m samples"
  fi
  rm -f "$S/book.h5"
fi

# ---- the standard suite -----------------------------------------------------------------------
"$MR" phantom --suite "$S/suite" -q > "$S/suite.txt"
expect_rc 0 $? "--suite"
csv=$S/suite/manifest.csv
[ -s "$csv" ] && [ -s "$S/suite/manifest.md" ] || fail "manifests missing"
head -1 "$csv" | grep -q '^file,dim,matrix,trajectory,samples,undersampling,snr_db,seed,description$' \
  || fail "manifest.csv header: $(head -1 "$csv")"
rows=$(($(wc -l < "$csv") - 1))
files=$(ls "$S/suite"/*.h5 | wc -l)
[ "$rows" = "$files" ] && ok "manifest: $rows rows for $files files" || fail "manifest has $rows rows, $files files"
[ "$rows" -ge 20 ] || fail "suite has only $rows scans"
tail -n +2 "$csv" | while IFS=, read -r f dim mat traj m rest; do
  [ -s "$S/suite/$f" ] || echo "FAIL: $f listed but missing" >&2
  mi=$(info_samples "$S/suite/$f")
  [ -z "$mi" ] || [ "$mi" = "$m" ] || echo "FAIL: $f: manifest says $m samples, info $mi" >&2
done 2>&1 | tee "$S/rows.txt"
[ -s "$S/rows.txt" ] && fail "manifest rows do not match the files"
for axis in radial2d golden2d spiral2d random2d kooshball stack-of-stars stack-of-spirals; do
  grep -q ",$axis," "$csv" || fail "suite lacks $axis"
done
for u in ',1,inf,' ',4,' ',8,' ',30,' ',20,'; do grep -q "$u" "$csv" || fail "suite lacks $u"; done
ls -a "$S/suite" | grep -q '\.tmp' && fail "temporary files left in the suite directory"
cp "$S/suite/manifest.csv" "$S/manifest1.csv"
cp "$S/suite/2d64_spiral_x4_snr20.h5" "$S/spiral1.h5"
"$MR" phantom --suite "$S/suite" -q > /dev/null
expect_rc 0 $? "--suite again (overwrite)"
cmp -s "$S/manifest1.csv" "$csv" && ok "re-run: identical manifest.csv" || fail "re-run changed manifest.csv"
if [ $have_h5diff = 1 ]; then
  h5diff -q "$S/spiral1.h5" "$S/suite/2d64_spiral_x4_snr20.h5" && ok "re-run: identical scan content" \
    || fail "re-run changed a scan"
fi

rm -rf "$S/suite"
if [ $fails -gt 0 ]; then
  echo "cli_phantom: $fails failures"
  exit 1
fi
echo "cli_phantom: all passed"
