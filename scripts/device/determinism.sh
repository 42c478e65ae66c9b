#!/usr/bin/env bash
# The GPU type 1 with one summation order (gpu/nufft.cu: tiles in non-overlapping classes, no atomics):
# its execute time and its error against float64 direct sums (tool_nufft_bench, the book size and 256^3,
# the command of docs/BENCHMARKS.md's type-1 table), cuFINUFFT on the same points when its driver is
# carried (below), then test_gpu_nufft once and test_gpu_field five times (its SENSE CG check's values).
# The run-to-run check of whole reconstructions is scripts/device/repro.sh.
# Usage: scripts/device.sh determinism; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/determinism-logs
. scripts/device/lib.sh
build_tree tool_nufft_bench
log "type 1, eps 1e-6, execute time (median of 20) and error at 64 modes"
# cuFINUFFT 2.5.1 on the same points when its benchmark driver was carried (.dev/cfbin/cf_bench: built on
# the GPU machine from cuFINUFFT's source for this comparison only, not part of mrirecon; its source is
# .dev/cfbench/cf_bench.cu): every gpu_method, then its best method's modes measured at our check modes
cf=.dev/cfbin/cf_bench
for spec in "128 1078 264" "256 4312 528"; do
  set -- $spec
  wr=()
  [ -x "$cf" ] && wr=(--write "/tmp/p$1.bin")
  timeout 120 "$B/tool_nufft_bench" --n "$1" --spokes "$2" --readout "$3" --reps 20 --check 64 "${wr[@]}" \
    >"$L/t1_$1.log" 2>&1
  echo "n $1: exit $?" >>"$S"
  cat "$L/t1_$1.log" >>"$S"
  if [ -x "$cf" ]; then
    LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} timeout 120 "$cf" "/tmp/p$1.bin" "/tmp/f$1.bin" 1e-6 20 >>"$S" 2>&1
    timeout 120 "$B/tool_nufft_bench" --n "$1" --spokes "$2" --readout "$3" --reps 1 --check 64 \
      --compare "/tmp/f$1.bin" 2>/dev/null | grep compare >>"$S"
  fi
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
