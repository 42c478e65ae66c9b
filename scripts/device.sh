#!/usr/bin/env bash
# The GPU machine's runs (the `run` device tool), one call, modes comma-separated:
#   tests     every GPU test program (scripts/device/lib.sh GPU_TESTS), once
#   book      the book problem (128^3 kooshball, 1078 x 264 = 284,592 samples, 30 dB) end to end with
#             `recon --device gpu`: the defaults (total variation, 50 ADMM iterations x 8 CG, model auto), the
#             exact model, the quadratic prior (--method cg, 60 iterations) with each model; each twice
#             (a computed and a cached Q); GPU memory peak from nvidia-smi
#   big       256^3 kooshball (4312 x 528 = 2,276,736 samples): defaults, --method cg, 8 coils SENSE (cg and
#             defaults); GPU memory peaks
#   big3      256^3, one coil: --method cg three times (the median for issue 21's <= 2.0 s H200 / 2.5 s H100
#             targets), the defaults once
#   field     the book problem with readout timing (8 us dwell, TE 1 ms) and a field (20 Hz + linear +-100 Hz),
#             against the same scan without a field, through `recon --device gpu`: --method cg and the
#             defaults with the model auto (the field's segments on the NUFFT tier), --model exact (the exact
#             tier), --fieldmap-model off (uncorrected), --check (the model error measured); issue 22's target:
#             the fast model <= 3x the field-free reconstruction
#   coils32   the book trajectory with 32 coils (30 dB, maps in the file: 660 MB): --method cg and the
#             defaults, SENSE with the file's maps (issue 21's read-once target: <= 1.5 s wall with CG): CG three
#             times, once with the GPU released at the process's end (MR_GPU_RELEASE=exit), the defaults once
#   bookcg    the book problem with --method cg three times, where the wall time outside report.json's
#             `total` goes (process start: `mrirecon --version` with and without the GOMP_SPINCOUNT re-exec,
#             10 each; the arrival of the first and last log lines; the memory release after `total`)
#   precond   the defaults (ADMM) with the circulant preconditioner against MR_PRECOND=off: book problem with the
#             NUFFT (twice) and the exact model, their images compared with each other and with a long exact run
#             (400 ADMM iterations); 256^3 defaults on / off / on (wall, stages, GPU memory peak)
#   floor     where the NUFFT-vs-exact image difference comes from: the book problem with the defaults and with
#             --method cg, each with the NUFFT at 1e-6 and 1e-12 (float64) and the exact sums in tf32x3 (1e-6) and
#             fp64 (1e-12); the images compared pairwise (two models 1e-12 apart give the float32 solve's floor)
#   column    the Toeplitz normal's transforms by the line kernels on every axis (gpu/toeplitz_column.cu, the
#             default) against the fused slowest axis with cuFFT's slab transforms (MR_GPU_TOEPLITZ=column) and
#             cuFFT alone (=cufft): book problem and 256^3 (one coil and 8 coils), --method cg twice each, wall and
#             stages, the images compared; the defaults once each with the line kernels
#   maps      ESPIRiT coil maps for the book trajectory with 8 coils (tool_sens_maps, 3 repetitions) and the
#             8-coil book scan end to end with the defaults
# The runs of past investigations are modes too, each a script of its own in scripts/device/ (its header
# says what it measures; docs/BENCHMARKS.md names the commit each result came from), given alone with its
# arguments: bash scripts/device.sh NAME [ARGS]
#   2gpu, cluster   two GPUs: scaling of the split sums; MPI ranks with a GPU each (kind nvidia-h200-x2)
#   accel, fp16, split   the engines of the exact sums: precisions, the split check
#   upload   the trajectory upload race behind the intermittent wrong Q (test_gpu_gemm repeated; the split Q
#            without run_part's barrier); it replaced `race` (compute-sanitizer runs, at commit 024509d)
#   ops, run, final  older end-to-end and verification runs; field-tool  the field models by tool_field_recon
# Build: CUDA sm_90, -Werror, from scratch in $BUILD (default /tmp/b). A copy of xxhash.h in .dev/xxhash
# (carried: the machine has no libxxhash-dev) is used when present. Key results go to $OUT/summary.txt,
# every log to $OUT/logs.tgz.
#   bash scripts/device.sh tests,book
set -uo pipefail
cd "$(dirname "$0")/.."
MODES="${1:-tests}"
if [ "$MODES" != lib ] && [ -f "scripts/device/$MODES.sh" ]; then # a mode with a script of its own
  shift
  exec bash "scripts/device/$MODES.sh" "$@"
fi
L=/tmp/mr-device-logs
. scripts/device/lib.sh
build_tree
bin="$B/mrirecon"

# gpu_peak LABEL command...: the command, with the GPU memory in use sampled every 50 ms (its peak to the
# summary, in MiB, over what was in use before)
gpu_peak() {
  local label=$1 base
  shift
  base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 >"$L/mem.txt" 2>/dev/null &
  local mon=$!
  "$@"
  kill $mon 2>/dev/null
  wait $mon 2>/dev/null
  echo "$label: GPU memory peak $(sort -n "$L/mem.txt" | tail -1) MiB (in use before: $base MiB)" >>"$S"
}

# scan NAME: the standard phantom NAME made once per machine (a call's later modes reuse it): book (128^3
# kooshball, 1078 x 264 = 284,592 samples), big (256^3, 4312 x 528 = 2,276,736 samples), big8 (big with 8 coils
# and their maps); 30 dB each
scan() {
  local args
  case $1 in
  book) args=(--matrix 128 --spokes 1078 --readout 264) ;;
  big) args=(--matrix 256 --spokes 4312 --readout 528) ;;
  big8) args=(--matrix 256 --spokes 4312 --readout 528 --coils 8) ;;
  esac
  [ -f "/tmp/$1.h5" ] || "$bin" phantom -o "/tmp/$1.h5" --dim 3 --traj kooshball --snr 30 "${args[@]}" -q >>"$S" 2>&1
}

# img_cmp LABEL A B: the relative L2 difference of two images into the summary
img_cmp() { echo "  $1: $("$B/tool_imgcmp" "$2" "$3" 1e-4 2>&1 | head -1)" >>"$S"; }

for mode in ${MODES//,/ }; do
  case $mode in
  tests)
    gpu_tests "" "FAIL|checks,|CHECK failed|skipped|SKIP"
    ;;
  book)
    log "book phantom"
    scan book
    for i in 1 2; do
      gpu_peak "defaults ($i)" run_recon "book, defaults (tv, admm 50 x 8, model auto) run $i" /tmp/bk_def$i /tmp/book.h5 \
        --device gpu --q-cache /tmp/qc --force -q
      gpu_peak "exact ($i)" run_recon "book, tv, --model exact run $i" /tmp/bk_ex$i /tmp/book.h5 --device gpu \
        --model exact --q-cache /tmp/qc --force -q
      gpu_peak "cg auto ($i)" run_recon "book, --method cg, model auto run $i" /tmp/bk_cg$i /tmp/book.h5 --device gpu \
        --method cg --q-cache /tmp/qc --force -q
      gpu_peak "cg exact ($i)" run_recon "book, --method cg --model exact run $i" /tmp/bk_cgex$i /tmp/book.h5 \
        --device gpu --method cg --model exact --q-cache /tmp/qc --force -q
    done
    for d in /tmp/bk_def2 /tmp/bk_ex2; do
      python3 - "$d/report.json" >>"$S" 2>&1 <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); m = r["methods"][0]
print(sys.argv[1], "solver", m.get("solver"), "iterations", m["iterations"], "normal applications",
      m.get("normal_applications"), "time_solve_s %.3f" % m["time_solve_s"], "model", r["settings"].get("model"),
      r["settings"].get("model_description"))
EOF
    done
    ;;
  big)
    log "256^3 phantoms"
    scan big
    gpu_peak "256 defaults" run_recon "256^3, defaults" /tmp/big_def /tmp/big.h5 --device gpu --q-cache off -q
    gpu_peak "256 cg" run_recon "256^3, --method cg" /tmp/big_cg /tmp/big.h5 --device gpu --method cg --q-cache off -q
    scan big8
    gpu_peak "256 8 coils cg" run_recon "256^3, 8 coils SENSE, --method cg" /tmp/big8_cg /tmp/big8.h5 --device gpu \
      --method cg --q-cache off -q
    gpu_peak "256 8 coils defaults" run_recon "256^3, 8 coils SENSE, defaults" /tmp/big8_def /tmp/big8.h5 \
      --device gpu --q-cache off -q
    ;;
  big3)
    log "256^3 phantom"
    scan big
    for i in 1 2 3; do
      gpu_peak "256 cg ($i)" run_recon "256^3, --method cg run $i" /tmp/big_cg$i /tmp/big.h5 --device gpu --method cg \
        --q-cache off -q
    done
    gpu_peak "256 defaults" run_recon "256^3, defaults" /tmp/big3_def /tmp/big.h5 --device gpu --q-cache off -q
    ;;
  field)
    log "book phantoms with and without a field"
    fcommon=(--dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 --dwell 8 --te 1 --snr 30 -q)
    "$bin" phantom -o /tmp/book_nf.h5 "${fcommon[@]}" >>"$S" 2>&1
    "$bin" phantom -o /tmp/book_f.h5 "${fcommon[@]}" --fieldmap c=20,x=150,y=50 >>"$S" 2>&1
    for i in 1 2; do
      run_recon "no field, --method cg run $i" /tmp/fnf_cg$i /tmp/book_nf.h5 --device gpu --method cg --q-cache off -q
      run_recon "field, --method cg (model auto) run $i" /tmp/ff_cg$i /tmp/book_f.h5 --device gpu --method cg \
        --q-cache off -q
    done
    run_recon "field, --method cg --model exact (exact tier)" /tmp/ff_cgex /tmp/book_f.h5 --device gpu --method cg \
      --model exact --q-cache off -q
    run_recon "field, --method cg --fieldmap-model off (uncorrected)" /tmp/ff_off /tmp/book_f.h5 --device gpu \
      --method cg --fieldmap-model off --q-cache off -q
    run_recon "field, --method cg --check (model error measured)" /tmp/ff_chk /tmp/book_f.h5 --device gpu \
      --method cg --check --q-cache off -q
    run_recon "no field, defaults" /tmp/fnf_def /tmp/book_nf.h5 --device gpu --q-cache off -q
    run_recon "field, defaults" /tmp/ff_def /tmp/book_f.h5 --device gpu --q-cache off -q
    for d in /tmp/ff_cg2 /tmp/ff_cgex /tmp/ff_chk /tmp/ff_def; do
      python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); s = r["settings"]; print(sys.argv[1], "model", s.get("model"), "|", s.get("model_why"), "| field", json.dumps(s.get("field")))' "$d/report.json" >>"$S" 2>&1
    done
    ;;
  coils32)
    log "book trajectory, 32 coils"
    "$bin" phantom -o /tmp/book32.h5 --dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 --coils 32 \
      --snr 30 --no-truth -q >>"$S" 2>&1
    ls -l /tmp/book32.h5 | awk '{print "book32.h5: " $5 " bytes"}' >>"$S"
    for i in 1 2 3; do
      gpu_peak "book 32 coils cg ($i)" run_recon "book 32 coils, --method cg run $i" /tmp/bk32_cg$i /tmp/book32.h5 \
        --device gpu --method cg --q-cache off -q
    done
    MR_GPU_RELEASE=exit run_recon "book 32 coils, --method cg, MR_GPU_RELEASE=exit" /tmp/bk32_cgx /tmp/book32.h5 \
      --device gpu --method cg --q-cache off -q
    gpu_peak "book 32 coils defaults" run_recon "book 32 coils, defaults" /tmp/bk32_def /tmp/book32.h5 --device gpu \
      --q-cache off -q
    ;;
  precond)
    log "the preconditioned ADMM (defaults) against MR_PRECOND=off: book problem, NUFFT and exact model"
    scan book
    pc_cmp() { img_cmp "$1 vs $2" "/tmp/pc_$1/image_iterative.h5" "/tmp/pc_$2/image_iterative.h5"; }
    run_recon "reference: exact, 400 ADMM iterations" /tmp/pc_ref /tmp/book.h5 --device gpu --model exact --q-cache off -q --force -n 400 \
      --solver admm
    for pc in on off; do
      for i in 1 2; do MR_PRECOND=$pc run_recon "book defaults, nufft, precond $pc ($i)" /tmp/pc_n${pc}$i /tmp/book.h5 \
        --device gpu --model nufft --q-cache off -q --force; done
      MR_PRECOND=$pc run_recon "book defaults, exact, precond $pc" /tmp/pc_e$pc /tmp/book.h5 --device gpu --model exact \
        --q-cache off -q --force
      pc_cmp n${pc}1 n${pc}2; pc_cmp n${pc}1 e$pc; pc_cmp n${pc}1 ref; pc_cmp e$pc ref
    done
    log "256^3 defaults, precond on and off"
    scan big
    for pc in on off on; do
      MR_PRECOND=$pc gpu_peak "256 defaults precond $pc" run_recon "256^3 defaults, precond $pc" /tmp/pc_big$pc /tmp/big.h5 \
        --device gpu --q-cache off -q --force
    done
    ;;
  bookcg)
    log "book --method cg: the time outside report.json's total"
    scan book
    python3 - "$bin" >>"$S" 2>&1 <<'EOF'
import json, os, re, statistics, subprocess, sys, time
bin_ = sys.argv[1]
for label, extra in (("with the re-exec", {}), ("without (GOMP_SPINCOUNT set)", {"GOMP_SPINCOUNT": "10000"})):
    ts = []
    for _ in range(10):
        t0 = time.monotonic()
        subprocess.run([bin_, "--version"], stdout=subprocess.DEVNULL, env=dict(os.environ, **extra))
        ts.append(time.monotonic() - t0)
    print("mrirecon --version %s: median %.4f s (min %.4f, max %.4f)" % (label, statistics.median(ts), min(ts), max(ts)))
args = [bin_, "recon", "/tmp/book.h5", "-o", "/tmp/bookcg", "--device", "gpu", "--method", "cg", "--q-cache", "off",
        "--force", "-v"]
for i in range(3):
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first = last = None
    released = resolved = "?"
    for line in p.stderr:
        t = time.monotonic() - t0
        first = t if first is None else first
        r_ = re.search(r"device resolved in ([0-9.]+) s", line)
        if r_:
            resolved = "%s s (its line at %.3f s)" % (r_.group(1), t)
        m = re.search(r"memory released in ([0-9.]+) s", line)
        if m:
            released = m.group(1)
        else:
            last = t
    p.wait()
    wall = time.monotonic() - t0
    r = json.load(open("/tmp/bookcg/report.json")); t = r["timings_s"]
    print("book cg run %d: exit %d, wall %.3f s, report total %.3f (device_init %.3f, solve %.3f, write %.3f); first log "
          "line %.3f s, last before the release %.3f s; released in %s s; device resolved in %s"
          % (i + 1, p.returncode, wall, t["total"], t["device_init"], t["solve"], t["write"], first, last, released,
             resolved))
EOF
    ;;
  floor)
    log "the float32 solve's floor: book problem, models at 1e-6 and 1e-12"
    scan book
    for meth in defaults cg; do
      ma=(); [ $meth = cg ] && ma=(--method cg)
      f=image_iterative.h5; [ $meth = cg ] && f=image_cg.h5
      run_recon "book $meth, nufft 1e-6" /tmp/fl_${meth}_n6 /tmp/book.h5 --device gpu --model nufft "${ma[@]}" --q-cache off -q --force
      run_recon "book $meth, nufft 1e-12" /tmp/fl_${meth}_n12 /tmp/book.h5 --device gpu --model nufft --nufft-tol 1e-12 "${ma[@]}" --q-cache off -q --force
      run_recon "book $meth, exact tf32x3" /tmp/fl_${meth}_e6 /tmp/book.h5 --device gpu --model exact "${ma[@]}" --q-cache off -q --force
      run_recon "book $meth, exact fp64" /tmp/fl_${meth}_e12 /tmp/book.h5 --device gpu --model exact --precision fp64 "${ma[@]}" --q-cache off -q --force
      for pr in "n6 e6" "n12 e12" "n6 n12" "e6 e12" "n6 e12" "e6 n12"; do
        set -- $pr
        img_cmp "$meth: $1 vs $2" "/tmp/fl_${meth}_$1/$f" "/tmp/fl_${meth}_$2/$f"
      done
    done
    ;;
  column)
    log "the Toeplitz normal's line kernels on every axis against the fused slow axis with cuFFT's slabs and cuFFT alone"
    scan book
    scan big
    scan big8
    for v in lines column cufft lines column cufft; do
      [ $v = lines ] && unset MR_GPU_TOEPLITZ || export MR_GPU_TOEPLITZ=$v
      run_recon "book cg, $v" /tmp/co_bcg_$v /tmp/book.h5 --device gpu --method cg --q-cache off -q --force
      run_recon "256^3 cg, $v" /tmp/co_gcg_$v /tmp/big.h5 --device gpu --method cg --q-cache off -q --force
      run_recon "256^3 8 coils cg, $v" /tmp/co_g8_$v /tmp/big8.h5 --device gpu --method cg --q-cache off -q --force
    done
    unset MR_GPU_TOEPLITZ
    run_recon "book defaults, lines" /tmp/co_bdef_lines /tmp/book.h5 --device gpu --q-cache off -q --force
    run_recon "256^3 defaults, lines" /tmp/co_gdef_lines /tmp/big.h5 --device gpu --q-cache off -q --force
    run_recon "256^3 8 coils defaults, lines" /tmp/co_g8def_lines /tmp/big8.h5 --device gpu --q-cache off -q --force
    for r in bcg gcg g8; do
      img_cmp "$r lines vs column" "/tmp/co_${r}_lines/image_cg.h5" "/tmp/co_${r}_column/image_cg.h5"
      img_cmp "$r lines vs cufft" "/tmp/co_${r}_lines/image_cg.h5" "/tmp/co_${r}_cufft/image_cg.h5"
    done
    ;;
  maps)
    log "ESPIRiT maps, book trajectory, 8 coils (the target: <= 1 s)"
    "$bin" phantom -o /tmp/book8.h5 --dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264 --coils 8 \
      --snr 30 --no-truth -q >>"$S" 2>&1
    "$B/tool_sens_maps" /tmp/book8.h5 /tmp/book8_maps.h5 --gpu 0 --repeat 3 >>"$S" 2>&1
    gpu_peak "book 8 coils, defaults" run_recon "book 8 coils, defaults (ESPIRiT maps, tv)" /tmp/bk8 /tmp/book8.h5 \
      --device gpu --q-cache off -q
    ;;
  *)
    log "unknown mode $mode"
    ;;
  esac
done
log "done"
