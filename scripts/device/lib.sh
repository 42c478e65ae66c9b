# Sourced by scripts/device.sh and scripts/device/*.sh, the runs on the GPU machine (the `run` device tool): the common set-up.
# Before sourcing, set L (this run's log folder). Sets OUT (default ./device-out), B (build folder,
# default /tmp/b), S ($OUT/summary.txt); the logs in $L go to $OUT/logs.tgz on exit; log MSG prints a
# timestamped line into the summary; build_tree [TARGET...] configures $B with CUDA (sm_90), warnings as
# errors and the options in CMAKE_EXTRA (e.g. -DMR_MPI=ON), and builds the targets (default everything),
# exiting on failure; the summary starts with the GPU, the CPU model, the core count and the commit (the
# file COMMIT, written by whoever sends the tree). run_recon LABEL OUTDIR ARGS... empties OUTDIR, runs
# "$bin" recon and adds its report.json's timings to the summary (summarise REPORT LABEL). gpu_tests TAG
# PATTERN runs the GPU test programs once (logs $L/<test>TAG.log, e.g. TAG .round2), their exit status
# and the lines matching PATTERN to the summary.
OUT="${OUT:-$PWD/device-out}"
B="${BUILD:-/tmp/b}"
# a copy of xxhash.h in .dev/xxhash (carried: the GPU machine has no libxxhash-dev) when present
[ -f .dev/xxhash/xxhash.h ] && CMAKE_EXTRA="${CMAKE_EXTRA:-} -DMR_XXHASH_INCLUDE=$PWD/.dev/xxhash"
rm -rf "$L" && mkdir -p "$L" "$OUT"
S="$OUT/summary.txt"
finish() { tar czf "$OUT/logs.tgz" -C "$L" . 2>/dev/null || true; }
trap finish EXIT
export PATH="/usr/local/cuda/bin:$PATH"
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$S"; }
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true
  lscpu | grep -m1 "Model name" || true
  nproc
  cat COMMIT 2>/dev/null || echo "commit unknown"
} >>"$S" 2>&1
build_tree() {
  log "build"
  local t0=$SECONDS rc
  # shellcheck disable=SC2086
  cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 -DMR_CUDA=ON -DMR_WERROR=ON ${CMAKE_EXTRA:-} >"$L/cmake.log" 2>&1 &&
    cmake --build "$B" -j"$(nproc)" ${1:+--target "$@"} >"$L/build.log" 2>&1
  rc=$?
  echo "build exit $rc in $((SECONDS - t0)) s" >>"$S"
  grep -i "warning" "$L/build.log" | head -20 >>"$S"
  [ $rc -eq 0 ] || { log "BUILD FAILED"; grep -B2 -A10 -i "error" "$L/cmake.log" "$L/build.log" | head -60 >>"$S"; exit 1; }
}

summarise() { # REPORT LABEL
  python3 - "$1" "$2" <<'EOF' >>"$S" 2>&1
import json, sys
r = json.load(open(sys.argv[1])); t = r["timings_s"]; m = r["methods"][0]; s = r["settings"]
keys = ["read", "scan", "device_init", "sums_setup", "q", "plan", "fft_plan", "fhd", "problem", "solve", "score", "write", "total"]
print(sys.argv[2], "|", s.get("sums"), "| Q:", s.get("q_source"))
print("  " + ", ".join("%s %.3f" % (k, t.get(k, float("nan"))) for k in keys))
mt = m.get("metrics", {})
print("  PSNR image %s dB, bandlimited %s dB, iterations %d" % (mt.get("image", {}).get("psnr_db"),
      mt.get("bandlimited", {}).get("psnr_db"), m["iterations"]))
EOF
}
run_recon() { # LABEL OUTDIR ARGS...
  local label=$1 out=$2
  shift 2
  rm -rf "$out" # an earlier mode's folder: neither refused nor its report read as this run's
  /usr/bin/time -f "wall %e s, max RSS %M KiB" "$bin" recon "$@" -o "$out" >"$L/$(basename "$out").log" 2>&1
  echo "$label: exit $? $(tail -1 "$L/$(basename "$out").log")" >>"$S"
  [ -f "$out/report.json" ] && summarise "$out/report.json" "$label" && cp "$out/report.json" "$L/$(basename "$out").json"
}

# The test programs that exercise the GPU (each skips without one), in the order they are worth running.
GPU_TESTS="test_gpu_sums test_q_cache test_op_device test_gpu_linop test_gpu_cg test_gpu_gemm test_gpu_nudft
  test_gpu_phantom test_background test_gpu_wavelet test_gpu_problem test_gpu_nufft test_gpu_field test_gpu_espirit"
gpu_tests() { # TAG PATTERN
  local t lg
  for t in $GPU_TESTS; do
    log "$t$1"
    lg="$L/$t$1.log"
    (cd "$B" && MRIRECON_CACHE_DIR=/tmp/gpu-test-cache timeout 90 "./$t") >"$lg" 2>&1
    echo "exit $?" >>"$S"
    grep -E "$2" "$lg" | grep -v "^mrirecon: warning: Q cache" | head -60 >>"$S"
  done
}
