#!/usr/bin/env bash
# mrirecon batch on a small suite: good scans finish into complete folders, a corrupt and an empty
# file are reported with their reasons and skipped, exit status 1; a run with only good scans
# (given through a list file) exits 0; a non-empty OUTDIR is refused (2); usage errors exit 2.
# Usage: bash cli_batch.sh MRIRECON SCRATCH
. "$(dirname "$0")/batch_lib.sh"

for i in 1 2 3; do gen_scan "$S/in/scan$i.h5" $((31 + 10 * i)); done
head -c 4096 /dev/urandom > "$S/in/corrupt.h5"
: > "$S/in/empty.h5"

# ---- mixed suite: 3 good, 2 bad ----------------------------------------------------------------
"$MR" batch "$S/in" -o "$S/out" --iters 8 --jobs 2 2> "$S/err1.txt"
rc=$?
cat "$S/err1.txt"
expect_rc 1 $rc "batch with two bad files"
for i in 1 2 3; do check_scan_folder "$S/out/scan$i"; done
ok "3 good scans have complete folders"
[ ! -e "$S/out/corrupt" ] && [ ! -e "$S/out/empty" ] || fail "a folder was made for a failed scan"
ls -a "$S/out" | grep -q '\.partial$' && fail "partial folder left behind"
for f in summary.csv summary.md summary.html; do [ -s "$S/out/$f" ] || fail "$f missing"; done
csv=$S/out/summary.csv
[ "$(grep -c '^scan[123],.*,ok,iterative,' "$csv")" -ge 3 ] || fail "summary.csv lacks the good scans"
for bad in corrupt empty; do
  line=$(grep "^$bad," "$csv") || fail "summary.csv does not list $bad"
  echo "$line" | grep -q ',failed,' || fail "$bad not marked failed: $line"
  reason=$(echo "$line" | sed 's/^.*,failed,\([^,]*,\)\{8\}//') # skip 7 metric fields and scan_seconds
  [ ${#reason} -ge 10 ] || fail "$bad: no reason given: $line"
  grep -q "\*\*$bad\*\*.*failed" "$S/out/summary.md" || fail "summary.md does not list $bad with its reason"
  ok "$bad listed as failed: $reason"
done
grep -q 'empty file' "$csv" || fail "the empty file's reason does not say it is empty"
# PSNR of the good scans is a number
psnr=$(awk -F, '$1=="scan1" && $5=="image" {print $7}' "$csv")
awk -v p="$psnr" 'BEGIN{exit !(p+0 > 10)}' || fail "scan1 PSNR '$psnr' is not > 10 dB"
ok "scan1 PSNR vs image truth $psnr dB (> 10)"
# not a terminal: one line per finished scan
n=$(grep -cE '^batch: \[[0-9]+/5\] ' "$S/err1.txt")
[ "$n" = 5 ] || fail "expected 5 progress lines, got $n"
ok "5 progress lines on a non-terminal stderr"

# ---- on a terminal: a bar redrawn in place (script(1) provides the terminal) -----------------
if command -v script > /dev/null 2>&1; then
  script -qec "'$MR' batch '$S/in/scan1.h5' '$S/in/scan2.h5' -o '$S/tty' --iters 8" /dev/null > "$S/tty.txt" 2>&1
  expect_rc 0 $? "batch on a terminal"
  grep -q "$(printf '\r\033\\[K')\\[#*-*\\] [0-9]/2 .*ETA" "$S/tty.txt" || fail "no progress bar on a terminal: $(cat -v "$S/tty.txt")"
  grep -qE '^batch: \[[0-9]/2\] ' "$S/tty.txt" && fail "per-scan lines printed on a terminal"
  ok "progress bar on a terminal"
else
  echo "note: script(1) absent, terminal progress not checked"
fi

# ---- only good scans, through a list file with a comment and relative paths -------------------
mkdir -p "$S/lists"
printf '# good scans only\n../in/scan1.h5\n\n../in/scan3.h5   # the last one\n' > "$S/lists/good.txt"
"$MR" batch @"$S/lists/good.txt" -o "$S/good" --iters 8 -q
expect_rc 0 $? "batch with only good scans"
check_scan_folder "$S/good/scan1"
check_scan_folder "$S/good/scan3"
[ ! -e "$S/good/scan2" ] || fail "scan2 was not in the list"

# ---- same name from two folders: disambiguated ------------------------------------------------
mkdir -p "$S/in2"
cp "$S/in/scan1.h5" "$S/in2/scan1.h5"
"$MR" batch "$S/in/scan1.h5" "$S/in2/scan1.h5" -o "$S/clash" --iters 4 -q
expect_rc 0 $? "two scans with one name"
check_scan_folder "$S/clash/scan1"
check_scan_folder "$S/clash/scan1-2"

# ---- refusals and usage errors -----------------------------------------------------------------
before=$(ls -la --time-style=full-iso "$S/good/scan1")
"$MR" batch "$S/in/scan1.h5" -o "$S/good" --iters 8 2> "$S/err2.txt"
expect_rc 2 $? "fresh batch into a non-empty OUTDIR"
grep -q -- '--resume' "$S/err2.txt" || fail "the refusal does not mention --resume: $(cat "$S/err2.txt")"
[ "$before" = "$(ls -la --time-style=full-iso "$S/good/scan1")" ] || fail "refused run touched OUTDIR"
"$MR" batch "$S/in/scan1.h5" 2> /dev/null
expect_rc 2 $? "missing -o"
"$MR" batch "$S/in/scan1.h5" -o "$S/x" --resume --force 2> /dev/null
expect_rc 2 $? "--resume with --force"
"$MR" batch "$S/in/scan1.h5" -o "$S/x" --jobs -1 2> /dev/null
expect_rc 2 $? "--jobs -1"
"$MR" batch --help > "$S/help.txt"
expect_rc 0 $? "--help"
grep -q '130' "$S/help.txt" && grep -q -- '--resume' "$S/help.txt" || fail "--help lacks exit codes or --resume"
"$MR" batch @"$S/nonexistent.txt" -o "$S/y" 2> "$S/err3.txt"
expect_rc 1 $? "missing list file"
grep -q 'nonexistent.txt' "$S/err3.txt" || fail "missing list file not named"

echo "cli_batch: all checks passed in $((SECONDS - t0)) s"
