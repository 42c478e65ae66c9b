#!/usr/bin/env bash
# The GPU type 1 with one summation order (gpu/nufft.cu: tiles in non-overlapping classes, no atomics):
# its execute time against the float64 direct sums' error (tool_nufft_bench, the book size and 256^3, the
# command of docs/BENCHMARKS.md's type-1 table), then the run-to-run check of scripts/device/repro.sh
# (the defaults, --method cg, both models, repeated; images compared bit for bit by tool_imgcmp).
# Usage: scripts/device.sh determinism; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/determinism-logs
. scripts/device/lib.sh
build_tree tool_nufft_bench
log "type 1, eps 1e-6, execute time (median of 20) and error at 64 modes"
for spec in "128 1078 264" "256 4312 528"; do
  set -- $spec
  timeout 120 "$B/tool_nufft_bench" --n "$1" --spokes "$2" --readout "$3" --reps 20 --check 64 >"$L/t1_$1.log" 2>&1
  echo "n $1: exit $?" >>"$S"
  cat "$L/t1_$1.log" >>"$S"
done
