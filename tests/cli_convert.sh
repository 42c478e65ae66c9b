#!/usr/bin/env bash
# mrirecon convert between mrirecon HDF5 and BART .cfl/.hdr (no libismrmrd needed; ISMRMRD input is
# tests/cli_ismrmrd.sh): help and usage errors; 2D and 3D scans to BART and back bit-identical
# (tests/tool_kspace_cmp) by every way of naming the pair; the BART headers and data sizes; the
# matrix from the '# mrirecon' note, from --matrix, or estimated as BART does; --bart-scale; coil
# maps (NAME_sens) both ways bit for bit, used by recon, listed by info, malformed maps refused;
# mrirecon info on a BART pair; malformed BART input (exit 1, one message, nothing written). When
# the `bart` tool is installed, it must read the written pair.
#   bash tests/cli_convert.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect(), check()
kcmp=$(dirname "$bin")/tool_kspace_cmp

expect 0 "convert --help" -- "$bin" convert --help
grep -q "BART" "$dir/out" && grep -q -- "--traj-units" "$dir/out" && echo "ok: --help mentions BART and --traj-units" ||
  { echo "FAIL: --help"; fail=1; }
expect 2 "no arguments" -- "$bin" convert
expect 2 "one argument" -- "$bin" convert a.h5
expect 2 "--volume abc" -- "$bin" convert a.h5 b.h5 --volume abc
expect 2 "--matrix 4,x" -- "$bin" convert a.h5 b.h5 --matrix 4,x
expect 2 "--fov -3" -- "$bin" convert a.h5 b.h5 --fov -3
expect 2 "--to tiff" -- "$bin" convert a.h5 b.h5 --to tiff
expect 2 "OUT.mrd (ISMRMRD is not written)" -- "$bin" convert a.h5 b.mrd
expect 1 "missing input" -- "$bin" convert "$dir/missing.h5" "$dir/x.h5"
grep -q "missing.h5" "$dir/err" && echo "ok: names the missing file" || { echo "FAIL: message"; fail=1; }

"$bin" phantom -o "$dir/s2.h5" --matrix 32 --traj spiral -q >/dev/null || { echo "FAIL: phantom"; exit 1; }
"$bin" phantom -o "$dir/s3.h5" --matrix 12 --traj kooshball --spokes 150 --snr 20 -q >/dev/null || { echo "FAIL: phantom 3D"; exit 1; }

# ---- to BART and back ------------------------------------------------------------------------------
for s in s2 s3; do
  expect 0 "$s to BART" -- "$bin" convert "$dir/$s.h5" "$dir/${s}b" -q
  for f in traj.hdr traj.cfl ksp.hdr ksp.cfl; do
    [ -f "$dir/${s}b_$f" ] || { echo "FAIL: ${s}b_$f missing"; fail=1; }
  done
  m=$(sed -n 2p "$dir/${s}b_traj.hdr" | awk '{print $2}')
  [ "$(sed -n 1p "$dir/${s}b_traj.hdr")" = "# Dimensions" ] && [ "$(sed -n 2p "$dir/${s}b_traj.hdr" | awk '{print $1, $3}')" = "3 1" ] &&
    [ "$(sed -n 2p "$dir/${s}b_ksp.hdr" | awk '{print $1, $2, $3, $4}')" = "1 $m 1 1" ] &&
    echo "ok: $s: traj [3 $m], ksp [1 $m 1 1]" || { echo "FAIL: $s: BART dims"; head -2 "$dir/${s}b_traj.hdr" "$dir/${s}b_ksp.hdr"; fail=1; }
  [ "$(stat -c %s "$dir/${s}b_traj.cfl")" -eq $((m * 3 * 8)) ] && [ "$(stat -c %s "$dir/${s}b_ksp.cfl")" -eq $((m * 8)) ] &&
    echo "ok: $s: .cfl sizes" || { echo "FAIL: $s: .cfl sizes"; fail=1; }
  for name in "${s}b" "${s}b_ksp.hdr" "${s}b_traj.cfl" "${s}b_ksp"; do
    expect 0 "$s from BART named $name" -- "$bin" convert "$dir/$name" "$dir/${s}back.h5" -q
    check "$s: BART round trip via $name is bit-identical" "$kcmp" "$dir/${s}back.h5" "$dir/$s.h5"
  done
  expect 0 "info on the BART pair" -- "$bin" info "$dir/${s}b_ksp.hdr"
  grep -q "^format        bart" "$dir/out" && echo "ok: info says bart" || { echo "FAIL: info format"; fail=1; }
done
grep -q "^matrix        12 x 12 x 12 (3D)" "$dir/out" && echo "ok: 3D matrix from the '# mrirecon' note" || { echo "FAIL: 3D matrix"; fail=1; }

# ---- matrix without the note: estimated (2 ceil(max |k|)) or given --------------------------------------
for f in traj ksp; do
  awk '/^# mrirecon/ {skip = 1; next} /^#/ {skip = 0} !skip' "$dir/s2b_$f.hdr" >"$dir/bare_$f.hdr"
  cp "$dir/s2b_$f.cfl" "$dir/bare_$f.cfl"
done
expect 0 "info on BART without the note" -- "$bin" info "$dir/bare"
grep -Eq "^matrix        3[24] x 3[24] \(2D\)" "$dir/out" && echo "ok: estimated matrix $(grep ^matrix "$dir/out")" || { echo "FAIL: estimated matrix"; grep ^matrix "$dir/out"; fail=1; }
expect 0 "BART without the note, --matrix 40,36 --fov 200" -- "$bin" convert "$dir/bare" "$dir/given.h5" --matrix 40,36 --fov 200 -q
expect 0 "info on it" -- "$bin" info "$dir/given.h5"
grep -q "^matrix        40 x 36 (2D)" "$dir/out" && grep -q "^fov_mm        200 x 200 x 200" "$dir/out" && echo "ok: --matrix and --fov used" ||
  { echo "FAIL: --matrix/--fov"; grep -E "^matrix|^fov" "$dir/out"; fail=1; }

# ---- --bart-scale: data x sqrt(N) out, / sqrt(N) in ---------------------------------------------------
expect 0 "to BART with --bart-scale" -- "$bin" convert "$dir/s2.h5" "$dir/sc" --bart-scale -q
expect 0 "back with --bart-scale" -- "$bin" convert "$dir/sc" "$dir/scback.h5" --bart-scale -q
check "--bart-scale round trip (relative <= 1e-6)" "$kcmp" "$dir/scback.h5" "$dir/s2.h5" 1e-6
expect 0 "back without --bart-scale" -- "$bin" convert "$dir/sc" "$dir/scraw.h5" -q
if "$kcmp" "$dir/scraw.h5" "$dir/s2.h5" 1e-3 2>/dev/null; then echo "FAIL: --bart-scale did not scale"; fail=1; else echo "ok: --bart-scale scales the data"; fi

# ---- multi-volume output names and BART of an existing mrirecon file with truth: info line --------------
expect 0 "to .h5 again (mrirecon -> mrirecon)" -- "$bin" convert "$dir/s2.h5" "$dir/copy.h5" -q
check "mrirecon -> mrirecon is bit-identical" "$kcmp" "$dir/copy.h5" "$dir/s2.h5"

# ---- coil maps: NAME_sens [X Y Z COIL] both ways ---------------------------------------------------------
"$bin" phantom -o "$dir/c3.h5" --matrix 24 --spokes 40 --readout 48 --coils 3 -q >/dev/null || { echo "FAIL: phantom --coils"; exit 1; }
expect 0 "scan with maps to BART" -- "$bin" convert "$dir/c3.h5" "$dir/c3b" -q
[ "$(sed -n 2p "$dir/c3b_sens.hdr" | awk '{print $1, $2, $3, $4, $5}')" = "24 24 1 3 1" ] &&
  [ "$(stat -c %s "$dir/c3b_sens.cfl")" -eq $((24 * 24 * 3 * 8)) ] && echo "ok: c3b_sens [24 24 1 3], 13824 bytes" ||
  { echo "FAIL: c3b_sens"; head -2 "$dir/c3b_sens.hdr"; fail=1; }
expect 0 "maps back from BART" -- "$bin" convert "$dir/c3b" "$dir/c3back.h5" -q
check "ours -> BART -> ours with maps: traj, data and maps bit-identical" "$kcmp" "$dir/c3back.h5" "$dir/c3.h5"
expect 0 "and to BART again" -- "$bin" convert "$dir/c3back.h5" "$dir/c3b2" -q
for f in traj ksp sens; do
  check "BART -> ours -> BART: ${f}.cfl byte for byte" cmp "$dir/c3b_$f.cfl" "$dir/c3b2_$f.cfl"
done
expect 0 "info lists the BART maps" -- "$bin" info "$dir/c3b"
grep -q "^coil maps     3 x 1 x 24 x 24" "$dir/out" && echo "ok: info: $(grep '^coil maps' "$dir/out")" || { echo "FAIL: info coil maps"; fail=1; }
expect 0 "recon of the BART pair uses its maps" -- "$bin" recon "$dir/c3b" -o "$dir/c3r" --iters 5
grep -q "SENSE with the maps of" "$dir/err" && echo "ok: SENSE with the BART maps" || { echo "FAIL: recon did not use the maps"; cat "$dir/err"; fail=1; }
for f in traj ksp sens; do # without the '# mrirecon' note: the image matrix is the maps' grid (as bart pics)
  awk '/^# mrirecon/ {skip = 1; next} /^#/ {skip = 0} !skip' "$dir/c3b_$f.hdr" >"$dir/c3bare_$f.hdr"
  cp "$dir/c3b_$f.cfl" "$dir/c3bare_$f.cfl"
done
expect 0 "info: matrix from the maps" -- "$bin" info "$dir/c3bare"
grep -q "^matrix        24 x 24 (2D)" "$dir/out" && echo "ok: matrix from the maps' grid" || { echo "FAIL: $(grep ^matrix "$dir/out")"; fail=1; }
bads() { for f in traj ksp sens; do cp "$dir/c3b_$f.hdr" "$dir/badsens_$1_$f.hdr"; cp "$dir/c3b_$f.cfl" "$dir/badsens_$1_$f.cfl"; done; }
bads coils; sed -i '2s/.*/24 24 1 2 1 1 1 1 1 1 1 1 1 1 1 1/' "$dir/badsens_coils_sens.hdr"
bads maps2; sed -i '2s/.*/24 24 1 3 2 1 1 1 1 1 1 1 1 1 1 1/' "$dir/badsens_maps2_sens.hdr"; cat "$dir/c3b_sens.cfl" >>"$dir/badsens_maps2_sens.cfl"
bads grid; sed -i '2s/.*/12 48 1 3 1 1 1 1 1 1 1 1 1 1 1 1/' "$dir/badsens_grid_sens.hdr"
bads short; head -c 1000 "$dir/c3b_sens.cfl" >"$dir/badsens_short_sens.cfl"
bads garbage; printf 'not a BART header\n' >"$dir/badsens_garbage_sens.hdr" # was passed over: maps estimated instead
for k in coils:"coil maps (dimension 3" maps2:"one set of maps" grid:"coil maps of 12x48x1" short:"badsens_short_sens" \
  garbage:"badsens_garbage_sens.hdr: no '# Dimensions' section"; do
  expect 1 "BART maps malformed: ${k%%:*}" -- "$bin" convert "$dir/badsens_${k%%:*}" "$dir/o_s_${k%%:*}.h5"
  grep -q "${k#*:}" "$dir/err" && echo "ok: $(grep -v '^mrirecon: info' "$dir/err")" || { echo "FAIL: ${k%%:*}: $(cat "$dir/err")"; fail=1; }
  [ -e "$dir/o_s_${k%%:*}.h5" ] && { echo "FAIL: ${k%%:*}: output written"; fail=1; }
done

# ---- malformed BART input: exit 1, one message, nothing written -----------------------------------------
bad() { # NAME: a copy of s2b as bad_NAME_{traj,ksp}
  for f in traj ksp; do cp "$dir/s2b_$f.hdr" "$dir/bad_$1_$f.hdr"; cp "$dir/s2b_$f.cfl" "$dir/bad_$1_$f.cfl"; done
}
bad short; head -c 100 "$dir/s2b_ksp.cfl" >"$dir/bad_short_ksp.cfl"
bad dims; sed -i '2s/.*/1 7 1 1 1 1 1 1 1 1 1 1 1 1 1 1/' "$dir/bad_dims_ksp.hdr"
bad time; m=$(sed -n 2p "$dir/s2b_ksp.hdr" | awk '{print $2}')
sed -i "2s/.*/3 $((m / 2)) 2/" "$dir/bad_time_traj.hdr"; sed -i "2s/.*/1 $((m / 2)) 1 1 1 1 1 1 1 1 2/" "$dir/bad_time_ksp.hdr"
bad nohdr; rm "$dir/bad_nohdr_traj.hdr"
bad text; printf '# Dimensions\n3 x 1\n' >"$dir/bad_text_traj.hdr"
bad nan; printf '\x00\x00\xc0\x7f' | dd of="$dir/bad_nan_ksp.cfl" bs=1 seek=8 conv=notrunc 2>/dev/null
bad imag; printf '\x00\x00\x80\x3f' | dd of="$dir/bad_imag_traj.cfl" bs=1 seek=4 conv=notrunc 2>/dev/null
bad zero; head -c "$(stat -c %s "$dir/s2b_traj.cfl")" /dev/zero >"$dir/bad_zero_traj.cfl"
# |k| = 1e30 without the note: the estimated matrix 2 ceil(1e30) overflowed int64 (UBSan; "matrix[0] = 0" after)
bad huge; for f in traj ksp; do awk '/^# mrirecon/ {skip = 1; next} /^#/ {skip = 0} !skip' "$dir/s2b_$f.hdr" >"$dir/bad_huge_$f.hdr"; done
printf '\xca\xf2\x49\x71' | dd of="$dir/bad_huge_traj.cfl" bs=1 seek=0 conv=notrunc 2>/dev/null
for k in short dims time nohdr text nan imag zero huge; do
  expect 1 "BART malformed: $k" -- "$bin" convert "$dir/bad_${k}_ksp.cfl" "$dir/o_$k.h5"
  grep -v '^mrirecon: ' "$dir/err" | grep -c . | grep -q '^1$' && echo "ok: $k: $(grep -v '^mrirecon: ' "$dir/err")" ||
    { echo "FAIL: $k: stderr:"; cat "$dir/err"; fail=1; }
  [ -e "$dir/o_$k.h5" ] && { echo "FAIL: $k: output written"; fail=1; }
done
expect 1 "BART trajectory all zeros" -- "$bin" info "$dir/bad_zero_ksp.hdr"
check "refused: every trajectory value is 0 (was a 1x1 matrix, exit 0)" grep -q "every trajectory value is 0" "$dir/err"
expect 1 "BART trajectory reaching 1e30 cycles/FOV" -- "$bin" info "$dir/bad_huge_ksp.hdr"
check "refused naming |k| = 1e+30 and the matrix limit" grep -q "reaches |k| = 1e+30 cycles/FOV on axis x" "$dir/err"
# a broken header of the pair, the pair named by its prefix: its own reason, not "No such file"
bad brokenhdr; printf 'garbage\n' >"$dir/bad_brokenhdr_ksp.hdr"
expect 1 "BART pair with a broken _ksp.hdr, named by the prefix" -- "$bin" info "$dir/bad_brokenhdr"
check "the message names the broken header and why" grep -q "bad_brokenhdr_ksp.hdr: no '# Dimensions' section" "$dir/err"
check "not 'No such file'" bash -c '! grep -q "No such file" "$1"' _ "$dir/err"
# a trajectory name that is no text (a terminal escape in the '# mrirecon' note): convert writes what its own
# reader reads back
bad esc; sed -i "s/^trajectory .*/trajectory $(printf '\033')[31mred/" "$dir/bad_esc_traj.hdr" "$dir/bad_esc_ksp.hdr"
expect 0 "convert BART with an escape in its trajectory name" -- "$bin" convert "$dir/bad_esc" "$dir/esc.h5" -q
expect 0 "info reads the converted file back" -- "$bin" info "$dir/esc.h5"
check "the name is text ('?' for the escape)" grep -q "^trajectory    ?\[31mred" "$dir/out"

# planted links at the temporary names of the old scheme, for the next few hundred process IDs: convert
# writes around them, the victim keeps its content
echo "victim" >"$dir/victim.txt"
for p in $(seq $$ $(($$ + 300))); do
  ln -s "$dir/victim.txt" "$dir/.planted.h5.tmp$p"
  ln -s "$dir/victim.txt" "$dir/..planted.h5.tmp$p.tmp$p"
done
expect 0 "convert into a folder with planted links" -- "$bin" convert "$dir/s2.h5" "$dir/planted.h5" -q
check "the victim is untouched" test "$(cat "$dir/victim.txt")" = victim
check "the output was written" "$kcmp" "$dir/planted.h5" "$dir/s2.h5"
find "$dir" -maxdepth 1 -name '.*planted.h5.tmp*' -type l -delete

[ -z "$(ls -A "$dir" | grep '^\.')" ] && echo "ok: no temporary files left" || { echo "FAIL: temporary files: $(ls -A "$dir" | grep '^\.')"; fail=1; }

# ---- BART itself, when installed ------------------------------------------------------------------------
if command -v bart >/dev/null 2>&1; then
  check "bart show -m reads our ksp" bart show -m "$dir/s2b_ksp"
  check "bart show -m reads our traj" bart show -m "$dir/s2b_traj"
  check "bart show -m reads our sens" bart show -m "$dir/c3b_sens"
else
  echo "skip: bart is not installed (optional)"
fi

[ "$fail" -eq 0 ] && echo "cli_convert: all passed" || echo "cli_convert: FAILED"
exit "$fail"
