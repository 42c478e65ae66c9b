#!/usr/bin/env bash
# mrirecon recon end to end: phantom -> recon -> report files and numbers; usage and input errors
# give exit 2 / 1 and create no output directory; --method all adds compare.png and orders the
# methods as measured.
#   bash tests/cli_recon.sh <path-to-mrirecon> <scratch-dir>
#
# Thresholds (64x64 Shepp-Logan, radial 101 spokes x 128, noiseless, 60 CG iterations; measured
# 2026-11-22: CG box 30.22 dB, CG dirac 33.94 dB, KB 33.44 dB, bilinear 22.24 dB against
# /truth/bandlimited), set a little below:
#   CG (box, default) vs bandlimited          >= 29.7 dB
#   KB - bilinear vs bandlimited              >= 10 dB     (measured 11.2)
#   CG (dirac) - KB vs bandlimited            >= 0.3 dB    (measured 0.50)
set -u
bin=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir"

fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# expect RC WHAT -- command...
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$dir/out" 2>"$dir/err"
  local rc=$?
  if [ "$rc" = "$want" ]; then ok "$what: exit $rc"; else fail "$what: exit $rc, expected $want"; sed 's/^/  /' "$dir/err" | head -5 >&2; fi
}

no_dir() {
  if [ -e "$1" ]; then fail "$2: $1 was created"; else ok "$2: no output directory"; fi
}

# a PNG file: the 8-byte signature and the IEND chunk at the end
png_ok() {
  local f=$1
  [ -s "$f" ] || { fail "$f missing"; return; }
  local sig end
  sig=$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')
  end=$(tail -c 8 "$f" | od -An -tx1 | tr -d ' \n')
  if [ "$sig" = "89504e470d0a1a0a" ] && [ "$end" = "49454e44ae426082" ]; then ok "$(basename "$f") is a PNG"; else fail "$f is not a complete PNG ($sig ... $end)"; fi
}

# csv_value FILE METHOD TRUTH COLUMN
csv_value() {
  awk -F, -v m="$2" -v t="$3" -v c="$4" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == m && $2 == t { print $(col[c]) }' "$1"
}

# ge A B WHAT: A >= B as numbers
ge() {
  if awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0 && a != "") }'; then ok "$3 = $1 (>= $2)"; else fail "$3 = $1, expected >= $2"; fi
}

# ---- usage errors (exit 2) and input errors (exit 1): nothing created -------------------------------
expect 0 "--help" -- "$bin" recon --help
grep -q -- "--lambda" "$dir/out" || fail "--help does not list --lambda"
expect 2 "no arguments" -- "$bin" recon
printf 'not a scan\n' >"$dir/text.h5"
expect 2 "--iters -1" -- "$bin" recon "$dir/text.h5" -o "$dir/o_iters" --iters -1
no_dir "$dir/o_iters" "--iters -1"
expect 2 "--reg nonsense" -- "$bin" recon "$dir/text.h5" -o "$dir/o_reg" --reg tv,median
grep -q "'median' is not a prior" "$dir/err" || fail "--reg: the message does not name the unknown prior"
no_dir "$dir/o_reg" "--reg nonsense"
expect 2 "--solver cg with tv" -- "$bin" recon "$dir/text.h5" -o "$dir/o_solver" --solver cg --reg tv
no_dir "$dir/o_solver" "--solver cg with tv"
expect 2 "--lambda -1" -- "$bin" recon "$dir/text.h5" -o "$dir/o_lambda" --lambda -1
no_dir "$dir/o_lambda" "--lambda -1"
expect 2 "missing -o" -- "$bin" recon "$dir/text.h5"
expect 2 "unknown method" -- "$bin" recon "$dir/text.h5" -o "$dir/o_method" --method fft
no_dir "$dir/o_method" "unknown method"
expect 2 "bad device" -- "$bin" recon "$dir/text.h5" -o "$dir/o_dev" --device tpu
no_dir "$dir/o_dev" "bad device"
expect 1 "nonexistent file" -- "$bin" recon "$dir/nope.h5" -o "$dir/o_missing"
no_dir "$dir/o_missing" "nonexistent file"
grep -q "nope.h5" "$dir/err" || fail "the message does not name the missing file"
expect 1 "text file" -- "$bin" recon "$dir/text.h5" -o "$dir/o_text"
no_dir "$dir/o_text" "text file"
[ -s "$dir/out" ] && fail "stdout not empty on failure"

# ---- a generated scan ------------------------------------------------------------------------------
scan="$dir/sl64.h5"
if ! "$bin" phantom -o "$scan" --matrix 64 --spokes 101 --readout 128 -q >"$dir/out" 2>"$dir/err"; then
  sed 's/^/  /' "$dir/err" | head -5
  if [ "$fails" -gt 0 ]; then echo "cli_recon: $fails failures" >&2; exit 1; fi
  echo "skip: mrirecon phantom did not produce a scan; end-to-end checks not run"
  exit 77
fi
ok "phantom 64x64 radial 101x128"

out="$dir/cg"
expect 0 "recon --method cg" -- "$bin" recon "$scan" -o "$out" --method cg -v
for f in image_cg.h5 image_cg.png convergence.png report.json report.md metrics.csv; do
  [ -s "$out/$f" ] || fail "$out/$f missing or empty"
done
[ -e "$out/compare.png" ] && fail "compare.png written without --method all"
png_ok "$out/image_cg.png"
png_ok "$out/convergence.png"
grep -q "^cg " "$dir/out" || fail "stdout has no result row for cg"
n_iter=$(grep -c "cg: iteration" "$dir/err")
[ "$n_iter" = 60 ] && ok "-v printed 60 iteration lines" || fail "-v printed $n_iter iteration lines, expected 60"
grep -q "cg: iteration" "$dir/out" && fail "iteration lines on stdout"
[ "$(head -1 "$out/metrics.csv")" = "method,truth,mse,psnr_db,snr_db,percent_error,seconds" ] &&
  ok "metrics.csv header" || fail "metrics.csv header: $(head -1 "$out/metrics.csv")"
psnr=$(csv_value "$out/metrics.csv" cg bandlimited psnr_db)
ge "$psnr" 29.7 "CG (box) PSNR vs bandlimited"
grep -q '"residual_history": \[1, ' "$out/report.json" && ok "report.json has the residual history" ||
  fail "report.json: no residual history"
grep -q '"iterations": 60' "$out/report.json" || fail "report.json: iterations != 60"
for key in '"read"' '"q"' '"fhd"' '"solve"' '"write"' '"peak_memory_kib"' '"backend"' '"lambda"' '"input"'; do
  grep -q "$key" "$out/report.json" || fail "report.json lacks $key"
done
if command -v python3 >/dev/null 2>&1; then
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['methods'][0]['method']=='cg'" \
    "$out/report.json" && ok "report.json parses" || fail "report.json does not parse"
fi
grep -q "window \[0, " "$out/report.md" && ok "report.md states the window" || fail "report.md: no window"

# ---- all methods, Dirac basis ------------------------------------------------------------------------
all="$dir/all"
expect 0 "recon --method all --basis dirac" -- "$bin" recon "$scan" -o "$all" --method all --basis dirac -q
for m in iterative cg gridding-kb gridding-bilinear; do
  [ -s "$all/image_$m.h5" ] || fail "$all/image_$m.h5 missing"
  png_ok "$all/image_$m.png"
done
png_ok "$all/compare.png"
grep -q "gain of x5" "$all/report.md" && ok "report.md states the error gain" || fail "report.md: no gain"
cg=$(csv_value "$all/metrics.csv" cg bandlimited psnr_db)
kb=$(csv_value "$all/metrics.csv" gridding-kb bandlimited psnr_db)
bl=$(csv_value "$all/metrics.csv" gridding-bilinear bandlimited psnr_db)
echo "PSNR vs bandlimited: cg (dirac) $cg, kb $kb, bilinear $bl"
ge "$(awk -v a="$kb" -v b="$bl" 'BEGIN { print a - b }')" 10 "KB - bilinear (dB)"
ge "$(awk -v a="$cg" -v b="$kb" 'BEGIN { print a - b }')" 0.3 "CG (dirac) - KB (dB)"

# ---- --dcf file on a scan without weights would be an error; --dcf analytic on radial is fine ---------
expect 0 "gridding-kb --dcf analytic" -- "$bin" recon "$scan" -o "$dir/an" --method gridding-kb --dcf analytic -q
[ -s "$dir/an/image_gridding-kb.png" ] || fail "analytic DCF run wrote no image"

# ---- no truth: metric fields empty; a spiral without weights: DCF choices ----------------------------
nt="$dir/notruth.h5"
expect 0 "phantom --no-truth" -- "$bin" phantom -o "$nt" --matrix 32 --no-truth -q
expect 0 "recon without truth" -- "$bin" recon "$nt" -o "$dir/nt" --iters 10 -q
[ "$(sed -n 2p "$dir/nt/metrics.csv" | cut -d, -f1-6)" = "iterative,,,,," ] && ok "metrics.csv row without truth" ||
  fail "metrics.csv without truth: $(sed -n 2p "$dir/nt/metrics.csv")"
png_ok "$dir/nt/image_iterative.png"
sp="$dir/spiral.h5"
expect 0 "phantom spiral without weights" -- "$bin" phantom -o "$sp" --matrix 32 --traj spiral --weights none -q
expect 1 "--dcf analytic on a spiral" -- "$bin" recon "$sp" -o "$dir/sp_an" --method gridding-kb --dcf analytic
no_dir "$dir/sp_an" "--dcf analytic on a spiral"
expect 1 "--dcf file without weights" -- "$bin" recon "$sp" -o "$dir/sp_file" --method gridding-kb --dcf file
no_dir "$dir/sp_file" "--dcf file without weights"
expect 0 "default --dcf (pipe) on a spiral" -- "$bin" recon "$sp" -o "$dir/sp_auto" --method gridding-kb -q
grep -q '"dcf": "pipe"' "$dir/sp_auto/report.json" && ok "auto DCF fell back to pipe" || fail "auto DCF: not pipe"

if [ "$fails" -gt 0 ]; then
  echo "cli_recon: $fails failures" >&2
  exit 1
fi
echo "cli_recon: all checks passed"
