#!/usr/bin/env bash
# Progress on stderr (recon/cli/progress_ui.h): with the delay forced to 0 (MR_PROGRESS_DELAY=0) every
# stage shows, as plain lines when stderr is not a terminal: recon's Q, F^H d, the iterative methods, DCF and gridding,
# validate's simulation, bench's rows; stdout carries only the results, unchanged; -q shows nothing;
# the default delay (1 s) keeps short stages silent; on a terminal (script(1), when installed) a bar
# is drawn in place and ends in a "done" line.
# The runs use --device cpu: on a GPU machine the default device changes which stages report (the
# GPU sums are single calls) and how long they take; the progress machinery is the same.
#   bash tests/cli_progress.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect()

has() { # LABEL FILE PATTERN
  if grep -q -- "$3" "$2"; then echo "ok: $1"; else echo "FAIL: $1 (no '$3' in $2)"; sed 's/^/  /' "$2" | head -20; fail=1; fi
}
hasnt() {
  if grep -q -- "$3" "$2"; then echo "FAIL: $1 ('$3' in $2)"; grep -- "$3" "$2" | head -5 | sed 's/^/  /'; fail=1; else echo "ok: $1"; fi
}

expect 0 "phantom" -- "$bin" phantom -o "$dir/scan.h5" --matrix 32 --snr 30 -q
export MR_PROGRESS_DELAY=0
expect 0 "recon --method all with the delay 0" -- "$bin" recon "$dir/scan.h5" -o "$dir/r1" --device cpu --method all --iters 5 \
  --q-cache off # Q computed (a Q from the cache takes no time to report)
cp "$dir/out" "$dir/out1"
cp "$dir/err" "$dir/err1"
for stage in "Q" "F^H d" "iterative" "cg" "DCF" "gridding-kb" "gridding-bilinear"; do
  has "progress line of $stage" "$dir/err1" "^mrirecon: progress: $stage [0-9]*% "
  has "$stage ends with a done line" "$dir/err1" "^mrirecon: progress: $stage done in [0-9.]* s$"
done
hasnt "no progress on stdout" "$dir/out1" "progress:"
hasnt "no bar escape codes in a log" "$dir/err1" $'\r'
check "stdout is the result table only (header + 4 methods)" test "$(wc -l <"$dir/out1")" -eq 5
expect 0 "recon -q with the delay 0" -- "$bin" recon "$dir/scan.h5" -o "$dir/r2" --device cpu --method all --iters 5 -q
check "-q: nothing on stderr" test ! -s "$dir/err"
check "-q: the same stdout lines (seconds aside)" \
  bash -c 'diff <(awk "{print \$1, \$2, \$3}" "$0") <(awk "{print \$1, \$2, \$3}" "$1")' "$dir/out1" "$dir/out"
unset MR_PROGRESS_DELAY
expect 0 "recon with the default delay" -- "$bin" recon "$dir/scan.h5" -o "$dir/r3" --device cpu --method all --iters 5
# a stage shows only once it has run for the delay (1 s): no line of one that was still younger (the
# scan is small, so normally nothing shows; a loaded machine may take longer than 1 s for a stage)
hasnt "short stages stay silent (no line before 1 s)" "$dir/err" "progress: .*(0\.[0-9]* s[,)]\|progress: .* done in 0\.[0-9]* s"

export MR_PROGRESS_DELAY=0
expect 0 "validate --size 8 with the delay 0" -- "$bin" validate -o "$dir/val" --device cpu --size 8 --iters 2
has "validate: the simulation shows" "$dir/err" "^mrirecon: progress: simulated scan done in"
has "validate: the reconstructions show" "$dir/err" "^mrirecon: progress: iterative done in"
hasnt "validate: no progress on stdout" "$dir/out" "progress:"
expect 0 "bench (CPU, tiny) with the delay 0" -- "$bin" bench --device cpu --problem 12,10,1:300 --what all --reps 2 \
  --iters 2 --threads 2 --scratch "$dir/bench"
has "bench: the rows show" "$dir/err" "^mrirecon: progress: bench Q cpu "
has "bench: the end-to-end run shows" "$dir/err" "^mrirecon: progress: cg done in"
hasnt "bench: no progress on stdout" "$dir/out" "progress:"
expect 0 "bench -q" -- "$bin" bench --device cpu --problem 12,10,1:300 --what kernels --reps 1 --threads 2 -q
check "bench -q: nothing on stderr" test ! -s "$dir/err"

# a terminal: script(1) gives the command a pseudo-terminal
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
  script -qec "\"$bin\" recon \"$dir/scan.h5\" -o \"$dir/r4\" --device cpu --method cg --iters 5 2>&1" /dev/null >"$dir/tty" 2>&1
  has "terminal: a bar is drawn in place" "$dir/tty" $'\r\033\\[K'
  has "terminal: the bar has its frame" "$dir/tty" "cg \\[[#-]*\\] *[0-9]*%"
  has "terminal: the stage ends with a done line" "$dir/tty" "mrirecon: progress: cg done in"
else
  echo "skip: no script(1) here: the terminal bar is not checked"
fi
exit $fail
