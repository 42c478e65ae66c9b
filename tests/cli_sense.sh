#!/usr/bin/env bash
# Coils on the command line: phantom --coils writes maps (/kspace/sens) and coil data; recon uses them
# by default (SENSE), --sens estimate estimates maps from the data, --sens rss reconstructs each coil
# alone, --sens-maps FILE takes maps from another file; the report says which was used; the errors
# exit 1 (or 2 for usage) and create nothing.
# --device: one message for a bad value; an explicit --device gpu without a usable GPU fails for every
# method, gridding included (on a machine with a GPU, gridding with --device gpu runs on the CPU).
#   bash tests/cli_sense.sh <path-to-mrirecon> <scratch-dir>
#
# Thresholds (2D 64^2, radial 33 spokes x 128 (3x undersampled), 4 coils, noiseless, 60 CG
# iterations; measured 2026-11-23: SENSE 30.48 dB against /truth/bandlimited, estimated maps 30.49 dB
# and per-coil + RSS 27.52 dB against the band-limited truth weighted by the maps' root-sum-of-squares,
# the image unit-norm maps and RSS reconstruct; docs/RECON.md):
#   SENSE >= 29.5 dB, SENSE - RSS >= 1 dB, estimate - RSS >= 1 dB
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh"

json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
no_dir() { if [ -e "$1" ]; then echo "FAIL: $2: $1 was created"; fail=1; else echo "ok: $2: nothing created"; fi; }

scan="$dir/coils4.h5"
single="$dir/single.h5"
expect 0 "phantom --coils 4" -- "$bin" phantom -o "$scan" --matrix 64 --spokes 33 --readout 128 --coils 4
check "phantom --coils prints the coils" grep -q "4 coils with maps" "$dir/out"
expect 0 "phantom one coil" -- "$bin" phantom -o "$single" --matrix 64 --spokes 101 --readout 128 -q
expect 2 "phantom --coils -1" -- "$bin" phantom -o "$dir/bad.h5" --coils -1
expect 0 "info on a scan with maps" -- "$bin" info "$scan"

expect 0 "recon (default: SENSE with the scan's maps)" -- "$bin" recon "$scan" -o "$dir/sense"
check "info line names SENSE" grep -q "SENSE with the maps of" "$dir/err"
expect 0 "recon --sens rss" -- "$bin" recon "$scan" -o "$dir/rss" --sens rss -q
expect 0 "recon --sens estimate" -- "$bin" recon "$scan" -o "$dir/est" --sens estimate
check "info line: maps estimated" grep -q "coil maps estimated from the data" "$dir/err"
check "info line: the truth is weighted" grep -q "truth weighted by the root-sum-of-squares" "$dir/err"
check "image_iterative.nii written" [ -s "$dir/est/image_iterative.nii" ]
expect 0 "recon --sens-maps FILE" -- "$bin" recon "$scan" -o "$dir/maps" --sens-maps "$scan" -q
if command -v python3 >/dev/null 2>&1; then
  check "report.json: sens file" [ "$(json "$dir/sense/report.json" "r['settings']['sens']")" = file ]
  check "report.json: sens_maps names the scan" [ "$(json "$dir/sense/report.json" "r['settings']['sens_maps']")" = "$scan" ]
  check "report.json: sens rss" [ "$(json "$dir/rss/report.json" "r['settings']['sens']")" = rss ]
  check "report.json: --sens-maps recorded" [ "$(json "$dir/maps/report.json" "r['settings']['sens_maps']")" = "$scan" ]
  s=$(json "$dir/sense/report.json" "[m for m in r['methods'] if m['method']=='iterative'][0]['metrics']['bandlimited']['psnr_db']")
  r=$(json "$dir/rss/report.json" "[m for m in r['methods'] if m['method']=='iterative'][0]['metrics']['bandlimited']['psnr_db']")
  e=$(json "$dir/est/report.json" "[m for m in r['methods'] if m['method']=='iterative'][0]['metrics']['bandlimited']['psnr_db']")
  echo "PSNR vs band-limited truth: SENSE $s dB; estimated maps $e dB, per-coil + RSS $r dB (weighted truth)"
  check "SENSE PSNR >= 29.5 dB" awk -v a="$s" 'BEGIN { exit !(a >= 29.5) }'
  check "SENSE - RSS >= 1 dB" awk -v a="$s" -v b="$r" 'BEGIN { exit !(a - b >= 1) }'
  check "estimate - RSS >= 1 dB" awk -v a="$e" -v b="$r" 'BEGIN { exit !(a - b >= 1) }'
  check "report.json: sens estimate, truth weighted, 22^2 calibration (33 spokes)" [ "$(json "$dir/est/report.json" \
    "(r['settings']['sens'], r['settings']['truth_weighted_by_maps_rss'], r['settings']['sens_calibration_grid'])")" = "('estimate', True, [22, 22, 1])" ]
  check "report.json: rss scored against the weighted truth" [ "$(json "$dir/rss/report.json" "r['settings']['truth_weighted_by_maps_rss']")" = True ]
  check "report.json: timings include device_init and fft_plan" \
    [ "$(json "$dir/sense/report.json" "'device_init' in r['timings_s'] and 'fft_plan' in r['timings_s']")" = True ]
fi
check "report.md says SENSE" grep -q "SENSE: the 4 coil(s)" "$dir/sense/report.md"
check "report.md says RSS" grep -q "root-sum-of-squares" "$dir/rss/report.md"
expect 0 "recon --method all with maps" -- "$bin" recon "$scan" -o "$dir/all" --method all -q
check "--method all: compare.png" [ -s "$dir/all/compare.png" ]
if command -v python3 >/dev/null 2>&1; then # the stages' times: none negative, and they make up total
  for d in sense rss est all; do
    check "report.json ($d): stage times >= 0, their sum with the monitor time <= total" [ "$(json "$dir/$d/report.json" \
      "(lambda t, mon: all(v >= 0 for v in t.values()) and sum(t[k] for k in ('read', 'operator_create', 'fhd', 'solve', 'dcf', 'gridding', 'scan', 'problem', 'score', 'write')) + mon <= t['total'] + 1e-6)(r['timings_s'], sum(m.get('time_monitor_s', 0) for m in r['methods']))")" = True ]
  done
fi

# errors: exit 1 (run time) or 2 (usage), nothing created
expect 1 "--sens file on a scan without maps" -- "$bin" recon "$single" -o "$dir/e1" --sens file
check "message names the scan" grep -q "single.h5: --sens file, but the scan has no coil maps" "$dir/err"
no_dir "$dir/e1" "--sens file without maps"
expect 1 "--sens-maps missing file" -- "$bin" recon "$scan" -o "$dir/e2" --sens-maps "$dir/none.h5"
check "message names the maps file" grep -q "none.h5" "$dir/err"
no_dir "$dir/e2" "--sens-maps missing file"
expect 1 "--sens-maps with another coil count" -- "$bin" recon "$single" -o "$dir/e3" --sens-maps "$scan"
check "message gives both shapes" grep -q "4x1x64x64x2, expected 1x1x64x64x2" "$dir/err"
no_dir "$dir/e3" "--sens-maps wrong shape"
expect 2 "--sens-maps with --sens rss" -- "$bin" recon "$scan" -o "$dir/e4" --sens-maps "$scan" --sens rss
no_dir "$dir/e4" "--sens-maps with --sens rss"
expect 2 "--sens bogus" -- "$bin" recon "$scan" -o "$dir/e5" --sens bogus
expect 2 "--sens-maps with --sens estimate" -- "$bin" recon "$scan" -o "$dir/e6" --sens-maps "$scan" --sens estimate
no_dir "$dir/e6" "--sens-maps with --sens estimate"

# --device: one message format; an explicit gpu without a GPU fails for every method
expect 2 "--device foo" -- "$bin" recon "$scan" -o "$dir/d1" --device foo
check "--device named once" [ "$(grep -o -- '--device' "$dir/err" | wc -l)" -eq 1 ]
check "--device message" grep -q "mrirecon recon: --device: 'foo' is not auto, cpu, gpu, gpu:N, gpu:N,M,... or gpu:all" "$dir/err"
no_dir "$dir/d1" "--device foo"
expect 2 "bench --device foo" -- "$bin" bench --device foo
check "bench --device message" grep -q "mrirecon bench: --device: 'foo' is not auto" "$dir/err"
expect 2 "batch --device foo" -- "$bin" batch "$scan" -o "$dir/d2" --device foo
check "batch --device message" grep -q "mrirecon batch: --device: 'foo' is not auto" "$dir/err"
"$bin" recon "$single" -o "$dir/probe" --iters 1 --device gpu -q >/dev/null 2>"$dir/probe.err"
if [ $? -ne 0 ] && grep -q "no usable GPU" "$dir/probe.err"; then
  for m in gridding-kb gridding-bilinear cg all; do
    expect 1 "--method $m --device gpu without a GPU" -- "$bin" recon "$single" -o "$dir/g_$m" --method "$m" --device gpu
    check "--method $m: message" grep -q -- "--device gpu: no usable GPU" "$dir/err"
    no_dir "$dir/g_$m" "--method $m --device gpu"
  done
  expect 1 "--device gpu:3 without a GPU" -- "$bin" recon "$single" -o "$dir/g3" --method gridding-kb --device gpu:3
  check "gpu:3 message" grep -q -- "--device gpu:3: no usable GPU" "$dir/err"
else
  echo "(a GPU is usable here: gridding with --device gpu runs on the CPU)"
  expect 0 "gridding-kb --device gpu" -- "$bin" recon "$single" -o "$dir/g_kb" --method gridding-kb --device gpu
  check "gridding says it runs on the CPU" grep -q "gridding runs on the CPU" "$dir/err"
  expect 0 "SENSE --device gpu" -- "$bin" recon "$scan" -o "$dir/g_sense" --device gpu -q
fi

if [ "$fail" -ne 0 ]; then
  echo "cli_sense: failures"
  exit 1
fi
echo "cli_sense: all checks passed"
