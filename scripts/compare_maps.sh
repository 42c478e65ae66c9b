#!/usr/bin/env bash
# Coil maps estimated by mrirecon (ESPIRiT, the default of --sens estimate; Walsh/Inati) against BART's
# `ecalib -m 1`, each used by mrirecon's own SENSE (--sens-maps), on BART-made 8-coil radial scans
# (docs/COILMAPS.md, "Against BART's ecalib"). Needs `bart` on PATH (or BART=...), python3 with numpy,
# h5dump, and a build with the test tools (tool_sens_maps); neither the build nor the tests need BART.
#
#   bash scripts/compare_maps.sh [BUILD_DIR (default build)] [OUT_DIR (default maps_compare)]
#   environment: SPOKES ("201 64"), SNRS ("inf 20": dB, inf = noiseless), LAMBDAS (--lambda-rel values,
#                "0 0.0003 0.001 0.003 0.01 0.03 0.1 0.3"), THREADS (2)
#
# Scans: `bart traj -r -x 256 -y S` scaled by 0.5 (128^2, readout 2x oversampled), `bart phantom -s 8 -k
# -t` (the Shepp-Logan phantom seen by BART's 8 analytic coils), complex Gaussian noise added here (seed
# 1) at SNR = 10 log10(mean |d|^2 / (2 sigma^2)) (the definition of `mrirecon phantom --snr`).
# BART's maps: `bart nufft -i -d 128:128:1` (the inverse NUFFT), `bart fft -u 3`, `bart ecalib -m 1`.
# Score: PSNR of |image| against |rho_bl| x ||S_true||, rho_bl the band-limited phantom (iDFT of `bart
# phantom -k -x 128`) and S_true BART's analytic coil maps (`bart phantom -S 8 -x 128`): the image every
# unit-norm map set reconstructs; the magnitude image is scaled by the least-squares factor first
# (BART's k-space units are not ours). For each map set the best --lambda-rel of LAMBDAS is reported, and
# the PSNR at the lambda best for BART's maps.
set -eu
build=${1:-build}
out=${2:-maps_compare}
bart=${BART:-bart}
spokes_list=${SPOKES:-201 64}
snrs=${SNRS:-inf 20}
lambdas=${LAMBDAS:-0 0.0003 0.001 0.003 0.01 0.03 0.1 0.3}
threads=${THREADS:-2}
bin=$build/mrirecon
tool=$build/tool_sens_maps
command -v "$bart" >/dev/null 2>&1 || { echo "compare_maps: '$bart' not found (set BART=/path/to/bart)" >&2; exit 77; }
[ -x "$bin" ] && [ -x "$tool" ] || { echo "compare_maps: build $build first (mrirecon, tests/tool_sens_maps)" >&2; exit 2; }
mkdir -p "$out"
py=$out/helper.py
cat >"$py" <<'EOF'
import sys
import numpy as np

def readcfl(name):
    with open(name + ".hdr") as f:
        f.readline()
        dims = [int(x) for x in f.readline().split()]
    return np.fromfile(name + ".cfl", dtype=np.complex64, count=int(np.prod(dims))).reshape(dims, order="F")

def writecfl(name, a):
    with open(name + ".hdr", "w") as f:
        f.write("# Dimensions\n" + " ".join(str(x) for x in a.shape) + "\n")
    np.asarray(a, dtype=np.complex64).flatten(order="F").tofile(name + ".cfl")

cmd = sys.argv[1]
if cmd == "noise":  # noise IN OUT SNR_DB
    k = readcfl(sys.argv[2])
    snr = float(sys.argv[4])
    if np.isfinite(snr):
        sigma = np.sqrt(np.mean(np.abs(k) ** 2) / (2 * 10 ** (snr / 10)))
        rng = np.random.default_rng(1)
        k = k + sigma * (rng.standard_normal(k.shape) + 1j * rng.standard_normal(k.shape))
    writecfl(sys.argv[3], k)
elif cmd == "ref":  # ref RHO SENS OUT.npy
    rho = np.abs(readcfl(sys.argv[2]).reshape(128, 128, order="F"))
    s = readcfl(sys.argv[3]).reshape(128, 128, -1, order="F")
    np.save(sys.argv[4], rho * np.sqrt(np.sum(np.abs(s) ** 2, axis=2)))
elif cmd == "psnr":  # psnr REF.npy IMAGE.bin  (the h5dump of /image: [y][x][2] float32)
    ref = np.load(sys.argv[2]).T  # [y][x]
    x = np.fromfile(sys.argv[3], dtype="<f4").reshape(128, 128, 2)
    m = np.hypot(x[..., 0], x[..., 1])
    a = np.sum(m * ref) / np.sum(m * m)
    print("%.3f" % (20 * np.log10(ref.max() / np.sqrt(np.mean((a * m - ref) ** 2)))))
EOF
echo "# $(date -u +%F), $("$bin" --version | head -1), BART $("$bart" version), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$bart" phantom -k -x 128 "$out/kc" >/dev/null
"$bart" fft -i 3 "$out/kc" "$out/rho" >/dev/null
"$bart" phantom -S 8 -x 128 "$out/strue" >/dev/null
python3 "$py" ref "$out/rho" "$out/strue" "$out/ref.npy"
printf '%-7s %-5s %-8s %12s %10s %14s %12s\n' spokes snr maps best_psnr_db best_rel psnr_at_bart_rel maps_seconds
for S in $spokes_list; do
  "$bart" traj -r -x 256 -y "$S" "$out/t0" >/dev/null
  "$bart" scale 0.5 "$out/t0" "$out/traj$S" >/dev/null
  "$bart" phantom -s 8 -k -t "$out/traj$S" "$out/k$S" >/dev/null
  for snr in $snrs; do
    name=$out/s${S}_$snr
    cp "$out/traj$S.cfl" "${name}_traj.cfl"
    cp "$out/traj$S.hdr" "${name}_traj.hdr"
    python3 "$py" noise "$out/k$S" "${name}_ksp" "$snr"
    # BART's maps
    "$bart" nufft -i -d 128:128:1 "${name}_traj" "${name}_ksp" "$name.img" >/dev/null 2>&1
    "$bart" fft -u 3 "$name.img" "$name.kg" >/dev/null
    "$bart" ecalib -m 1 "$name.kg" "$name.ecal" >/dev/null 2>&1
    declare -A secs=()
    for maps in espirit walsh bart; do
      m=espirit
      [ "$maps" = walsh ] && m=walsh
      [ "$maps" = bart ] && m=cfl:$name.ecal
      secs[$maps]=$("$tool" "${name}_ksp.hdr" "$name.$maps.h5" --method "$m" --threads "$threads" | grep -o '[0-9.]* s (best' | cut -d' ' -f1)
      [ "$maps" = bart ] && secs[$maps]=- # read from BART's file: its time is not measured here
    done
    declare -A best=() bestl=() at=()
    for maps in bart espirit walsh; do
      best[$maps]=-1
      for l in $lambdas; do
        dir=$out/r_${S}_${snr}_${maps}_$l
        "$bin" recon "${name}_ksp.hdr" -o "$dir" --sens-maps "$name.$maps.h5" --lambda-rel "$l" --threads "$threads" \
          --nifti none --force -q >/dev/null
        h5dump -d /image -b LE -o "$dir/image.bin" "$dir/image_cg.h5" >/dev/null
        p=$(python3 "$py" psnr "$out/ref.npy" "$dir/image.bin")
        eval "psnr_${maps}_${l//./_}=$p"
        if awk -v a="$p" -v b="${best[$maps]}" 'BEGIN { exit !(a > b) }'; then
          best[$maps]=$p
          bestl[$maps]=$l
        fi
      done
    done
    for maps in bart espirit walsh; do
      v=psnr_${maps}_${bestl[bart]//./_}
      printf '%-7s %-5s %-8s %12s %10s %14s %12s\n' "$S" "$snr" "$maps" "${best[$maps]}" "${bestl[$maps]}" "${!v}" \
        "${secs[$maps]}"
    done
  done
done
