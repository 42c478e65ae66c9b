#!/usr/bin/env bash
# mrirecon SENSE CG against BART's `pics -l2` on the same simulated 8-coil scan, the same coil maps,
# the same lambda and the same number of CG iterations (docs/RECON.md, "Comparison with BART").
# Needs `bart` on PATH (or BART=/path/to/bart) and a build with the test tools (tool_cfl_psnr);
# neither the build nor the test suite needs BART.
#
#   bash scripts/compare_bart.sh [BUILD_DIR (default build)] [OUT_DIR (default bart_compare)]
#   environment: BART (bart binary), ITERS (60), LAMBDAS ("0 1e-5"), SNR (noiseless when empty),
#                THREADS (2; mrirecon's threads, BART takes OMP_NUM_THREADS)
#
# Conventions (docs/FORMAT.md section 6): the data go to BART with `convert --bart-scale` (x sqrt(N),
# N = voxels, BART's unitary NUFFT), so BART's images are in mrirecon's units; BART solves
# (A^H A + lambda_b I) x = A^H y with A = the unitary NUFFT, mrirecon (E^H E + lambda I) x = E^H d
# with E = F/N: the same minimiser for lambda_b = N lambda. `-w 1` switches BART's automatic data
# scaling off (it would change the meaning of lambda). BART's model is a Dirac basis: mrirecon runs
# with --basis dirac (the same model, its default) and with --basis box; `-l2` is Tikhonov on the
# image, so mrirecon runs with --reg identity (its default is the gradient) and the given lambda (not
# the automatic one). --force: a re-run replaces the earlier run's folders.
set -eu
build=${1:-build}
out=${2:-bart_compare}
bart=${BART:-bart}
iters=${ITERS:-60}
lambdas=${LAMBDAS:-0 1e-5}
threads=${THREADS:-2}
bin=$build/mrirecon
psnr=$build/tool_cfl_psnr
command -v "$bart" >/dev/null 2>&1 || { echo "compare_bart: '$bart' not found (set BART=/path/to/bart)" >&2; exit 77; }
[ -x "$bin" ] && [ -x "$psnr" ] || { echo "compare_bart: build $build first (mrirecon and tests/tool_cfl_psnr)" >&2; exit 2; }
mkdir -p "$out"
noise=()
[ -n "${SNR:-}" ] && noise=(--snr "$SNR")

echo "# $(date -u +%F), $("$bin" --version | head -1), BART $("$bart" version), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
scan=$out/scan8.h5
cmd=("$bin" phantom -o "$scan" --dim 2 --matrix 128 --traj radial --spokes 201 --readout 256 --coils 8 "${noise[@]}" -q)
echo "\$ ${cmd[*]}"
"${cmd[@]}" >/dev/null
cmd=("$bin" convert "$scan" "$out/b" --bart-scale -q)
echo "\$ ${cmd[*]}"
"${cmd[@]}" >/dev/null
n=$((128 * 128))
printf '%-8s %-24s %12s %12s %10s %s\n' lambda method psnr_bl_db psnr_img_db seconds rel_l2_vs_dirac
for lam in $lambdas; do
  lb=$(awk -v l="$lam" -v n="$n" 'BEGIN { printf "%.9g", l * n }')
  for basis in dirac box; do
    dir=$out/mrirecon_${basis}_$lam
    cmd=("$bin" recon "$scan" -o "$dir" --sens file --basis "$basis" --reg identity --lambda "$lam" --iters "$iters" --threads "$threads" --nifti none --force -q)
    echo "\$ ${cmd[*]}" >&2
    t0=$(date +%s.%N)
    "${cmd[@]}" >/dev/null
    t1=$(date +%s.%N)
    bl=$(grep '^cg,bandlimited,' "$dir/metrics.csv" | cut -d, -f4)
    im=$(grep '^cg,image,' "$dir/metrics.csv" | cut -d, -f4)
    printf '%-8s %-24s %12.4f %12.4f %10.2f\n' "$lam" "mrirecon --basis $basis" "$bl" "$im" "$(echo "$t1 - $t0" | bc)"
  done
  img=$out/bart_$lam
  cmd=("$bart" pics -l2 -r "$lb" -i "$iters" -w 1 -t "$out/b_traj" "$out/b_ksp" "$out/b_sens" "$img")
  echo "\$ ${cmd[*]}" >&2
  t0=$(date +%s.%N)
  "${cmd[@]}" >/dev/null 2>&1
  t1=$(date +%s.%N)
  m=$("$psnr" "$img" "$scan" "$out/mrirecon_dirac_$lam/image_cg.h5")
  printf '%-8s %-24s %12.4f %12.4f %10.2f %s\n' "$lam" "bart pics -l2 -r $lb" "$(echo "$m" | awk '/^bandlimited/ {print $3}')" \
    "$(echo "$m" | awk '/^image/ {print $3}')" "$(echo "$t1 - $t0" | bc)" "$(echo "$m" | awk '/^relative/ {print $2}')"
done
