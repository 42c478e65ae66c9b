#!/usr/bin/env bash
# Issue 10, the split check on the GPU machine (the `run` device tool), in one call: build mrirecon with
# CUDA, then `bench --what q --device gpu:0,0` (the grid in two parts on one GPU against one part, and
# both against the float64 reference rows) over Q grids of 128^3 to 256^3 and sample counts up to the
# book's. Results to $OUT/summary.txt, logs to $OUT/logs.tgz.
# Usage: scripts/device.sh split; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/split-logs
. scripts/device/lib.sh

build_tree mrirecon

# each line: precision problem [more bench options]; SPECS (a file) replaces the list
specs=${SPECS:-}
[ -n "$specs" ] || { specs=/tmp/split-specs; cat >"$specs" <<'LIST'
tf32x3 64,64,64:65536
tf32x3 96,96,96:65536
tf32x3 128,128,128:4096
fp64 128,128,128:4096
tf32x3 128,128,128:65536
tf32x3 book
fp64 book
LIST
}
n=0
while read -r prec prob more; do
  [ -n "$prec" ] || continue
  n=$((n + 1))
  log "bench q $prec $prob $more"
  # shellcheck disable=SC2086
  timeout 120 "$B/mrirecon" bench --device gpu:0,0 --what q --precision "$prec" --problem "$prob" --reps 3 $more \
    >"$L/q_$n.log" 2>&1
  echo "exit $?" >>"$S"
  grep -E "^(Q|FHd) |split vs|one GPU|error" "$L/q_$n.log" >>"$S"
done <"$specs"
log "done"
