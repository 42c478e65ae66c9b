#!/usr/bin/env bash
# ISMRMRD input end to end: mrirecon phantom -> an ISMRMRD file written by libismrmrd's own C API
# (tests/tool_ismrmrd_write) -> mrirecon info / convert -> the same samples as the mrirecon file the
# ISMRMRD file was made from (tests/tool_kspace_cmp) -> mrirecon recon of the ISMRMRD file itself
# gives the same image as of the mrirecon file (tests/tool_imgcmp). 2D radial and golden-angle, 1 and
# 4 coils (4: coil maps estimated from the data, the default), with noise scans, in every trajectory
# unit; prewhitening + estimated maps straight from the ISMRMRD file; several volumes -> one folder
# each; batch over a folder of .mrd and BART inputs; malformed files (exit 1, one message, no output).
# SKIP (77) when the tools were built without libismrmrd.
#
# Matrix 64 and FOV 250 mm make the unit conversions of cycles, normalized (/64) and per-m (x 4)
# exact, so those files give bit-identical samples and bit-identical CG images. Radians (x 2 pi / 64)
# changes some trajectory values by one float32 ulp (relative 6e-8), which float32 CG and the
# iterative Pipe-Menon DCF of gridding turn into image differences of ~1e-5 (KB gridding) to ~1e-4
# (CG): measured 2026-11-23 on the ISMRMRD files themselves (KB 1.2e-5..2.3e-5, CG 3.0e-5..1.4e-4 over
# radial/golden x 1/4 coils; one-ulp changes of the data alone give CG 5e-5), so radians images are
# held to <= 1e-4 (KB) and <= 1e-3 (CG).
#   bash tests/cli_ismrmrd.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect(), check()
tools=$(dirname "$bin")
writer=$tools/tool_ismrmrd_write
kcmp=$tools/tool_kspace_cmp
icmp=$tools/tool_imgcmp

"$bin" phantom -o "$dir/p.h5" --matrix 32 -q >/dev/null 2>&1
"$writer" "$dir/p.h5" "$dir/probe.h5" >/dev/null 2>&1
if [ $? -eq 77 ]; then
  echo "SKIP: tool_ismrmrd_write was built without libismrmrd (apt-get install libismrmrd-dev)"
  exit 77
fi

# no output file of the given stem in $dir
no_output() {
  if ls "$dir"/"$1"* >/dev/null 2>&1; then echo "FAIL: $2: output written: $(ls "$dir"/"$1"*)"; fail=1; else echo "ok: $2: nothing written"; fi
}

for traj in radial golden; do
  "$bin" phantom -o "$dir/$traj.h5" --matrix 64 --fov 250 --traj "$traj" -q >/dev/null || { echo "FAIL: phantom"; exit 1; }
  for coils in 1 4; do
    ref="$dir/${traj}_${coils}c_ref.h5"
    for units in cycles normalized radians per-m; do
      stem="${traj}_${coils}c_${units}"
      ism="$dir/$stem.mrd"
      check "$stem: write ISMRMRD with libismrmrd" "$writer" "$dir/$traj.h5" "$ism" --units "$units" --coils "$coils" --ref "$ref" --noise 8 --rho 0.4 --sigma 0.01
      expect 0 "$stem: info" -- "$bin" info "$ism"
      grep -q "^format        ismrmrd" "$dir/out" || { echo "FAIL: $stem: info does not say ismrmrd"; fail=1; }
      grep -q "traj units  $units (detected" "$dir/out" || { echo "FAIL: $stem: units not detected as $units"; grep "traj units" "$dir/out"; fail=1; }
      grep -q "^noise scans   8 acquisitions" "$dir/out" || { echo "FAIL: $stem: noise scans not listed"; fail=1; }
      grep -q "^coils         $coils$" "$dir/out" || { echo "FAIL: $stem: coils"; fail=1; }
      expect 0 "$stem: convert --prewhiten off" -- "$bin" convert "$ism" "$dir/$stem.h5" --prewhiten off -q
      if [ "$units" = radians ]; then
        check "$stem: same samples as the mrirecon file (relative <= 1e-6)" "$kcmp" "$dir/$stem.h5" "$ref" 1e-6
      else
        check "$stem: bit-identical samples to the mrirecon file" "$kcmp" "$dir/$stem.h5" "$ref"
      fi
      for method in cg gridding-kb; do
        # --lambda 0: the noise scans state a noise level the reference file does not (automatic lambda);
        # CG's options only for CG (gridding refuses them)
        cgopts=""
        [ "$method" = cg ] && cgopts="--iters 20 --lambda 0"
        [ -f "$dir/ref_${traj}_${coils}c_$method/image_$method.h5" ] ||
          "$bin" recon "$ref" -o "$dir/ref_${traj}_${coils}c_$method" --method "$method" $cgopts -q >/dev/null
        "$bin" recon "$ism" -o "$dir/r_${stem}_$method" --method "$method" $cgopts --prewhiten off -q >/dev/null
        tol=1e-6
        [ "$units" = radians ] && tol=1e-4
        [ "$units" = radians ] && [ "$method" = cg ] && tol=1e-3
        check "$stem: $method image vs the mrirecon file's (relative L2 <= $tol)" \
          "$icmp" "$dir/r_${stem}_$method/image_$method.h5" "$dir/ref_${traj}_${coils}c_$method/image_$method.h5" "$tol"
      done
    done
    # prewhitening (the default): one coil is left bit-identical (W = 1); several are changed
    expect 0 "${traj}_${coils}c: convert with prewhitening" -- "$bin" convert "$dir/${traj}_${coils}c_cycles.mrd" "$dir/${traj}_${coils}c_white.h5" -q
    if [ "$coils" = 1 ]; then
      check "${traj}_1c: prewhitening one coil changes nothing" "$kcmp" "$dir/${traj}_1c_white.h5" "$ref"
    else
      if "$kcmp" "$dir/${traj}_4c_white.h5" "$ref" 2>/dev/null; then echo "FAIL: ${traj}_4c: prewhitening changed nothing"; fail=1; else echo "ok: ${traj}_4c: prewhitened data differ from the stored data"; fi
      # recon straight from the ISMRMRD file: prewhitened with its noise scans, maps estimated from the
      # whitened data (the defaults) = the same reconstruction of the converted (prewhitened) file
      expect 0 "${traj}_4c: recon the ISMRMRD file (prewhitening, estimated maps)" -- "$bin" recon "$dir/${traj}_4c_cycles.mrd" -o "$dir/w_${traj}" --iters 20
      check "${traj}_4c: log says prewhitened" grep -q "coils prewhitened with the noise scans (1024 samples per coil" "$dir/err"
      "$bin" recon "$dir/${traj}_4c_white.h5" -o "$dir/wref_${traj}" --iters 20 -q >/dev/null
      check "${traj}_4c: image = the converted file's (relative L2 <= 1e-6)" "$icmp" "$dir/w_${traj}/image_iterative.h5" "$dir/wref_${traj}/image_iterative.h5" 1e-6
      if command -v python3 >/dev/null 2>&1; then
        check "${traj}_4c: report.json: prewhitened, 1024 noise samples per coil, sens estimate, format ismrmrd" python3 -c "
import json, sys; r = json.load(open(sys.argv[1]))
assert r['read'] == {'format': 'ismrmrd', 'volume': 0, 'volumes': 1, 'volume_label': 'volume0', 'prewhitened': True, 'noise_samples_per_coil': 1024}, r['read']
assert r['settings']['sens'] == 'estimate'" "$dir/w_${traj}/report.json"
      fi
      [ -s "$dir/w_${traj}/image_iterative.nii" ] && echo "ok: ${traj}_4c: image_iterative.nii" || { echo "FAIL: ${traj}_4c: no image_iterative.nii"; fail=1; }
    fi
  done
done

# ---- several volumes: 2 slices x 3 repetitions, averages, discarded samples -------------------------
check "volumes: write" "$writer" "$dir/radial.h5" "$dir/vol.mrd" --units normalized --slices 2 --repetitions 3 --discard 4,2 --noise 2
expect 0 "volumes: info" -- "$bin" info "$dir/vol.mrd"
grep -q "^volumes       6$" "$dir/out" || { echo "FAIL: info does not list 6 volumes"; fail=1; }
expect 0 "volumes: info --volume 5 --json" -- "$bin" info "$dir/vol.mrd" --volume 5 --json
if command -v python3 >/dev/null 2>&1; then
  python3 - "$dir/out" <<'PY' || fail=1
import json, sys
o = json.load(open(sys.argv[1]))
assert o["format"] == "ismrmrd" and o["volume"] == 5, o["format"]
v = o["volumes"]
assert len(v) == 6 and v[5]["slice"] == 1 and v[5]["repetition"] == 2, v[5]
assert o["ismrmrd"]["counts"]["noise"] == 2 and o["ismrmrd"]["encodings"][0]["traj_units"] == "normalized"
print("ok: --json lists 6 volumes, units normalized, 2 noise scans")
PY
fi
expect 0 "volumes: recon every volume" -- "$bin" recon "$dir/vol.mrd" -o "$dir/rvol" --iters 5 -q
n=0
for sl in 0 1; do for rep in 0 1 2; do [ -s "$dir/rvol/slice00${sl}_rep00${rep}/image_iterative.h5" ] && n=$((n + 1)); done; done
[ "$n" -eq 6 ] && echo "ok: recon wrote 6 folders slice00S_rep00R" || { echo "FAIL: $n volume folders: $(ls "$dir/rvol")"; fail=1; }
[ "$(wc -l <"$dir/rvol/metrics.csv")" -eq 7 ] && head -1 "$dir/rvol/metrics.csv" | grep -q "^volume,method," &&
  echo "ok: OUT/metrics.csv: one row per volume" || { echo "FAIL: OUT/metrics.csv"; cat "$dir/rvol/metrics.csv"; fail=1; }
[ "$(grep -c '^volume ' "$dir/out")" -eq 6 ] && echo "ok: one result table per volume" || { echo "FAIL: stdout"; cat "$dir/out"; fail=1; }
# --force when the volume layout changes: folders of only recon outputs go, anything else stays
check "layout: write 2 slices" "$writer" "$dir/radial.h5" "$dir/two.mrd" --units normalized --slices 2
mkdir -p "$dir/rvol/mine" && echo notes >"$dir/rvol/mine/notes.txt"
expect 0 "layout: 2 volumes over 6 with --force" -- "$bin" recon "$dir/two.mrd" -o "$dir/rvol" --iters 2 --force -q
[ "$(ls -d "$dir"/rvol/slice* | wc -l)" -eq 2 ] && [ -d "$dir/rvol/slice000" ] && [ -d "$dir/rvol/slice001" ] &&
  echo "ok: --force: the 6 old volume folders went, the 2 new ones are there" || { echo "FAIL: layout: $(ls "$dir/rvol")"; fail=1; }
[ -s "$dir/rvol/mine/notes.txt" ] && echo "ok: --force: a folder with the user's file stays" || { echo "FAIL: mine/ removed"; fail=1; }
expect 0 "layout: one volume over 2 with --force" -- "$bin" recon "$dir/two.mrd" -o "$dir/rvol" --volume 1 --iters 2 --force -q
[ -s "$dir/rvol/image_iterative.h5" ] && ! ls -d "$dir"/rvol/slice* >/dev/null 2>&1 &&
  echo "ok: --force: one volume replaces the volume folders" || { echo "FAIL: layout 1: $(ls "$dir/rvol")"; fail=1; }
expect 0 "layout: 2 volumes over one with --force" -- "$bin" recon "$dir/two.mrd" -o "$dir/rvol" --iters 2 --force -q
[ ! -e "$dir/rvol/image_iterative.h5" ] && [ ! -e "$dir/rvol/report.json" ] && [ -s "$dir/rvol/metrics.csv" ] &&
  echo "ok: --force: the single-volume files went" || { echo "FAIL: layout 2: $(ls "$dir/rvol")"; fail=1; }
expect 1 "volumes: recon --volume 6" -- "$bin" recon "$dir/vol.mrd" -o "$dir/rvol6" --volume 6
[ -e "$dir/rvol6" ] && { echo "FAIL: --volume 6 created its folder"; fail=1; }
expect 0 "volumes: convert all" -- "$bin" convert "$dir/vol.mrd" "$dir/vol.h5" -q
n=$(ls "$dir"/vol_v00?.h5 2>/dev/null | wc -l)
[ "$n" -eq 6 ] && echo "ok: 6 files vol_v000..005.h5" || { echo "FAIL: $n volume files"; fail=1; }
[ "$(wc -l <"$dir/out")" -eq 6 ] && echo "ok: one stdout line per file" || { echo "FAIL: stdout:"; cat "$dir/out"; fail=1; }
check "volume 0 (slice 0, repetition 0; discarded samples dropped) = the scan" "$kcmp" "$dir/vol_v000.h5" "$dir/radial.h5"
expect 0 "volumes: convert --volume 4" -- "$bin" convert "$dir/vol.mrd" "$dir/one.h5" --volume 4 -q
[ -f "$dir/one.h5" ] && echo "ok: --volume 4 writes one.h5" || { echo "FAIL: one.h5 missing"; fail=1; }
expect 1 "volumes: convert --volume 6 (out of range)" -- "$bin" convert "$dir/vol.mrd" "$dir/none.h5" --volume 6
no_output none "volume out of range"
check "averages: write 3 identical averages" "$writer" "$dir/radial.h5" "$dir/avg.mrd" --averages 3
expect 0 "averages: convert (combined)" -- "$bin" convert "$dir/avg.mrd" "$dir/avg.h5" -q
check "3 identical averages combine to the scan" "$kcmp" "$dir/avg.h5" "$dir/radial.h5"
expect 0 "averages: convert --averages separate" -- "$bin" convert "$dir/avg.mrd" "$dir/avgs.h5" --averages separate -q
[ "$(ls "$dir"/avgs_v00?.h5 | wc -l)" -eq 3 ] && echo "ok: 3 volumes with --averages separate" || { echo "FAIL: --averages separate"; fail=1; }

# ---- batch over a folder: an ISMRMRD file and a BART pair ----------------------------------------------
mkdir -p "$dir/bin"
cp "$dir/radial_1c_normalized.mrd" "$dir/bin/scan_a.mrd"
expect 0 "BART pair for the batch" -- "$bin" convert "$dir/radial_1c_ref.h5" "$dir/bin/scan_b" -q
expect 0 "batch over .mrd and BART inputs" -- "$bin" batch "$dir/bin" -o "$dir/bout" --iters 5 --lambda 0 -q  # the ISMRMRD noise scans would set an automatic lambda
for s in scan_a scan_b; do
  [ -s "$dir/bout/$s/image_iterative.h5" ] && [ -s "$dir/bout/$s/image_iterative.nii" ] && echo "ok: batch: $s reconstructed" || { echo "FAIL: batch: $s: $(ls "$dir/bout")"; fail=1; }
done
check "batch: scan_a (ISMRMRD) = scan_b (BART of the same samples)" "$icmp" "$dir/bout/scan_a/image_iterative.h5" "$dir/bout/scan_b/image_iterative.h5" 1e-6

# ---- units: ambiguous on a small matrix, given explicitly ---------------------------------------------
"$bin" phantom -o "$dir/small.h5" --matrix 8 -q >/dev/null
check "write 8x8 radians" "$writer" "$dir/small.h5" "$dir/small.mrd" --units radians
expect 1 "8x8 in radians: ambiguous" -- "$bin" convert "$dir/small.mrd" "$dir/amb.h5"
grep -q -- "--traj-units" "$dir/err" && echo "ok: the message names --traj-units" || { echo "FAIL: message:"; cat "$dir/err"; fail=1; }
no_output amb "ambiguous units"
expect 0 "8x8 with --traj-units radians" -- "$bin" convert "$dir/small.mrd" "$dir/amb.h5" --traj-units radians -q
check "8x8 radians given: same samples (<= 1e-6)" "$kcmp" "$dir/amb.h5" "$dir/small.h5" 1e-6
expect 2 "--traj-units bogus" -- "$bin" convert "$dir/small.mrd" "$dir/x.h5" --traj-units furlongs
check "sign -1 stored, --traj-sign -1 read" "$writer" "$dir/radial.h5" "$dir/neg.mrd" --sign -1
expect 0 "convert --traj-sign -1" -- "$bin" convert "$dir/neg.mrd" "$dir/neg.h5" --traj-sign -1 -q
check "--traj-sign -1 restores the samples" "$kcmp" "$dir/neg.h5" "$dir/radial.h5"

# ---- malformed files: exit 1, one message naming the file, nothing written -----------------------------
for kind in xml-syntax xml-doctype cartesian channels nan-data traj-length data-length huge-extent units-none; do
  check "corrupt $kind: write" "$writer" "$dir/radial.h5" "$dir/bad_$kind.mrd" --coils 2 --noise 2 --corrupt "$kind"
  expect 1 "corrupt $kind: convert" -- "$bin" convert "$dir/bad_$kind.mrd" "$dir/out_$kind.h5"
  # one error line naming the file (informational lines, e.g. the detected units, may precede it)
  grep -v '^mrirecon: info:' "$dir/err" >"$dir/err1"
  [ "$(wc -l <"$dir/err1")" -eq 1 ] && grep -q "bad_$kind.mrd" "$dir/err1" && echo "ok: $kind: $(cat "$dir/err1")" ||
    { echo "FAIL: $kind: stderr is not one error line naming the file:"; cat "$dir/err"; fail=1; }
  [ -s "$dir/out" ] && { echo "FAIL: $kind: something on stdout"; fail=1; }
  no_output "out_$kind" "corrupt $kind"
  expect 1 "corrupt $kind: info" -- "$bin" info "$dir/bad_$kind.mrd"
done
[ -z "$(ls -A "$dir" | grep '^\.')" ] && echo "ok: no temporary files left" || { echo "FAIL: temporary files: $(ls -A "$dir" | grep '^\.')"; fail=1; }

[ "$fail" -eq 0 ] && echo "cli_ismrmrd: all passed" || echo "cli_ismrmrd: FAILED"
exit "$fail"
