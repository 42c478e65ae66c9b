#!/usr/bin/env bash
# Issue 22 (off-resonance) on the GPU machine (the `run` device tool), in one call: build with CUDA, the GPU
# tests of the field operators (test_gpu_field; test_gpu_linop, whose start is now shared in
# tests/linop_check.h), then the 3D benchmark of docs/RECON.md "Field maps": the book's kooshball (128^3,
# 1078 x 264 = 284,592 samples) with a readout timing (dwell DWELL_US, default 8 us: a 2.1 ms readout) and
# a field of 20 Hz + a linear field spanning +-100 Hz across the FOV, reconstructed by tests/tool_field_recon
# (CG, 60 iterations, on the GPU) with
#   none       the field-free operator on the same scan without a field (the time to compare against),
#   none       the field-free operator on the scan with the field (uncorrected),
#   frequency  the frequency-segmented model (default --fieldmap-tol 1e-3), its error measured (--check),
#   exact      the exact field model (BENCH_EXACT=1; 60 iterations of exact sums: about a minute or more).
# Key results go to $OUT/summary.txt, every log to $OUT/logs.tgz.
# Usage: scripts/device.sh field-tool [tests|bench|all] (default all); BUILD=/tmp/b; DWELL_US=8; BENCH_EXACT=0|1
set -uo pipefail
cd "$(dirname "$0")/../.."
WHAT="${1:-all}"
L=/tmp/field-logs
. scripts/device/lib.sh

build_tree test_gpu_field test_gpu_linop tool_field_recon mrirecon

if [ "$WHAT" != bench ]; then
  for t in test_gpu_field test_gpu_linop; do
    log "$t"
    (cd "$B" && timeout 240 "./$t") >"$L/$t.log" 2>&1
    echo "exit $?" >>"$S"
    grep -E "FAIL|checks,|CHECK failed|backend:" "$L/$t.log" | head -40 >>"$S"
    grep -E "ok: .*(GPU vs CPU|vs float64|measured error)" "$L/$t.log" | head -40 >>"$S"
  done
fi

if [ "$WHAT" != tests ]; then
  bin="$B/mrirecon"
  tool="$B/tool_field_recon"
  common=(--dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 --dwell "${DWELL_US:-8}" --te 1 -q)
  log "book phantoms (with and without the field)"
  "$bin" phantom -o /tmp/book_nf.h5 "${common[@]}" >>"$S" 2>&1
  "$bin" phantom -o /tmp/book_f.h5 "${common[@]}" --fieldmap c=20,x=150,y=50 >>"$S" 2>&1
  log "field-free scan, field-free operator (twice: the first includes CUDA's start-up)"
  for i in 1 2; do
    /usr/bin/time -f "wall %e s, max RSS %M KiB" "$tool" /tmp/book_nf.h5 --models none --device gpu >>"$S" 2>&1
  done
  log "scan with the field: none (uncorrected), frequency (checked)"
  /usr/bin/time -f "wall %e s, max RSS %M KiB" "$tool" /tmp/book_f.h5 --models none,frequency --device gpu --check \
    >>"$S" 2>&1
  if [ "${BENCH_EXACT:-0}" = 1 ]; then
    log "scan with the field: exact and frequency (image distance)"
    /usr/bin/time -f "wall %e s, max RSS %M KiB" timeout 500 "$tool" /tmp/book_f.h5 --models exact,frequency \
      --device gpu >>"$S" 2>&1
  fi
fi
log "done"
