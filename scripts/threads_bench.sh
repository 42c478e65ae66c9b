#!/usr/bin/env bash
# The cost of OpenMP's wait policy (docs/RECON.md, "Threads"): the 2D TV default (128^2 radial, 48 spokes,
# 30 dB) reconstructed REPS times with mrirecon's passive policy (OMP_WAIT_POLICY unset: the program
# re-executes itself with passive) and with libgomp's spinning one (OMP_WAIT_POLICY=active), alternating,
# at each thread count in THREADS; prints the median and range of the process wall time of each.
# Optional LOAD=N runs N busy loops beside it (a shared machine). Prints the CPU model first.
#   bash scripts/threads_bench.sh [BUILD/mrirecon] [REPS]     (THREADS="1 2", LOAD=0 by default)
set -u
bin=${1:-build/mrirecon}
reps=${2:-7}
threads=${THREADS:-"1 2"}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
lscpu | grep -m1 "Model name" | sed 's/  */ /g'
echo "cores: $(nproc), busy loops beside: ${LOAD:-0}"
"$bin" phantom -o "$work/s.h5" --matrix 128 --spokes 48 --snr 30 -q >/dev/null || exit 1
for _ in $(seq 1 "${LOAD:-0}"); do (while :; do :; done) & done
one() { # POLICY THREADS -> seconds
  local t0 t1
  t0=$(date +%s.%N)
  if [ "$1" = passive ]; then
    env -u OMP_WAIT_POLICY OMP_NUM_THREADS="$2" "$bin" recon "$work/s.h5" -o "$work/o" --force -q >/dev/null 2>&1
  else
    OMP_WAIT_POLICY=active OMP_NUM_THREADS="$2" "$bin" recon "$work/s.h5" -o "$work/o" --force -q >/dev/null 2>&1
  fi || { echo "recon failed" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
for t in $threads; do
  : >"$work/passive" && : >"$work/active"
  one passive "$t" >/dev/null # warm the page cache
  for _ in $(seq 1 "$reps"); do
    one passive "$t" >>"$work/passive"
    one active "$t" >>"$work/active"
  done
  for p in passive active; do
    sort -n "$work/$p" | awk -v p=$p -v t="$t" '{ v[NR] = $1 } END {
      printf "threads %s, %-7s: median %.3f s (%.3f to %.3f, %d runs)\n", t, p, v[int((NR + 1) / 2)], v[1], v[NR], NR }'
  done
done
