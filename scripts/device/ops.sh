#!/usr/bin/env bash
# Issue 9 on the GPU machine (the `run` device tool), in one call: build with CUDA, the gpu tests
# (their values kept), the book problem end to end on the GPU (twice: the first run includes CUDA's
# start-up, and on the CPU with every core for the PSNR comparison), SENSE on the GPU, then the CPU tests.
# Key results go to $OUT/summary.txt, every log to $OUT/logs.tgz (the tool brings back few files).
# Usage: scripts/device.sh ops [tests|bench|all] (default all); BUILD=/tmp/b; CMAKE_EXTRA=-DMR_WERROR=ON
set -uo pipefail
cd "$(dirname "$0")/../.."
WHAT="${1:-all}"
L=/tmp/ops-logs
. scripts/device/lib.sh

log "build"
cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 -DMR_CUDA=ON ${CMAKE_EXTRA:-} >"$L/cmake.log" 2>&1 &&
  cmake --build "$B" -j"$(nproc)" >"$L/build.log" 2>&1
rc=$?
grep -i "warning" "$L/build.log" | head -20 >>"$S"
[ $rc -eq 0 ] || { log "BUILD FAILED"; tail -40 "$L/build.log" >>"$S"; exit 1; }

if [ "$WHAT" != bench ]; then
  for t in test_gpu_linop test_gpu_cg test_gpu_nudft test_gpu_phantom test_op_device; do
    log "$t"
    (cd "$B" && timeout 240 "./$t") >"$L/$t.log" 2>&1
    echo "exit $?" >>"$S"
    grep -E "FAIL|checks,|CHECK failed|relative residual after|backends|device init" "$L/$t.log" | head -40 >>"$S"
  done
fi

if [ "$WHAT" != tests ]; then
  bin="$B/mrirecon"
  log "book phantom"
  "$bin" phantom -o /tmp/book.h5 --dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 -q >>"$S" 2>&1
  summarise() { # REPORT LABEL
    python3 - "$1" "$2" <<'EOF' >>"$S" 2>&1
import json, sys
r = json.load(open(sys.argv[1])); t = r["timings_s"]; m = r["methods"][0]
keys = ["read", "device_init", "q", "plan", "fft_plan", "operator_create", "fhd", "solve", "write", "total"]
print(sys.argv[2], r["settings"]["backend"], "sens", r["settings"].get("sens"))
print("  " + ", ".join("%s %.3f" % (k, t.get(k, float("nan"))) for k in keys))
print("  monitor %.3f s, PSNR image %.4f dB, bandlimited %.4f dB, iterations %d" % (m.get("time_monitor_s", float("nan")),
      m["metrics"]["image"]["psnr_db"], m["metrics"]["bandlimited"]["psnr_db"], m["iterations"]))
EOF
  }
  for i in 1 2 3; do
    log "book recon --device gpu ($i)"
    /usr/bin/time -f "wall %e s, max RSS %M KiB" "$bin" recon /tmp/book.h5 -o "/tmp/bk$i" --device gpu >"$L/book_gpu$i.log" 2>&1
    tail -1 "$L/book_gpu$i.log" >>"$S"
    summarise "/tmp/bk$i/report.json" "gpu run $i"
    cp "/tmp/bk$i/report.json" "$L/book_gpu$i.json"
  done
  log "book recon --device gpu --reg gradient --lambda 1e-7"
  "$bin" recon /tmp/book.h5 -o /tmp/bkr --device gpu --reg gradient --lambda 1e-7 >"$L/book_gpu_reg.log" 2>&1
  summarise /tmp/bkr/report.json "gpu regularised"
  log "book recon --device cpu (all cores)"
  /usr/bin/time -f "wall %e s" timeout 150 "$bin" recon /tmp/book.h5 -o /tmp/bkc --device cpu >"$L/book_cpu.log" 2>&1
  tail -1 "$L/book_cpu.log" >>"$S"
  [ -f /tmp/bkc/report.json ] && summarise /tmp/bkc/report.json "cpu" && cp /tmp/bkc/report.json "$L/book_cpu.json"
  log "SENSE 2D 128^2 radial 201x256, 8 coils"
  "$bin" phantom -o /tmp/c8.h5 --dim 2 --matrix 128 --spokes 201 --readout 256 --coils 8 -q >>"$S" 2>&1
  for d in gpu cpu; do
    "$bin" recon /tmp/c8.h5 -o "/tmp/c8$d" --device $d >"$L/c8_$d.log" 2>&1
    summarise "/tmp/c8$d/report.json" "SENSE 8 coils $d"
  done
  log "kernel ladder on the 2D SENSE problem size (128^2, 51456 samples)"
  "$bin" bench --device gpu --problem 128,128,1:51456 --what kernels --reps 5 -q >"$L/bench2d.txt" 2>&1
  grep -E "^(Q|FHd) " "$L/bench2d.txt" >>"$S"
  log "SENSE 3D 64^3 kooshball 270x132, 8 coils"
  "$bin" phantom -o /tmp/c3.h5 --dim 3 --matrix 64 --traj kooshball --spokes 270 --readout 132 --coils 8 -q >>"$S" 2>&1
  for d in gpu cpu; do
    timeout 100 "$bin" recon /tmp/c3.h5 -o "/tmp/c3$d" --device $d >"$L/c3_$d.log" 2>&1
    [ -f "/tmp/c3$d/report.json" ] && summarise "/tmp/c3$d/report.json" "SENSE 3D 8 coils $d"
  done
fi

if [ "$WHAT" != bench ]; then
  log "ctest (all, cpu tests in parallel)"
  (cd "$B" && timeout 200 ctest -j8 --output-on-failure) >"$L/ctest.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" "$L/ctest.log" | head -20 >>"$S"
fi
log "done"
