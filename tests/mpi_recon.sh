#!/usr/bin/env bash
# `mpirun -n P mrirecon recon` (recon/cluster/mpi_recon.h: Q and F^H d split over the ranks, CG on rank 0)
# against the one-process recon, on one host (MPI builds only; 77 without mpirun):
#  * 2 and 3 ranks; 2D and 3D; one coil and 8-coil SENSE (phantom --coils); --method all;
#  * the portable CPU kernel (MR_CPU_KERNEL=portable): the split sums are bit-identical to the
#    one-process ones (recon/cluster/mpi_split.h), so every image must be bit-identical (tool_imgcmp);
#  * the machine's CPU kernel (AVX2/AVX-512 "powers"): Q equal within float32 rounding (relative L2
#    about 5e-8), which CG amplifies with its iterations (as switching the CPU kernel in one process
#    does); with 10 iterations the CG image must agree within relative L2 1e-4 and the gridding images
#    (rank 0 alone) bit for bit;
#  * rank 0 alone logs and writes; a damaged input, and --device gpu without a GPU: clear error, exit
#    status 1 from mpirun, no hang (timeout), nothing written.
# Usage: bash mpi_recon.sh MRIRECON SCRATCH
. "$(dirname "$0")/batch_lib.sh"
. "$(dirname "$0")/mpirun_lib.sh"
CMP=$(dirname "$MR")/tool_imgcmp
[ -x "$CMP" ] || fail "$CMP not built"

"$MR" phantom -o "$S/in/p2.h5" --matrix 40 --spokes 50 --readout 80 --snr 30 -q > /dev/null || fail "phantom 2D"
"$MR" phantom -o "$S/in/p2c.h5" --matrix 32 --spokes 40 --readout 64 --coils 8 --snr 30 -q > /dev/null ||
  fail "phantom 2D coils"
"$MR" phantom -o "$S/in/p3.h5" --dim 3 --matrix 14 --spokes 250 --readout 28 --snr 30 -q > /dev/null ||
  fail "phantom 3D"
"$MR" phantom -o "$S/in/p3c.h5" --dim 3 --matrix 12 --spokes 200 --readout 24 --coils 8 --snr 30 -q > /dev/null ||
  fail "phantom 3D coils"

# same REF OUT TOL WHAT: every image of REF in OUT; the iterative methods' images within TOL ("" =
# bit-identical), the gridding images bit-identical
same() {
  local ref=$1 out=$2 tol=$3 what=$4 f n=0
  for f in "$ref"/image_*.h5; do
    local b=${f##*/}
    [ -s "$out/$b" ] || fail "$what: $out/$b missing"
    if { [ "$b" = image_cg.h5 ] || [ "$b" = image_iterative.h5 ]; } && [ -n "$tol" ]; then
      "$CMP" "$f" "$out/$b" "$tol" || fail "$what: $b differs from the one-process image by more than $tol"
    else
      "$CMP" "$f" "$out/$b" || fail "$what: $b not bit-identical to the one-process image"
    fi
    n=$((n + 1))
  done
  [ $n = 4 ] || fail "$what: expected 4 images, found $n"
}

# run_case KERNEL ITERS TOL: every scan over 2 and 3 ranks against one process
run_case() {
  local kernel=$1 iters=$2 tol=$3 scan p ref out
  for scan in p2 p2c p3 p3c; do
    # --q-cache off: every run computes Q (a cached Q would skip the split under test); --device cpu:
    # the CPU kernels on both sides (on a GPU machine auto would pick a GPU engine for one process)
    ref=$S/one-$kernel-$scan
    MR_CPU_KERNEL=$kernel "$MR" recon "$S/in/$scan.h5" -o "$ref" --method all --iters "$iters" --threads 1 --q-cache off --device cpu -q \
      > /dev/null || fail "one-process recon of $scan"
    for p in 2 3; do
      out=$S/mpi$p-$kernel-$scan
      MR_CPU_KERNEL=$kernel mpi $p "$MR" recon "$S/in/$scan.h5" -o "$out" --method all --iters "$iters" --q-cache off --device cpu \
        --threads 1 -v > "$out.log" 2>&1 || {
        cat "$out.log"
        fail "$scan over $p ranks ($kernel kernel) failed"
      }
      [ "$(grep -c "split over $p MPI ranks" "$out.log")" = 1 ] || fail "$scan: rank 0 did not log the split once"
      grep -q "split Q over $p ranks" "$out.log" || fail "$scan: Q was not split over $p ranks"
      grep -q "split F^H d over $p ranks" "$out.log" || fail "$scan: F^H d was not split over $p ranks"
      [ "$(grep -c '^method ' "$out.log")" = 1 ] || fail "$scan: the result table was printed more than once"
      same "$ref" "$out" "$tol" "$scan, $p ranks, $kernel kernel"
      for f in report.json metrics.csv convergence.png compare.png; do
        [ -s "$out/$f" ] || fail "$scan, $p ranks: $f missing"
      done
      # the report names what the ranks ran, not rank 0's own engine
      grep -q "\"sums\": \"MPI split over $p ranks: cpu [a-z0-9]* kernels on every rank\"" "$out/report.json" ||
        fail "$scan, $p ranks: report.json does not name the split's kernels: $(grep '"sums"' "$out/report.json")"
      ok "$scan over $p ranks ($kernel kernel, $iters iterations): images equal to the one-process ones (${tol:-bit for bit})"
    done
  done
}
run_case portable 60 ""
run_case auto 10 1e-4
# 8 coils: one F^H d request per coil
n=$(grep -c "split F^H d over 2 ranks" "$S/mpi2-auto-p3c.log")
[ "$n" = 8 ] || fail "8-coil SENSE: $n F^H d requests, expected 8"
ok "8-coil SENSE: one split F^H d per coil"

# errors: damaged input, a GPU that is not there; every rank ends, nothing written
head -c 4000 "$S/in/p2.h5" > "$S/in/damaged.h5"
mpi 2 "$MR" recon "$S/in/damaged.h5" -o "$S/bad" > "$S/bad.log" 2>&1
rc=$?
[ $rc = 124 ] && fail "damaged input: mpirun hung (timeout)"
[ $rc != 0 ] || fail "damaged input: exit status 0"
grep -q 'mrirecon recon: .*damaged.h5' "$S/bad.log" || { cat "$S/bad.log"; fail "damaged input: no message naming the file"; }
[ -e "$S/bad" ] && fail "damaged input: $S/bad was created"
ok "damaged input over 2 ranks: exit status $rc, message names the file, nothing written"
if ! nvidia-smi -L 2> /dev/null | grep -q "^GPU"; then
  mpi 2 "$MR" recon "$S/in/p2.h5" -o "$S/nogpu" --device gpu > "$S/nogpu.log" 2>&1
  rc=$?
  [ $rc != 0 ] && [ $rc != 124 ] || fail "--device gpu without a GPU: exit status $rc"
  grep -q 'no usable GPU' "$S/nogpu.log" || { cat "$S/nogpu.log"; fail "--device gpu: no clear message"; }
  [ -e "$S/nogpu" ] && fail "--device gpu: $S/nogpu was created"
  ok "--device gpu without a GPU over 2 ranks: exit status $rc, nothing written"
fi

echo "mpi_recon: all checks passed in $((SECONDS - t0)) s"
