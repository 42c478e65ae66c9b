# Sourced by the scripts/device_*.sh runs on the GPU machine (the `run` device tool): the common set-up.
# Before sourcing, set L (this run's log folder). Sets OUT (default ./device-out), B (build folder,
# default /tmp/b), S ($OUT/summary.txt); the logs in $L go to $OUT/logs.tgz on exit; log MSG prints a
# timestamped line into the summary; the summary starts with the GPU, the CPU model, the core count and
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
