#!/usr/bin/env bash
# Issue 10's two-GPU target on a two-GPU host (the `run` device tool, kind nvidia-h200-x2), in one call:
# build mrirecon and test_gpu_sums with CUDA (-DMR_WERROR=ON); the GPUs' link (nvidia-smi topo -m); Q and
# F^H d through the operator's engine on GPU 0 and split over both (`bench --what q --device gpu:0,1`,
# which also compares the split with one part and fails on a mismatch), tf32x3 first; test_gpu_sums,
# whose splits then go round both GPUs; the book problem end to end on gpu:0 and gpu:all; the other
# precisions last. Results to $OUT/summary.txt, logs and report.json files to $OUT/logs.tgz.
# Usage: scripts/device.sh 2gpu [scaling|more] (default scaling: the above); `more`: every GPU test
# program (full build), then a larger problem (192^3 image, 384^3 Q grid, 1617 x 396 kooshball samples)
# through bench --what q and end to end on gpu:0 and gpu:all. BUILD=/tmp/b; REPS=N for bench (default 5)
set -uo pipefail
cd "$(dirname "$0")/../.."
WHAT="${1:-scaling}"
L=/tmp/2gpu-logs
. scripts/device/lib.sh
export MRIRECON_CACHE_DIR=/tmp/2gpu-cache # never the user's ~/.cache
reps=${REPS:-5}
nvidia-smi topo -m >>"$S" 2>&1

bench_q() { # PRECISION PROBLEM
  log "bench --what q --precision $1 --problem $2 --device gpu:0,1"
  timeout 150 "$bin" bench --device gpu:0,1 --what q --precision "$1" --problem "$2" --reps "$reps" \
    >"$L/q_$1_$2.log" 2>&1
  echo "exit $?" >>"$S"
  grep -E "^(Q|FHd) |split vs|one GPU|error|MISMATCH" "$L/q_$1_$2.log" >>"$S"
}
e2e() { # SCAN RUNS
  for i in $(seq 1 "$2"); do
    for d in gpu:0 gpu:all; do
      run_recon "$(basename "$1" .h5) $d $i" "/tmp/$(basename "$1" .h5)_${d/:/_}_$i" "$1" --device "$d" --q-cache off
    done
  done
}

if [ "$WHAT" = scaling ]; then
  build_tree mrirecon test_gpu_sums
  bin="$B/mrirecon"
  bench_q tf32x3 book
  log "test_gpu_sums"
  (cd "$B" && timeout 120 ./test_gpu_sums) >"$L/test_gpu_sums.log" 2>&1
  echo "exit $?" >>"$S"
  grep -E "FAIL|checks,|CHECK failed|GPU\(s\)|parts vs 1 part" "$L/test_gpu_sums.log" | head -40 >>"$S"
  log "book phantom"
  "$bin" phantom -o /tmp/book.h5 --dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 -q >>"$S" 2>&1
  e2e /tmp/book.h5 3
  for p in fp16x3 fp64; do bench_q "$p" book; done
else
  build_tree
  bin="$B/mrirecon"
  gpu_tests "" "FAIL|checks,|CHECK failed|GPU\(s\)"
  log "phantom 192^3"
  "$bin" phantom -o /tmp/big.h5 --dim 3 --matrix 192 --traj kooshball --spokes 1617 --readout 396 -q >>"$S" 2>&1
  bench_q tf32x3 192,192,192:640332
  e2e /tmp/big.h5 2
fi
log "done"
