#!/usr/bin/env bash
# The GPU tuning sweep: time every compiled SFU kernel configuration (threads per block, samples per
# chunk, unroll, voxels per thread, direct/rotation, range-reduction flavour) for Q and F^H d on the
# book's matrix (128^3; Q on 256^3) with the first M samples of the random problem, median of REPS.
# The best direct and rotation configurations per sum are printed last; copy them into mr_tuned /
# mr_multivoxel in gpu/nudft.cu and the table into docs/BENCHMARKS.md.
#   scripts/gpu_sweep.sh [MRIRECON] [OUTDIR] [M] [REPS]
set -euo pipefail
bin="${1:-build/mrirecon}"
out="${2:-.}"
m="${3:-16384}"
reps="${4:-3}"
mkdir -p "$out"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')" \
  | tee "$out/sweep.txt"
echo "# $bin bench --device gpu --problem book --sweep --sweep-samples $m --reps $reps" | tee -a "$out/sweep.txt"
"$bin" bench --device gpu --problem book --sweep --sweep-samples "$m" --reps "$reps" | tee -a "$out/sweep.txt"
