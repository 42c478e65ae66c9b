#!/usr/bin/env bash
# Issue 10 on the GPU machine (the `run` device tool), in one call: build everything with CUDA and
# warnings as errors, run the GEMM and sums tests (fp16x3 among the engines; the split-Q case of
# M = 284,592 samples), then the book problem's GEMM rows of the ladder (tf32x3, fp64, fp16x3: median
# of REPS after a warm-up, rel_L2 against float64 rows) and the split check of --what q (gpu:0,0) for
# tf32x3 and fp16x3. Results to $OUT/summary.txt, logs to $OUT/logs.tgz.
# Usage: scripts/device.sh fp16 [tests|bench|all]; REPS (default 5), BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/fp16-logs
. scripts/device/lib.sh
what=${1:-all}
reps=${REPS:-5}

build_tree

if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in test_gpu_gemm test_gpu_sums; do
    log "$t"
    t0=$SECONDS
    (cd "$B" && timeout 240 "./$t" >"$L/$t.log" 2>&1)
    echo "$t exit $? in $((SECONDS - t0)) s" >>"$S"
    grep -E "FAIL|checks|realistic|parts vs 1 part, call" "$L/$t.log" | head -40 >>"$S"
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  log "bench: book problem, GEMM rows"
  timeout 300 "$B/mrirecon" bench --device gpu --problem book --what kernels --rows gemm --reps "$reps" \
    >"$L/bench_gemm.log" 2>&1
  echo "exit $?" >>"$S"
  grep -E "^(sum|Q |FHd) " "$L/bench_gemm.log" >>"$S"
  for prec in tf32x3 fp16x3; do
    log "bench --what q --device gpu:0,0 --precision $prec"
    timeout 200 "$B/mrirecon" bench --device gpu:0,0 --problem book --what q --precision "$prec" --reps 3 \
      >"$L/q_$prec.log" 2>&1
    echo "exit $?" >>"$S"
    grep -E "^(Q|FHd) |split vs|one GPU|error" "$L/q_$prec.log" >>"$S"
  done
fi
log "done"
