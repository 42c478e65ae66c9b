# Sourced by the scripts/device_*.sh runs on the GPU machine (the `run` device tool): the common set-up.
# Before sourcing, set L (this run's log folder). Sets OUT (default ./device-out), B (build folder,
# default /tmp/b), S ($OUT/summary.txt); the logs in $L go to $OUT/logs.tgz on exit; log MSG prints a
# timestamped line into the summary; build_tree [TARGET] configures $B with CUDA (sm_90) and warnings as
# errors and builds TARGET (default everything), exiting on failure; the summary starts with the GPU, the CPU model, the core count and
# the commit (the file COMMIT, written by whoever sends the tree).
OUT="${OUT:-$PWD/device-out}"
B="${BUILD:-/tmp/b}"
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
  cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 -DMR_CUDA=ON -DMR_WERROR=ON >"$L/cmake.log" 2>&1 &&
    cmake --build "$B" -j"$(nproc)" ${1:+--target "$1"} >"$L/build.log" 2>&1
  rc=$?
  echo "build exit $rc in $((SECONDS - t0)) s" >>"$S"
  grep -i "warning" "$L/build.log" | head -20 >>"$S"
  [ $rc -eq 0 ] || { log "BUILD FAILED"; grep -B2 -A10 -i "error" "$L/build.log" | head -60 >>"$S"; exit 1; }
}
