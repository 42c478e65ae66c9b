#!/usr/bin/env bash
# Issue 10, the split check on the GPU machine (the `run` device tool), in one call: build mrirecon with
# CUDA, then `bench --what q --device gpu:0,0` (the grid in two parts on one GPU against one part, and
# both against the float64 reference rows) over Q grids of 128^3 to 256^3 and sample counts up to the
# book's. Results to $OUT/summary.txt, logs to $OUT/logs.tgz.
# Usage: scripts/device_split.sh; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/.."
L=/tmp/split-logs
. scripts/device_lib.sh

log "build"
t0=$SECONDS
cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 -DMR_CUDA=ON -DMR_WERROR=ON >"$L/cmake.log" 2>&1 &&
  cmake --build "$B" -j"$(nproc)" --target mrirecon >"$L/build.log" 2>&1
rc=$?
echo "build exit $rc in $((SECONDS - t0)) s" >>"$S"
[ $rc -eq 0 ] || { log "BUILD FAILED"; grep -B2 -A10 -i "error" "$L/build.log" | head -60 >>"$S"; exit 1; }

for spec in "tf32x3 64,64,64:65536" "tf32x3 96,96,96:65536" "tf32x3 128,128,128:4096" "fp64 128,128,128:4096" \
  "tf32x3 128,128,128:65536" "tf32x3 book" "fp64 book"; do
  set -- $spec
  log "bench q $1 $2"
  timeout 120 "$B/mrirecon" bench --device gpu:0,0 --what q --precision "$1" --problem "$2" --reps 3 \
    >"$L/q_$1_$2.log" 2>&1
  echo "exit $?" >>"$S"
  grep -E "^(Q|FHd) |split vs|one GPU|error" "$L/q_$1_$2.log" >>"$S"
done
log "done"
