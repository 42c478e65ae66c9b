#!/usr/bin/env bash
# Kill and resume: a batch (--jobs 1, 4 scans) is killed after its first scan finished, while its second
# waits at a test gate (MR_TEST_SCAN_GATE, recon/batch/batch.c: no race with the scans), then
# resumed; every image dataset and PNG must equal those of an uninterrupted run, and the folders
# finished before the kill must be untouched (same inode and mtime). Done once with SIGKILL (no
# cleanup: a stale .partial folder is left for --resume to remove) and once with SIGINT (exit
# 130, partial folders removed, summary written).
# Usage: bash cli_batch_resume.sh MRIRECON SCRATCH
. "$(dirname "$0")/batch_lib.sh"
ITERS=40
gen_scan "$S/in/s1.h5" 41
for i in 2 3 4; do gen_scan "$S/in/s$i.h5" $((90 + 10 * i)); done
scans="s1 s2 s3 s4"

"$MR" batch "$S/in" -o "$S/ref" --jobs 1 --iters $ITERS -q
expect_rc 0 $? "uninterrupted reference run"

# kill_after_first SIGNAL OUTDIR: start the batch with s2 held at the gate, wait until it is (s1 is then
# finished and in place: one worker), send SIGNAL. Sets RC (the batch's exit status) and KILLED.
kill_after_first() {
  local gate=$S/gate-$1
  rm -rf "$gate"
  mkdir -p "$gate"
  mkfifo "$gate/s2.go" # the other scans have no FIFO: they run straight through
  MR_TEST_SCAN_GATE=$gate "$MR" batch "$S/in" -o "$2" --jobs 1 --iters $ITERS 2> "$2.err" &
  local pid=$!
  while ! ls "$gate"/s2.*.held > /dev/null 2>&1 && kill -0 $pid 2> /dev/null; do
    sleep 0.02
  done
  KILLED=0
  if ls "$gate"/s2.*.held > /dev/null 2>&1 && kill -0 $pid 2> /dev/null; then
    kill -s "$1" $pid && KILLED=1
  fi
  wait $pid
  RC=$?
}

for sig in KILL INT; do
  out=$S/out-$sig
  kill_after_first $sig "$out"
  [ $KILLED = 1 ] || fail "SIG$sig: the batch ended before s2 was held: $(cat "$out.err")"
  if [ $sig = INT ]; then
    expect_rc 130 $RC "batch interrupted by SIGINT"
    ls -a "$out" | grep -q '\.partial$' && fail "SIGINT left a partial folder"
    grep -q ',interrupted,' "$out/summary.csv" || fail "summary.csv after SIGINT lacks the interrupted scans"
    ok "SIGINT: no partial folder, summary lists the interrupted scans"
  else
    expect_rc 137 $RC "batch killed by SIGKILL"
  fi
  done_before=""
  for s in $scans; do [ -e "$out/$s/.done" ] && done_before="$done_before $s"; done
  [ "$done_before" = " s1" ] || fail "expected s1 alone finished before the kill, got:$done_before"
  [ -e "$out/s2" ] && fail "s2 finished although it was held"
  ok "SIG$sig after:$done_before"
  for s in $done_before; do stat -c '%i %Y %y' "$out/$s" "$out/$s"/* > "$S/stat-$sig-$s.before"; done

  "$MR" batch "$S/in" -o "$out" --jobs 1 --iters $ITERS --resume 2> "$S/resume-$sig.err"
  expect_rc 0 $? "resume after SIG$sig"
  cat "$S/resume-$sig.err"
  grep -q 'already finished' "$S/resume-$sig.err" || fail "resume did not report the finished scans"
  ls -a "$out" | grep -q '\.partial$' && fail "stale partial folder left after resume"
  for s in $scans; do check_scan_folder "$out/$s"; done
  for s in $done_before; do
    stat -c '%i %Y %y' "$out/$s" "$out/$s"/* | cmp -s - "$S/stat-$sig-$s.before" ||
      fail "$s was finished before the kill but changed on resume"
  done
  ok "folders finished before SIG$sig untouched (inode, mtime)"
  compare_outputs "$S/ref" "$out" $scans
  [ "$(grep -c ',ok,' "$out/summary.csv")" -ge 4 ] || fail "summary after resume lacks scans"
done

# a changed input is redone on --resume, the others are left alone
stat -c '%i %y' "$S/out-INT/s1" > "$S/s1.before"
gen_scan "$S/in/s2.h5" 71 # another size: another identity whatever the clock says
"$MR" batch "$S/in" -o "$S/out-INT" --jobs 1 --iters $ITERS --resume -q
expect_rc 0 $? "resume after changing s2"
stat -c '%i %y' "$S/out-INT/s1" | cmp -s - "$S/s1.before" || fail "s1 changed although its input did not"
cmp -s "$S/out-INT/s2/image_iterative.png" "$S/ref/s2/image_iterative.png" && fail "s2 was not redone after its input changed"
ok "changed input redone, unchanged ones kept"

echo "cli_batch_resume: all checks passed in $((SECONDS - t0)) s"
