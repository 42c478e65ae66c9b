#!/usr/bin/env bash
# Readout timing and field maps at the command line (docs/PHANTOMS.md, docs/FORMAT.md 1.2):
# `phantom --dwell/--te/--fieldmap` writes /kspace/time and /kspace/fieldmap (format version 3) and says
# so on stdout; `info` shows the ranges (text and JSON) and "absent" for an old scan; usage errors exit 2
# with a message: --fieldmap without --dwell, a bad description, --dwell on the random trajectory.
# Usage: bash cli_field.sh MRIRECON SCRATCH
set -u
MR=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh"

for bad in "--fieldmap c=10" "--dwell 4 --fieldmap q=1" "--dwell 4 --fieldmap c=abc" "--dwell 4 --traj random" \
           "--dwell -1" "--dwell 4 --fieldmap sigma=0"; do
  # shellcheck disable=SC2086
  expect 2 "usage error: $bad" -- "$MR" phantom -o "$dir/bad.h5" --matrix 32 $bad
  check "a message for: $bad" test -s "$dir/err"
done
check "no file written after a usage error" test ! -e "$dir/bad.h5"

expect 0 "phantom with timing and field" -- "$MR" phantom -o "$dir/f.h5" --matrix 32 --traj spiral --interleaves 4 \
  --dwell 10 --te 2 --fieldmap c=20,x=150,y=50
check "summary line names the times and the field" grep -q "readout times 2\.\.[0-9.]* ms, field -80\.\.[0-9.]* Hz" "$dir/out"
expect 0 "info on the scan with a field" -- "$MR" info "$dir/f.h5"
check "info: readout time line" grep -q "^readout time  2 \.\. " "$dir/out"
check "info: field map line" grep -q "^field map     -80 \.\. " "$dir/out"
expect 0 "info --json" -- "$MR" info --json "$dir/f.h5"
check "info --json: fieldmap_range_hz" grep -q '"fieldmap_range_hz": \[-80' "$dir/out"
check "info --json: readout_time_range_s" grep -q '"readout_time_range_s": \[0.002' "$dir/out"

expect 0 "phantom without timing" -- "$MR" phantom -o "$dir/old.h5" --matrix 32
expect 0 "info on it" -- "$MR" info "$dir/old.h5"
check "info: readout time absent" grep -q "^readout time  absent" "$dir/out"
check "info: field map absent" grep -q "^field map     absent" "$dir/out"

# a non-linear bump on a small matrix (exact sums on the 4x grid)
expect 0 "phantom with a non-linear bump" -- "$MR" phantom -o "$dir/b.h5" --matrix 24 --traj radial --spokes 12 \
  --dwell 5 --fieldmap blob=50,sigma=0.15,at=0.1:0

exit $fail
