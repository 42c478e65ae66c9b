#!/usr/bin/env bash
# Issue 13's GPU figures on the two-GPU host (the `run` device tool, kind nvidia-h200-x2), in one call
# (docs/CLUSTER.md, "GPU figures"): build mrirecon, tool_mpi_split and tool_imgcmp with CUDA and MPI;
# Q of a 256^3 scan (512^3 grid, 1,138,368 samples) split over 2 ranks with one GPU each against one
# process on one GPU (tool_mpi_split --check); then the standard suite with 1 rank on one GPU, 2 ranks
# (a GPU each) and the one-host batch on both GPUs, images compared. Results to $OUT/summary.txt.
# Usage: scripts/device.sh cluster; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/cluster-logs
. scripts/device/lib.sh
export MRIRECON_CACHE_DIR=/tmp/cluster-cache OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
{ which mpirun && mpirun --version | head -1; } >>"$S" 2>&1 || { log "no mpirun here"; exit 1; }

CMAKE_EXTRA=-DMR_MPI=ON build_tree mrirecon tool_mpi_split tool_imgcmp

log "Q 256^3 over 2 ranks (a GPU each) vs one process"
timeout 150 mpirun -n 2 --bind-to none "$B/tool_mpi_split" --what q --dims 3 --matrix 256 --samples 1138368 \
  --device gpu --reps 2 --check >"$L/split.log" 2>&1
echo "exit $?" >>"$S"
cat "$L/split.log" >>"$S"

log "suite"
"$B/mrirecon" phantom --suite /tmp/suite -q >>"$S" 2>&1
for run in "1 rank, 1 GPU|o1|mpirun -n 1 --bind-to none -x CUDA_VISIBLE_DEVICES=0" \
  "2 ranks, 2 GPUs|o2|mpirun -n 2 --bind-to none" "no MPI, 2 GPUs|o3|"; do
  IFS='|' read -r label dir launcher <<<"$run"
  log "$label"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  timeout 120 $launcher "$B/mrirecon" batch /tmp/suite -o "/tmp/$dir" --device gpu -q >"$L/$dir.log" 2>&1
  rc=$?
  echo "$label: exit $rc, $((($(date +%s%N) - t0) / 1000000)) ms" >>"$S"
done
grep -ho '"backend": *"[^"]*"' /tmp/o2/*/report.json | sort | uniq -c >>"$S"
for f in /tmp/o1/*/image_*.h5; do
  "$B/tool_imgcmp" "$f" "/tmp/o2/${f#/tmp/o1/}" >/dev/null 2>&1 && echo "1 rank = 2 ranks" || echo "DIFFERS ${f#/tmp/o1/}"
done | sort | uniq -c >>"$S"
log "done"
