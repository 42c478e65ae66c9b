#!/usr/bin/env bash
# Readout timing and field maps at the command line (docs/PHANTOMS.md, docs/FORMAT.md 1.2):
# `phantom --dwell/--te/--fieldmap` writes /kspace/time and /kspace/fieldmap (format version 3) and says
# so on stdout; `info` shows the ranges (text and JSON) and "absent" for an old scan; usage errors exit 2
# with a message: --fieldmap without --dwell, a bad description, --dwell on the random trajectory.
# Usage: bash cli_field.sh MRIRECON SCRATCH
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

for bad in "--fieldmap c=10" "--dwell 4 --fieldmap q=1" "--dwell 4 --fieldmap c=abc" "--dwell 4 --traj random" \
           "--dwell -1" "--dwell 4 --fieldmap sigma=0"; do
  "$MR" phantom -o "$S/bad.h5" --matrix 32 $bad 2> "$S/err.txt"
  expect_rc 2 $? "usage error: $bad"
  [ -s "$S/err.txt" ] || fail "no message for: $bad"
done
[ ! -e "$S/bad.h5" ] || fail "a file was written after a usage error"

"$MR" phantom -o "$S/f.h5" --matrix 32 --traj spiral --interleaves 4 --dwell 10 --te 2 --fieldmap c=20,x=150,y=50 \
  > "$S/out.txt" 2> "$S/err.txt"
expect_rc 0 $? "phantom with timing and field"
grep -q "readout times 2\.\.[0-9.]* ms, field -80\.\.[0-9.]* Hz" "$S/out.txt" || fail "summary line: $(cat "$S/out.txt")"
"$MR" info "$S/f.h5" > "$S/info.txt" 2>&1
expect_rc 0 $? "info on the scan with a field"
grep -q "^readout time  2 \.\. " "$S/info.txt" || fail "info: no readout time line"
grep -q "^field map     -80 \.\. " "$S/info.txt" || fail "info: no field map line"
"$MR" info --json "$S/f.h5" > "$S/info.json" 2>&1
grep -q '"fieldmap_range_hz": \[-80' "$S/info.json" || fail "info --json: no fieldmap_range_hz"
grep -q '"readout_time_range_s": \[0.002' "$S/info.json" || fail "info --json: no readout_time_range_s"

"$MR" phantom -o "$S/old.h5" --matrix 32 > /dev/null 2>&1
"$MR" info "$S/old.h5" > "$S/info_old.txt" 2>&1
grep -q "^readout time  absent" "$S/info_old.txt" || fail "info: no 'absent' for a scan without times"
grep -q "^field map     absent" "$S/info_old.txt" || fail "info: no 'absent' for a scan without a field map"

# a non-linear bump on a small matrix (exact sums on the 4x grid)
"$MR" phantom -o "$S/b.h5" --matrix 24 --traj radial --spokes 12 --dwell 5 --fieldmap blob=50,sigma=0.15,at=0.1:0 \
  > /dev/null 2> "$S/err.txt"
expect_rc 0 $? "phantom with a non-linear bump"

if [ $fails -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all passed"
