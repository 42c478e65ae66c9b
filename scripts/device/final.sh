#!/usr/bin/env bash
# The verification run on the GPU machine (the `run` device tool), in one call: build with CUDA and
# -DMR_WERROR=ON, the whole ctest suite (GPU and MPI tests included), then the checks that need the
# GPU: the book problem on the GPU and on the CPU with the defaults (same PSNR), `mpirun -n 2 recon`
# on the GPU against one process, and `bench --what q` on smaller grids (split vs one part).
# Key results go to $OUT/summary.txt, logs to $OUT/logs.tgz.
# Usage: OUT=... bash scripts/device.sh final; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/final-logs
. scripts/device/lib.sh
export MRIRECON_CACHE_DIR=/tmp/final-cache # never the user's ~/.cache
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

build_tree
grep -E "MPI ON|MPI not found" "$L/cmake.log" >>"$S"
bin="$B/mrirecon"

log "ctest (all labels)"
(cd "$B" && timeout 300 ctest -j8 --timeout 240 --output-on-failure) >"$L/ctest.log" 2>&1
echo "ctest exit $?" >>"$S"
grep -E "tests passed|\*\*\*|Label|^(cli|cpu|gpu|mpi) *=" "$L/ctest.log" >>"$S"
for t in test_gpu_cg test_gpu_linop test_gpu_sums; do
  grep -E "checks, " "$B/Testing/Temporary/LastTest.log" 2>/dev/null | grep "$t" | head -2 >>"$S"
done

log "book problem: GPU and CPU with the defaults"
"$bin" phantom -o /tmp/book.h5 --dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 -q >>"$S" 2>&1
summarise() { # REPORT LABEL
  python3 - "$1" "$2" <<'EOF' >>"$S" 2>&1
import json, sys
r = json.load(open(sys.argv[1])); t = r["timings_s"]; m = r["methods"][0]; s = r["settings"]
keys = ["read", "device_init", "q", "fft_plan", "fhd", "solve", "write", "total"]
print(sys.argv[2], "|", s.get("backend"), "|", s.get("sums"), "| lambda", s.get("lambda"))
print("  " + ", ".join("%s %.3f" % (k, t.get(k, float("nan"))) for k in keys))
mt = m.get("metrics", {})
print("  PSNR image %s dB, bandlimited %s dB" % (mt.get("image", {}).get("psnr_db"), mt.get("bandlimited", {}).get("psnr_db")))
EOF
}
/usr/bin/time -f "wall %e s" "$bin" recon /tmp/book.h5 -o /tmp/bk_gpu --device gpu --q-cache off >"$L/bk_gpu.log" 2>&1
tail -1 "$L/bk_gpu.log" >>"$S"
summarise /tmp/bk_gpu/report.json "book gpu"
/usr/bin/time -f "wall %e s" timeout 200 "$bin" recon /tmp/book.h5 -o /tmp/bk_cpu --device cpu --q-cache off >"$L/bk_cpu.log" 2>&1
tail -1 "$L/bk_cpu.log" >>"$S"
[ -f /tmp/bk_cpu/report.json ] && summarise /tmp/bk_cpu/report.json "book cpu"

log "mpirun -n 2 recon on the GPU (both ranks on GPU 0) vs one process"
"$bin" phantom -o /tmp/c3.h5 --dim 3 --matrix 64 --traj kooshball --spokes 400 --readout 128 --coils 4 --snr 30 -q >>"$S" 2>&1
"$bin" recon /tmp/c3.h5 -o /tmp/c3_one --device gpu --q-cache off --precision sfu >"$L/c3_one.log" 2>&1
echo "one process: exit $?" >>"$S"
timeout 120 mpirun -n 2 --oversubscribe --bind-to none "$bin" recon /tmp/c3.h5 -o /tmp/c3_two --device gpu --q-cache off \
  --precision sfu -v >"$L/c3_two.log" 2>&1
echo "mpirun -n 2: exit $?" >>"$S"
grep -E "split|MPI" "$L/c3_two.log" | head -6 >>"$S"
echo "mpirun -n 2 vs one process, CG image (tool_imgcmp, relative L2, tolerance 1e-3):" >>"$S"
"$B/tool_imgcmp" /tmp/c3_two/image_cg.h5 /tmp/c3_one/image_cg.h5 1e-3 >>"$S" 2>&1
echo "  exit $?" >>"$S"
for d in c3_one c3_two; do [ -f /tmp/$d/report.json ] && summarise /tmp/$d/report.json "$d"; done

log "bench --what q, split on one GPU (gpu:0,0), smaller grids"
for pb in 32,32,32:20000 64,64,64:40000; do
  timeout 60 "$bin" bench --device gpu:0,0 --problem $pb --what q --reps 2 >"$L/bench_q_$pb.txt" 2>&1
  grep -E "^(Q|FHd) " "$L/bench_q_$pb.txt" | sed "s/^/$pb /" >>"$S"
done
log "done"
