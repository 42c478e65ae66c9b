#!/usr/bin/env bash
# --device is parsed once (the option type of recon/cli/opts.h) and means the same in every command:
# gpu:0 is accepted by the parser of recon, batch, validate and bench; an explicit GPU request on a
# machine without one is a run-time failure (exit 1, "no usable GPU") for recon and batch alike --
# with a GPU both succeed --; a malformed device is a usage error (exit 2) naming the value once.
#   bash tests/cli_device.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect()

for c in recon batch validate bench; do
  expect 0 "$c --device gpu:0 is parsed" -- "$bin" "$c" --device gpu:0 --help
  expect 2 "$c --device gpu:x is a usage error" -- "$bin" "$c" --device gpu:x --help
  n=$(grep -o "gpu:x" "$dir/err" | wc -l)
  check "$c: the message names the value once" test "$n" -eq 1
done

mkdir -p "$dir/in"
expect 0 "phantom" -- "$bin" phantom -o "$dir/in/scan.h5" --matrix 16 -q
"$bin" recon "$dir/in/scan.h5" -o "$dir/r" --device gpu:0 -q >/dev/null 2>"$dir/recon.err"
rc_recon=$?
"$bin" batch "$dir/in/scan.h5" -o "$dir/b" --device gpu:0 -q >/dev/null 2>"$dir/batch.err"
rc_batch=$?
echo "recon --device gpu:0: exit $rc_recon; batch --device gpu:0: exit $rc_batch"
check "batch --device gpu:0 is not refused as a usage error" test "$rc_batch" -ne 2
check "batch and recon agree on --device gpu:0" test "$rc_batch" -eq "$rc_recon"
if [ "$rc_recon" -ne 0 ]; then
  check "recon says there is no usable GPU" grep -q "no usable GPU" "$dir/recon.err"
  check "batch says there is no usable GPU" grep -q "no usable GPU" "$dir/batch.err"
fi
exit $fail
