#!/usr/bin/env bash
# The slab-pruned Toeplitz transforms (gpu/toeplitz.cu) against one unpruned cuFFT plan of the whole 2N
# grid (MR_GPU_TOEPLITZ=full), in the same build: test_gpu_linop (pruned vs full vs the CPU), then
# tool_nufft_bench's operator mode (Q, F^H d, 60 CG iterations, GPU memory peak) at the book size and
# at 256^3 with 1 and 8 coils, the two variants alternated, REPS rounds. (Its first run, at 6fc3215 with
# the change uncommitted, also timed the book problem's start and exit and compared the defaults' images
# of the two models; those parts are now the modes bookcg of scripts/device.sh and repro.)
# Usage: scripts/device.sh prune [REPS (default 2)]; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/prune-logs
. scripts/device/lib.sh
reps=${1:-2}
build_tree tool_nufft_bench test_gpu_linop
log "test_gpu_linop"
(cd "$B" && timeout 120 ./test_gpu_linop) >"$L/linop.log" 2>&1
echo "test_gpu_linop exit $? $(tail -1 "$L/linop.log")" >>"$S"
grep -E "FAIL|pruned" "$L/linop.log" | head -20 >>"$S"
bench() { # LABEL ARGS...
  local label=$1 v
  shift
  for v in pruned full; do
    if [ $v = full ]; then export MR_GPU_TOEPLITZ=full; else unset MR_GPU_TOEPLITZ; fi
    timeout 120 "$B/tool_nufft_bench" --device gpu --operator nufft "$@" >"$L/bench.log" 2>&1
    echo "$label $v: exit $? | $(grep -iE "cg|total|peak" "$L/bench.log" | tr '\n' ' ' | cut -c1-400)" >>"$S"
  done
  unset MR_GPU_TOEPLITZ
}
log "tool_nufft_bench operator mode"
for r in $(seq 1 "$reps"); do
  bench "book 128^3 round $r" --n 128 --spokes 1078 --readout 264
  bench "256^3 round $r" --n 256 --spokes 4312 --readout 528
  bench "256^3 8 coils round $r" --n 256 --spokes 4312 --readout 528 --coils 8
done
log "done"
