#!/usr/bin/env bash
# The Q cache and --precision from the command line (io/q_cache.h, docs/RECON.md "The Q cache"):
#   - recon twice with --q-cache DIR: the first computes Q and stores it, the second reads it (report.json
#     says so) and its image is bit-identical; --q-cache off computes Q and says so;
#   - a damaged or truncated entry is ignored with a warning, Q computed again (same image) and the entry
#     replaced; a cache directory that cannot be made is a warning, never a failed reconstruction; a store
#     that fails is reported in report.json as "computed, not stored (why)";
#   - batch with two scans of one trajectory on two workers at once: Q is computed once and read once;
#   - gridding with the Pipe-Menon weights: --q-cache DIR stores them (one entry), a second run reads them
#     (the debug line says so) with a bit-identical image; --q-cache off stores nothing;
#   - --precision: a GPU engine with --device cpu is a usage error (2); without a GPU, --device auto is a
#     run-time error (1) naming the precision.
#   bash tests/cli_qcache.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh"
icmp=$(dirname "$bin")/tool_imgcmp

# two scans with one trajectory (radial is deterministic), different noise
for s in 1 2; do
  "$bin" phantom -o "$dir/s$s.h5" --dim 2 --matrix 32 --spokes 41 --readout 64 --snr 30 --seed $s -q ||
    { echo "FAIL: phantom"; exit 1; }
done
source_of() { sed -n 's/.*"q_source": "\([^"]*\)".*/\1/p' "$1/report.json"; }

expect 0 "recon, empty cache" -- "$bin" recon "$dir/s1.h5" -o "$dir/r1" --q-cache "$dir/qc" --threads 2
check "first run computes and stores Q" test "$(source_of "$dir/r1")" = "computed, stored"
check "one entry in the cache" test "$(ls "$dir/qc" | grep -c '\.mrq$')" = 1
expect 0 "recon, warm cache" -- "$bin" recon "$dir/s1.h5" -o "$dir/r2" --q-cache "$dir/qc" --threads 2
check "second run reads Q" test "$(source_of "$dir/r2")" = "store"
check "report.md says where Q came from" grep -q "^| Q | store (cache: $dir/qc) |" "$dir/r2/report.md"
check "image from the cached Q is bit-identical" "$icmp" "$dir/r1/image_iterative.h5" "$dir/r2/image_iterative.h5"
expect 0 "recon --q-cache off" -- "$bin" recon "$dir/s1.h5" -o "$dir/r3" --q-cache off --threads 2
check "--q-cache off computes Q" test "$(source_of "$dir/r3")" = "computed"
check "report.json: q_cache off" grep -q '"q_cache": "off"' "$dir/r3/report.json"

# a damaged entry: 4 bytes of Q overwritten
entry=$(ls "$dir"/qc/q-*.mrq)
printf 'XXXX' | dd of="$entry" bs=1 seek=$(($(stat -c %s "$entry") - 100)) conv=notrunc 2>/dev/null
expect 0 "recon with a damaged entry" -- "$bin" recon "$dir/s1.h5" -o "$dir/r4" --q-cache "$dir/qc" --threads 2
check "warning names the entry" grep -q "Q cache: $entry: .*ignored" "$dir/err"
check "damaged entry not used: Q computed again" test "$(source_of "$dir/r4")" = "computed, stored"
check "image still bit-identical" "$icmp" "$dir/r1/image_iterative.h5" "$dir/r4/image_iterative.h5"
expect 0 "recon after the repair" -- "$bin" recon "$dir/s1.h5" -o "$dir/r5" --q-cache "$dir/qc" --threads 2
check "the entry was replaced" test "$(source_of "$dir/r5")" = "store"

# a truncated entry: ignored with a warning, Q computed again and the entry replaced
truncate -s $(($(stat -c %s "$entry") / 2)) "$entry"
expect 0 "recon with a truncated entry" -- "$bin" recon "$dir/s1.h5" -o "$dir/r8" --q-cache "$dir/qc" --threads 2
check "warning: truncated" grep -q "Q cache: $entry: .*truncated" "$dir/err"
check "truncated entry not used" test "$(source_of "$dir/r8")" = "computed, stored"
check "image bit-identical after the truncated entry" "$icmp" "$dir/r1/image_iterative.h5" "$dir/r8/image_iterative.h5"

# a cache that cannot be used never fails the reconstruction
touch "$dir/notadir"
expect 0 "recon with an unusable cache directory" -- "$bin" recon "$dir/s1.h5" -o "$dir/r9" --q-cache "$dir/notadir/qc" \
  --threads 2
check "warning names the directory" grep -q "Q cache: cannot use the directory $dir/notadir/qc" "$dir/err"
check "Q computed without the cache" test "$(source_of "$dir/r9")" = "computed"

# a store that fails in the background (a file-size limit below the entry's 74 KB, above every output
# file's): the run succeeds and report.json says what the cache really did
expect 0 "recon whose cache write fails" -- bash -c 'ulimit -f 60; exec "$0" recon "$1" -o "$2" --q-cache "$3" --threads 2' \
  "$bin" "$dir/s1.h5" "$dir/r10" "$dir/qc3"
check "report.json: not stored, and why" \
  test "$(source_of "$dir/r10")" = "computed, not stored (the cache write failed: File too large)"
check "no entry, temporary or lock file left" test -z "$(ls -A "$dir/qc3")"

# batch: both scans at once on two workers share one Q
expect 0 "batch of two scans with one trajectory" -- "$bin" batch "$dir/s1.h5" "$dir/s2.h5" -o "$dir/b" --jobs 2 \
  --threads 1 --iters 5 --q-cache "$dir/qc2"
computed=$(grep -l '"q_source": "computed, stored"' "$dir"/b/s*/report.json | wc -l)
stored=$(grep -l '"q_source": "store"' "$dir"/b/s*/report.json | wc -l)
check "batch: Q computed once ($computed) and read once ($stored)" test "$computed" = 1 -a "$stored" = 1
check "no temporary or lock files left" test -z "$(ls -a "$dir/qc2" | grep -E '\.tmp|\.lock')"

# --precision
expect 2 "--precision tf32x3 --device cpu" -- "$bin" recon "$dir/s1.h5" -o "$dir/r6" --precision tf32x3 --device cpu
check "usage message names the precision" grep -q "precision tf32x3" "$dir/err"
expect 2 "--precision bogus" -- "$bin" recon "$dir/s1.h5" -o "$dir/r6" --precision fp32
check "message lists the choices" grep -q "'fp32' is not auto, sfu, tf32x3, fp16x3 or fp64" "$dir/err"
check "message names the option once" grep -q "mrirecon recon: --precision: 'fp32' is not auto" "$dir/err"
expect 2 "batch --precision fp64 --device cpu" -- "$bin" batch "$dir/s1.h5" -o "$dir/b6" --precision fp64 --device cpu
check "batch: the usage message of recon" grep -q "precision fp64 runs on a GPU; with --device cpu only auto" "$dir/err"
check "batch: nothing created" test ! -e "$dir/b6"
expect 2 "validate --precision fp16x3 --device cpu" -- "$bin" validate -o "$dir/v6" --precision fp16x3 --device cpu
check "validate: the usage message of recon" grep -q "precision fp16x3 runs on a GPU; with --device cpu only auto" "$dir/err"
check "validate: nothing created" test ! -e "$dir/v6"
if [ "$("$bin" recon "$dir/s1.h5" -o "$dir/probe" --device gpu --q-cache off -q >/dev/null 2>&1; echo $?)" = 1 ]; then
  expect 1 "--precision fp64 --device auto without a GPU" -- "$bin" recon "$dir/s1.h5" -o "$dir/r7" --precision fp64
  check "run-time message names the precision" grep -q "precision fp64 runs on a GPU" "$dir/err"
  check "nothing created" test ! -e "$dir/r7"
fi
# gridding: the Pipe-Menon weights in the cache
expect 0 "gridding, empty cache" -- "$bin" recon "$dir/s1.h5" -o "$dir/g1" --method gridding-kb --q-cache "$dir/gc" --threads 2
check "one weights entry stored" test "$(ls "$dir/gc" | grep -c '\.mrq$')" = 1
expect 0 "gridding, warm cache" -- "$bin" recon "$dir/s1.h5" -o "$dir/g2" --method gridding-kb --q-cache "$dir/gc" \
  --threads 2 -v
check "the weights come from the store" grep -q "dcf pipe: weights for .* samples from the store" "$dir/err"
check "the same image from the stored weights" "$icmp" "$dir/g1/image_gridding-kb.h5" "$dir/g2/image_gridding-kb.h5"
expect 0 "gridding --q-cache off" -- "$bin" recon "$dir/s1.h5" -o "$dir/g3" --method gridding-kb --q-cache off \
  --threads 2 -v
check "--q-cache off: the weights computed" grep -q "dcf pipe: .* iterations (momentum .*) over .* samples" "$dir/err"
check "--q-cache off: the same image" "$icmp" "$dir/g1/image_gridding-kb.h5" "$dir/g3/image_gridding-kb.h5"
exit $fail
