#!/usr/bin/env bash
# The cost of OpenMP's wait policy (docs/RECON.md, "Threads"): the 2D TV default (128^2 radial, 48 spokes,
# 30 dB) reconstructed REPS times, in turn, with mrirecon's setting (nothing set: the program re-executes
# itself with GOMP_SPINCOUNT 1000), libgomp's default (GOMP_SPINCOUNT 300000, what an unset environment
# gives a program that does not choose), the passive policy (OMP_WAIT_POLICY=passive) and the active one
# (spinning until work comes), at each thread count in THREADS; prints the median and range of the process
# wall time of each.
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
policies="mrirecon default passive active"
one() { # POLICY THREADS -> seconds
  local t0 t1 set
  case $1 in
  mrirecon) set="" ;;
  default) set="GOMP_SPINCOUNT=300000" ;;
  passive) set="OMP_WAIT_POLICY=passive" ;;
  active) set="OMP_WAIT_POLICY=active" ;;
  esac
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT $set OMP_NUM_THREADS="$2" "$bin" recon "$work/s.h5" -o "$work/o" --force -q \
    >/dev/null 2>&1 || { echo "recon failed" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
for t in $threads; do
  one mrirecon "$t" >/dev/null # warm the page cache
  for p in $policies; do : >"$work/$p"; done
  for _ in $(seq 1 "$reps"); do
    for p in $policies; do one $p "$t" >>"$work/$p"; done
  done
  for p in $policies; do
    sort -n "$work/$p" | awk -v p=$p -v t="$t" '{ v[NR] = $1 } END {
      printf "threads %s, %-8s: median %.3f s (%.3f to %.3f, %d runs)\n", t, p, v[int((NR + 1) / 2)], v[1], v[NR], NR }'
  done
done
