#!/usr/bin/env bash
# The split sums (recon/cluster/mpi_split.h) over 1, 2 and 3 ranks on one host (MPI builds only; 77 without
# mpirun), through tests/tool_mpi_split --check: Q (real weights, Q grid: the Hermitian mirror) and
# F^H d (complex weights, image grid), 2D (rows) and 3D (z-slabs), even and odd matrices, the
# machine's CPU kernel and the portable one (MR_CPU_KERNEL); each compared with the one-process kernel (bit-identical where recon/cluster/mpi_split.h promises it, else
# relative L2 <= 1e-6) and with a float64 direct sum (relative L2 <= 1e-5).
# Usage: bash mpi_split.sh MRIRECON SCRATCH
. "$(dirname "$0")/batch_lib.sh"
. "$(dirname "$0")/mpirun_lib.sh"
TOOL=$(dirname "$MR")/tool_mpi_split
[ -x "$TOOL" ] || fail "$TOOL not built"

# split P NAME TOOL-ARGS...: run the tool over P ranks, require its verdict ok
split() {
  local p=$1 name=$2
  shift 2
  mpi "$p" "$TOOL" --threads 1 --check "$@" > "$S/$name.log" 2>&1
  local rc=$?
  grep -E '^(split|  check|  expected|RESULT|  FAIL)' "$S/$name.log"
  [ $rc = 0 ] && grep -q '^RESULT .* ok$' "$S/$name.log" || {
    cat "$S/$name.log"
    fail "$name: tool_mpi_split over $p ranks failed (status $rc)"
  }
  ok "$name"
}

# the CPU kernel this machine picks (a "powers" kernel with AVX2 or AVX-512: Q equal within float32
# rounding), then the portable one (Q bit-identical too)
for kernel in auto portable; do
  for p in 1 2 3; do
    for what in q fhd; do
      MR_CPU_KERNEL=$kernel split $p "$what-2d-P$p-$kernel" --what $what --dims 2 --matrix 24 --expect-identical
      MR_CPU_KERNEL=$kernel split $p "$what-3d-P$p-$kernel" --what $what --dims 3 --matrix 10 --expect-identical
    done
  done
done
# odd matrices (centre planes, unpaired planes, ranks with unequal shares), more ranks than cores
split 3 q-3d-odd --what q --dims 3 --matrix 7 --expect-identical
split 3 fhd-3d-odd --what fhd --dims 3 --matrix 9 --expect-identical
split 2 q-2d-odd --what q --dims 2 --matrix 13 --expect-identical
split 4 q-3d-P4 --what q --dims 3 --matrix 6 --expect-identical
# real weights on the image grid (its centre is not the middle of an even axis)
split 3 q-image-3d --what q --grid image --dims 3 --matrix 8 --expect-identical
split 2 q-image-2d-odd --what q --grid image --dims 2 --matrix 11 --expect-identical
# Q without the mirror (each rank's slab computed directly): equal within float32 rounding
split 2 q-3d-nomirror --what q --dims 3 --matrix 8 --mirror off
# repeated calls on the same ranks
split 2 q-3d-reps --what q --dims 3 --matrix 8 --reps 3 --expect-identical

echo "mpi_split: all checks passed in $((SECONDS - t0)) s"
