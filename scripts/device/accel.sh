#!/usr/bin/env bash
# Issue 10 on the GPU machine (the `run` device tool), in one call: build with CUDA (-DMR_WERROR=ON), the
# GPU tests of the engine, the split and the Q cache, then the measurements: the book problem end to end
# with a cold and a warm Q cache and with each --precision, small 2D problems with each engine (where
# CUDA start-up dominates), and Q / F^H d through the operator's engine on one GPU and split (--what q).
# Key results go to $OUT/summary.txt, every log and report.json to $OUT/logs.tgz.
# Usage: scripts/device.sh accel [tests|bench|e2e|all] (default all; e2e: the tests and the book problem
# end to end only); BUILD=/tmp/b; ROUNDS=N runs the GPU tests N times (default 1)
set -uo pipefail
cd "$(dirname "$0")/../.."
WHAT="${1:-all}"
L=/tmp/accel-logs
. scripts/device/lib.sh
export MRIRECON_CACHE_DIR=/tmp/accel-cache # never the user's ~/.cache

build_tree
bin="$B/mrirecon"
ldd "$bin" | grep -iE "cublas|cufft" >>"$S" || echo "mrirecon links no cuBLAS/cuFFT (both loaded at run time)" >>"$S"

for round in $(seq 1 "${ROUNDS:-1}"); do
  [ "$WHAT" = bench ] && break
  pat="FAIL|checks,|CHECK failed|voxels wrong|voxel \("
  [ "$round" = 1 ] && pat="$pat|precision |rungs|auto engine|operator .*: Q|parts vs 1 part|backend of"
  gpu_tests ".round$round" "$pat"
done

if [ "$WHAT" != tests ]; then
  log "book phantom"
  "$bin" phantom -o /tmp/book.h5 --dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 -q >>"$S" 2>&1
  log "book: recon --device gpu (default precision), cold Q cache x5, warm x5"
  for i in 1 2 3 4 5; do
    rm -rf /tmp/qc
    run_recon "book cold $i" "/tmp/bk_cold$i" /tmp/book.h5 --device gpu --q-cache /tmp/qc
  done
  for i in 1 2 3 4 5; do
    run_recon "book warm $i" "/tmp/bk_warm$i" /tmp/book.h5 --device gpu --q-cache /tmp/qc
  done
  ls -la /tmp/qc >>"$S"
  log "book: each precision, no cache"
  for p in sfu tf32x3 fp16x3 fp64; do
    run_recon "book $p" "/tmp/bk_$p" /tmp/book.h5 --device gpu --precision $p --q-cache off
  done
  log "book: split across the GPU listed twice (gpu:0,0), no cache"
  run_recon "book gpu:0,0" /tmp/bk_split /tmp/book.h5 --device gpu:0,0 --q-cache off
fi
if [ "$WHAT" = all ] || [ "$WHAT" = bench ]; then
  log "2D problems: each engine, no cache (3 processes each)"
  "$bin" phantom -o /tmp/r2d.h5 --dim 2 --matrix 128 --spokes 201 --readout 256 -q >>"$S" 2>&1
  "$bin" phantom -o /tmp/s2d.h5 --dim 2 --matrix 64 --spokes 101 --readout 128 -q >>"$S" 2>&1
  "$bin" phantom -o /tmp/c8.h5 --dim 2 --matrix 128 --spokes 201 --readout 256 --coils 8 -q >>"$S" 2>&1
  for scan in r2d s2d c8; do
    for p in sfu tf32x3 fp16x3; do
      for i in 1 2 3; do
        run_recon "$scan $p $i" "/tmp/${scan}_${p}_$i" /tmp/$scan.h5 --device gpu --precision $p --q-cache off
      done
    done
  done
  log "Q and F^H d through the engine, book problem: 1 GPU vs gpu:0,0 (the split path on one GPU)"
  "$bin" bench --device gpu:0,0 --problem book --what q --reps 5 --json "$L/bench_q_book.json" >"$L/bench_q_book.txt" 2>&1
  echo "exit $?" >>"$S"
  grep -vE "^(mrirecon|bench):" "$L/bench_q_book.txt" >>"$S"
  log "the same on the 2D problem sizes"
  for pb in 128,128,1:51456 64,64,1:12928; do
    "$bin" bench --device gpu --problem $pb --what q --reps 5 >"$L/bench_q_$pb.txt" 2>&1
    grep -E "^(Q|FHd) " "$L/bench_q_$pb.txt" | sed "s/^/$pb /" >>"$S"
  done
fi
log "done"
