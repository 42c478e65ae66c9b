#!/usr/bin/env bash
# The GPU type 1 with one summation order (gpu/nufft.cu: tiles in non-overlapping classes, no atomics):
# its execute time against the float64 direct sums' error (tool_nufft_bench, the book size and 256^3, the
# command of docs/BENCHMARKS.md's type-1 table), then the run-to-run check of scripts/device/repro.sh
# (the defaults, --method cg, both models, repeated; images compared bit for bit by tool_imgcmp).
# Usage: scripts/device.sh determinism; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/determinism-logs
. scripts/device/lib.sh
build_tree tool_nufft_bench
log "type 1, eps 1e-6, execute time (median of 20) and error at 64 modes"
for spec in "128 1078 264" "256 4312 528"; do
  set -- $spec
  timeout 120 "$B/tool_nufft_bench" --n "$1" --spokes "$2" --readout "$3" --reps 20 --check 64 >"$L/t1_$1.log" 2>&1
  echo "n $1: exit $?" >>"$S"
  cat "$L/t1_$1.log" >>"$S"
done
log "test_gpu_nufft, and test_gpu_field five times (the SENSE CG GPU-vs-CPU image check's values)"
build_tree tool_nufft_bench test_gpu_nufft test_gpu_field
(cd "$B" && timeout 120 ./test_gpu_nufft) >"$L/nufft.log" 2>&1
echo "test_gpu_nufft: exit $? $(tail -1 "$L/nufft.log")" >>"$S"
grep "FAIL" "$L/nufft.log" | head -5 >>"$S"
for i in 1 2 3 4 5; do
  (cd "$B" && timeout 120 ./test_gpu_field) >"$L/field$i.log" 2>&1
  echo "test_gpu_field run $i: exit $? $(tail -1 "$L/field$i.log") $(grep -m1 -o 'seed [0-9]*' "$L/field$i.log")" >>"$S"
  grep -o "model: SENSE CG 20 iterations, GPU vs CPU image, rel L2 = [0-9.e-]*" "$L/field$i.log" >>"$S"
done
