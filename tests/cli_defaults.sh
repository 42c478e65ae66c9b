#!/usr/bin/env bash
# The defaults a newcomer meets (issue 14):
#  - `recon --method all` with no options ranks the default method (iterative: total variation) first
#    (within 0.2 dB of the best other method: CG with the quadratic prior, KB and bilinear gridding) on a
#    noisy undersampled scan,
#    with lambda chosen automatically from the scan's noise level (report.md/json say how);
#    --lambda-rel R gives lambda = R x normal_diagonal; --lambda and --lambda-rel exclude each other;
#    --lambda 0 on a noisy scan warns; a noiseless scan gets lambda 0; a scan that does not state its
#    noise (BART input) gets sigma estimated from the data (issue 20: within 15 % of the true sigma
#    x 48, the --bart-scale factor), said on stderr and in report.json, and a lambda > 0;
#  - a scan without truth (BART round trip at another intensity scale, --bart-scale): report.md has no
#    "nan" and no error maps, the PNG window comes from the image (not all white);
#  - output folders: a second run into a folder holding another run's outputs is refused (exit 2,
#    nothing changed); --force replaces exactly recon's files (a user's file stays);
#  - batch summary.md prints metrics with 2 decimals and seconds with 3.
#   bash tests/cli_defaults.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect(), csv()

json_num() { # FILE KEY -> the first number after "KEY":
  grep -o "\"$2\": [-0-9.e+]*" "$1" | head -1 | awk '{print $2}'
}

# ---- defaults on a noisy, 4x undersampled scan ----------------------------------------------------
expect 0 "phantom 48^2, 19 spokes, 20 dB" -- "$bin" phantom -o "$dir/noisy.h5" --matrix 48 --spokes 19 --snr 20 -q
expect 0 "recon --method all, defaults" -- "$bin" recon "$dir/noisy.h5" -o "$dir/all" --method all
for t in image bandlimited; do
  it=$(csv "$dir/all/metrics.csv" iterative $t)
  cg=$(csv "$dir/all/metrics.csv" cg $t)
  kb=$(csv "$dir/all/metrics.csv" gridding-kb $t)
  bl=$(csv "$dir/all/metrics.csv" gridding-bilinear $t)
  echo "PSNR vs $t: iterative $it, cg $cg, kb $kb, bilinear $bl"
  check "iterative first or within 0.2 dB of the best ($t truth)" \
    awk -v i="$it" -v c="$cg" -v k="$kb" -v b="$bl" 'BEGIN { m = k > b ? k : b; m = c > m ? c : m; exit !(i != "" && i + 0.2 >= m) }'
done
check "report.md says lambda was chosen automatically" grep -q "| lambda chosen by | automatic: " "$dir/all/report.md"
check "report.json has lambda_from" grep -q '"lambda_from": "automatic: ' "$dir/all/report.json"
check "report.json: basis dirac, reg tv" grep -q '"basis": "dirac"' "$dir/all/report.json"
grep -q '"reg": "tv"' "$dir/all/report.json" || { echo "FAIL: reg is not tv"; fail=1; }
lam=$(json_num "$dir/all/report.json" lambda)
check "automatic lambda > 0 on a noisy scan ($lam)" awk -v l="$lam" 'BEGIN { exit !(l > 0) }'
check "an info line names the choice" grep -q "info: lambda .* automatic: " "$dir/err"

expect 0 "--lambda-rel 0.05" -- "$bin" recon "$dir/noisy.h5" -o "$dir/rel" --lambda-rel 0.05 -q
lam=$(json_num "$dir/rel/report.json" lambda)
diag=$(json_num "$dir/rel/report.json" normal_diagonal)
check "--lambda-rel: lambda = 0.05 x normal_diagonal ($lam, $diag)" \
  awk -v l="$lam" -v d="$diag" 'BEGIN { r = l / (0.05 * d); exit !(r > 0.999999 && r < 1.000001) }'
expect 2 "--lambda with --lambda-rel" -- "$bin" recon "$dir/noisy.h5" -o "$dir/both" --lambda 1e-4 --lambda-rel 0.1
check "both: the message names the two options" grep -q -- "--lambda .* --lambda-rel" "$dir/err"
check "both: nothing created" test ! -e "$dir/both"
expect 0 "--lambda 0 on a noisy scan" -- "$bin" recon "$dir/noisy.h5" -o "$dir/zero" --lambda 0 -q
check "--lambda 0 on noisy data warns" grep -q "warning: the scan states noise .* but lambda = 0" "$dir/err"

expect 0 "noiseless phantom" -- "$bin" phantom -o "$dir/clean.h5" --matrix 32 -q
expect 0 "recon of a noiseless scan" -- "$bin" recon "$dir/clean.h5" -o "$dir/clean" --iters 10
check "noiseless: lambda 0, said so" grep -q "| lambda chosen by | automatic: 0, the scan states no noise |" "$dir/clean/report.md"
check "noiseless: no warning" test -z "$(grep warning "$dir/err")"

# ---- a scan without truth and without noise level, at another intensity scale (BART, x sqrt(N)) ------
expect 0 "convert to BART with --bart-scale" -- "$bin" convert "$dir/noisy.h5" "$dir/bart" --bart-scale -q
expect 0 "convert back (data now x 48)" -- "$bin" convert "$dir/bart_ksp.hdr" "$dir/scaled.h5" -q
expect 0 "recon --method all without truth" -- "$bin" recon "$dir/scaled.h5" -o "$dir/nt" --method all
check "unknown noise: sigma estimated, said so" grep -q "the scan states no noise level: sigma .* estimated from the data" "$dir/err"
check "unknown noise: report.json says where sigma came from" grep -q '"noise_sigma_from": "estimated"' "$dir/nt/report.json"
sig_true=$(json_num "$dir/all/report.json" noise_sigma)
sig_est=$(json_num "$dir/nt/report.json" noise_sigma)
check "unknown noise: estimated sigma $sig_est within 15 % of 48 x $sig_true" \
  awk -v e="$sig_est" -v t="$sig_true" 'BEGIN { r = e / (48 * t); exit !(r > 0.85 && r < 1.15) }'
lam_nt=$(json_num "$dir/nt/report.json" lambda)
check "unknown noise: automatic lambda > 0 ($lam_nt)" awk -v l="$lam_nt" 'BEGIN { exit !(l > 0) }'
check "report.md: no nan" test -z "$(grep -i 'nan' "$dir/nt/report.md")"
check "report.md: no error maps without truth" test -z "$(grep -i 'error map' "$dir/nt/report.md")"
check "report.md: the window comes from the image" grep -q "window \[0, [0-9.e+]*\] (the 99.5th percentile of |iterative|)" "$dir/nt/report.md"
if command -v python3 >/dev/null 2>&1; then
  # decode the 8-bit grey PNG (zlib + the five PNG row filters) and count white pixels
  python3 - "$dir/nt/image_iterative.png" >"$dir/png.txt" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
pos, idat, w, h = 8, b'', 0, 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, color = struct.unpack('>IIBB', body[:10])
        assert depth == 8 and color == 0, (depth, color)
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
raw, rows, prev = zlib.decompress(idat), [], bytearray(w)
for y in range(h):
    f, line = raw[y * (w + 1)], bytearray(raw[y * (w + 1) + 1:(y + 1) * (w + 1)])
    for x in range(w):
        a = line[x - 1] if x else 0
        b, c = prev[x], prev[x - 1] if x else 0
        p = a + b - c
        pr = a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else (b if abs(p - b) <= abs(p - c) else c)
        line[x] = (line[x] + [0, a, b, (a + b) // 2, pr][f]) & 255
    rows.append(line)
    prev = line
px = [v for r in rows for v in r]
print(sum(v == 255 for v in px) / len(px), sum(v > 0 for v in px) / len(px))
PY
  read -r white lit <"$dir/png.txt"
  echo "image_iterative.png without truth: $white of the pixels white, $lit not black"
  # the 99.5th percentile saturates about 0.5 % of the pixels (a window at the maximum: 1 pixel)
  check "the window is the robust percentile, not washed out (0.2 % .. 2 % white)" \
    awk -v w="$white" 'BEGIN { exit !(w >= 0.002 && w <= 0.02) }'
  check "the picture shows the object (>= 20 % not black)" awk -v l="$lit" 'BEGIN { exit !(l >= 0.2) }'
else
  echo "skip: no python3: the PNG pixels are not checked"
fi

# ---- output folders ----------------------------------------------------------------------------------
expect 0 "recon A --method all into d" -- "$bin" recon "$dir/noisy.h5" -o "$dir/d" --method all -q
ls "$dir/d" >"$dir/d.before"
cksum "$dir/d"/* >"$dir/d.sum"
expect 2 "recon B into d (another run's outputs)" -- "$bin" recon "$dir/clean.h5" -o "$dir/d" --iters 5
check "the message says why and names --force" grep -q "holds the outputs of another run.*--force" "$dir/err"
check "A's files unchanged" bash -c 'cksum "$0"/* | cmp -s - "$1"' "$dir/d" "$dir/d.sum"
echo "notes" >"$dir/d/notes.txt"
expect 0 "recon B --force into d" -- "$bin" recon "$dir/clean.h5" -o "$dir/d" --iters 5 --force -q
printf '%s\n' convergence.png image_iterative.h5 image_iterative.nii image_iterative.png metrics.csv notes.txt report.json report.md >"$dir/want"
check "--force: B's files and the user's file, nothing of A" bash -c 'ls "$0" | cmp -s - "$1"' "$dir/d" "$dir/want"
check "--force: the report is B's" grep -q "clean.h5" "$dir/d/report.md"
check "no staging folder left" test -z "$(ls -A "$dir" | grep mrirecon-partial)"
mkdir -p "$dir/own"
echo "x" >"$dir/own/readme.txt"
expect 0 "a folder with only other files is used" -- "$bin" recon "$dir/clean.h5" -o "$dir/own" --iters 5 -q
check "its file stays" test -s "$dir/own/readme.txt"

# ---- batch summary.md digits ---------------------------------------------------------------------
mkdir -p "$dir/in"
cp "$dir/clean.h5" "$dir/in/"
expect 0 "batch" -- "$bin" batch "$dir/in" -o "$dir/batch" --iters 5 -q
row=$(grep "^| clean |" "$dir/batch/summary.md" | head -1)
echo "summary.md row: $row"
check "summary.md: PSNR, SNR, error with 2 decimals, method time with 3" \
  bash -c 'printf "%s\n" "$0" | grep -Eq "\| [0-9.]+\.[0-9]{2} \| -?[0-9]+\.[0-9]{2} \| [0-9]+\.[0-9]{2} \| [0-9]+\.[0-9]{3} \| [0-9]+\.[0-9]{2} \|$"' "$row"
check "summary.md: no long numbers" test -z "$(grep -E '[0-9]\.[0-9]{5,}' "$dir/batch/summary.md")"
exit $fail
