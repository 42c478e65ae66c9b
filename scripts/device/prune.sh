#!/usr/bin/env bash
# The slab-pruned Toeplitz transforms (gpu/toeplitz.cu) against one unpruned cuFFT plan of the whole 2N
# grid (MR_GPU_TOEPLITZ=full), in the same build: test_gpu_linop (pruned vs full vs the CPU), then
# tool_nufft_bench's operator mode (Q, F^H d, 60 CG iterations, GPU memory peak) at the book size and
# at 256^3 with 1 and 8 coils, the two variants alternated, REPS rounds; then where a book-problem
# `recon --method cg` spends the time outside report.json's `total` (process start and exit: strace's
# execve/exit_group times when strace is installed, else the arrival of the last log line).
# Usage: scripts/device.sh prune [REPS (default 2)]; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/prune-logs
. scripts/device/lib.sh
reps=${1:-2}
build_tree mrirecon tool_nufft_bench tool_imgcmp test_gpu_linop
bin="$B/mrirecon"
log "test_gpu_linop"
(cd "$B" && timeout 120 ./test_gpu_linop) >"$L/linop.log" 2>&1
echo "test_gpu_linop exit $? $(tail -1 "$L/linop.log")" >>"$S"
grep -E "FAIL|pruned" "$L/linop.log" | head -20 >>"$S"
bench() { # LABEL ARGS...
  local label=$1 v
  shift
  for v in pruned full; do
    if [ $v = full ]; then export MR_GPU_TOEPLITZ=full; else unset MR_GPU_TOEPLITZ; fi
    timeout 120 "$B/tool_nufft_bench" --device gpu --operator nufft "$@" >"$L/bench.log" 2>&1
    echo "$label $v: exit $? | $(grep -iE "cg|total|peak" "$L/bench.log" | tr '\n' ' ' | cut -c1-400)" >>"$S"
  done
  unset MR_GPU_TOEPLITZ
}
log "tool_nufft_bench operator mode"
for r in $(seq 1 "$reps"); do
  bench "book 128^3 round $r" --n 128 --spokes 1078 --readout 264
  bench "256^3 round $r" --n 256 --spokes 4312 --readout 528
  bench "256^3 8 coils round $r" --n 256 --spokes 4312 --readout 528 --coils 8
done
log "book phantom: where the wall time goes"
"$bin" phantom -o /tmp/book.h5 --dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 --snr 30 -q >>"$S" 2>&1
command -v strace >/dev/null && echo "strace: $(command -v strace)" >>"$S" || echo "strace: not installed" >>"$S"
for i in 1 2 3; do
  for q in "" 1; do
    label="book cg run $i${q:+ (MR_QUICK_EXIT)}"
    python3 - "$bin" "$label" "$q" >>"$S" 2>&1 <<'EOF'
import json, os, subprocess, sys, time
bin_, label, quick = sys.argv[1:4]
env = dict(os.environ)
if quick:
    env["MR_QUICK_EXIT"] = "1"
args = [bin_, "recon", "/tmp/book.h5", "-o", "/tmp/probe", "--device", "gpu", "--method", "cg", "--q-cache", "off",
        "--force", "-v"]
t0 = time.monotonic()
p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
first = last = None
for line in p.stderr:
    t = time.monotonic() - t0
    first = t if first is None else first
    last = t
p.wait()
wall = time.monotonic() - t0
t = json.load(open("/tmp/probe/report.json"))["timings_s"]
print("%s: exit %d, wall %.3f s, first log line %.3f s, last %.3f s, report total %.3f (device_init %.3f, write %.3f)"
      % (label, p.returncode, wall, first or -1, last or -1, t["total"], t["device_init"], t["write"]))
EOF
  done
done
if command -v strace >/dev/null; then
  strace -f -ttt -e trace=execve,exit_group -o "$L/strace.txt" "$bin" recon /tmp/book.h5 -o /tmp/probe --device gpu \
    --method cg --q-cache off --force -q >/dev/null 2>&1
  { head -3 "$L/strace.txt"; grep -E "exit_group|exited" "$L/strace.txt" | tail -4; } >>"$S"
fi
log "defaults: the NUFFT model's image against the exact model's"
for m in nufft exact; do
  run_recon "book defaults --model $m" /tmp/bkd_$m /tmp/book.h5 --device gpu --model $m --q-cache off --force -q
done
"$B/tool_imgcmp" /tmp/bkd_exact/image_iterative.h5 /tmp/bkd_nufft/image_iterative.h5 1e-4 >>"$S" 2>&1
run_recon "book defaults --model nufft (again)" /tmp/bkd_nufft2 /tmp/book.h5 --device gpu --model nufft --q-cache off \
  --force -q
"$B/tool_imgcmp" /tmp/bkd_nufft/image_iterative.h5 /tmp/bkd_nufft2/image_iterative.h5 1e-4 >>"$S" 2>&1
log "done"
