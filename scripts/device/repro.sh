#!/usr/bin/env bash
# Run-to-run reproducibility of `recon --device gpu` on the book problem (30 dB): the same command
# repeated, the images compared (tool_imgcmp, relative L2) and the first iterations' objective printed,
# for the defaults (total variation, ADMM) and --method cg, with the NUFFT model and the exact sums; the
# defaults again with CUDA_LAUNCH_BLOCKING=1 (every launch waited for: no overlap between streams), and
# once on the CPU (deterministic) as the reference.
# Usage: scripts/device.sh repro; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/repro-logs
. scripts/device/lib.sh
build_tree mrirecon tool_imgcmp
bin="$B/mrirecon"
"$bin" phantom -o /tmp/book.h5 --dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 --snr 30 -q >>"$S" 2>&1
one() { # NAME ARGS...: one run into /tmp/rp_NAME, its first objectives and PSNR to the summary
  local name=$1
  shift
  "$bin" recon /tmp/book.h5 -o "/tmp/rp_$name" --q-cache off --force -q "$@" >"$L/$name.log" 2>&1
  python3 - "/tmp/rp_$name/report.json" "$name" "$?" >>"$S" 2>&1 <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); m = r["methods"][0]
o = m.get("objective_history") or m.get("history") or []
print("%-22s exit %s solve %.3f s, objective[1..3] %s, PSNR bl %.4f dB, lambda %s" % (sys.argv[2], sys.argv[3],
      m["time_solve_s"], " ".join("%.9g" % v for v in o[1:4]), m["metrics"]["bandlimited"]["psnr_db"],
      r["settings"].get("lambda")))
EOF
}
cmp_img() { # A B [METHOD (default iterative)]: the images of two runs
  local f="image_${3:-iterative}.h5"
  echo "  $1 vs $2: $("$B/tool_imgcmp" "/tmp/rp_$1/$f" "/tmp/rp_$2/$f" 1e-4 2>&1 | head -1)" >>"$S"
}
log "defaults, nufft x3, exact x2"
for i in 1 2 3; do one "tv_nufft$i" --device gpu --model nufft; done
for i in 1 2; do one "tv_exact$i" --device gpu --model exact; done
cmp_img tv_nufft1 tv_nufft2; cmp_img tv_nufft1 tv_nufft3; cmp_img tv_nufft2 tv_nufft3
cmp_img tv_exact1 tv_exact2; cmp_img tv_exact1 tv_nufft1
log "cg, nufft x2, exact x2"
for i in 1 2; do one "cg_nufft$i" --device gpu --model nufft --method cg; done
for i in 1 2; do one "cg_exact$i" --device gpu --model exact --method cg; done
cmp_img cg_nufft1 cg_nufft2 cg; cmp_img cg_exact1 cg_exact2 cg; cmp_img cg_exact1 cg_nufft1 cg
log "defaults with CUDA_LAUNCH_BLOCKING=1, nufft x2"
for i in 1 2; do CUDA_LAUNCH_BLOCKING=1 one "tv_block$i" --device gpu --model nufft; done
cmp_img tv_block1 tv_block2; cmp_img tv_block1 tv_nufft1
log "defaults on the CPU (16 threads), nufft"
one tv_cpu --device cpu --model nufft
cmp_img tv_cpu tv_nufft1; cmp_img tv_cpu tv_nufft2; cmp_img tv_cpu tv_block1
log "done"
