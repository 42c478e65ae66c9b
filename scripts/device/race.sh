#!/usr/bin/env bash
# Hunting an intermittent wrong result of the tensor-core engines on the GPU machine (the `run` device
# tool): build, run test_gpu_gemm N times (failures and their lines to the summary), then the GEMM rows of
# a small problem under compute-sanitizer (memcheck, racecheck, synccheck, initcheck).
# Usage: scripts/device.sh race [N] (default 8); BUILD=/tmp/b; PROBLEM (default 24,24,24:9600)
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/race-logs
. scripts/device/lib.sh
n=${1:-8}
build_tree
for i in $(seq 1 "$n"); do
  (cd "$B" && timeout 120 ./test_gpu_gemm >"$L/gemm_$i.log" 2>&1)
  echo "test_gpu_gemm run $i: exit $? $(grep -c FAIL "$L/gemm_$i.log") FAIL" >>"$S"
  grep -o "FAIL: [^(]*([^)]*)" "$L/gemm_$i.log" | head -10 >>"$S"
done
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck initcheck; do
  for prec in fp16x3 tf32x3; do
    log "compute-sanitizer --tool $tool, bench $prec"
    timeout 150 "$cs" --tool "$tool" --print-limit 20 "$B/mrirecon" bench --device gpu --problem "${PROBLEM:-24,24,24:9600}" \
      --what kernels --rows gemm --precision "$prec" --reps 1 >"$L/cs_${tool}_$prec.log" 2>&1
    echo "exit $?" >>"$S"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Uninitialized|hazard|^(Q|FHd) " "$L/cs_${tool}_$prec.log" | head -12 >>"$S"
  done
done
log "done"
