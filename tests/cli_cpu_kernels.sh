#!/usr/bin/env bash
# Runtime dispatch of the CPU kernels (base/cpu.h): MR_CPU_KERNEL forces each level this machine
# supports, and the run says which one ran (--verbose, report.json, bench's config column); an
# unknown or unsupported level is a clear error (exit 1, nothing written), never a crash.
#   bash tests/cli_cpu_kernels.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect()

expect 0 "phantom" -- "$bin" phantom -o "$dir/scan.h5" --dim 2 --matrix 32 --traj radial --spokes 51 --readout 64 -q
supported=""
for level in avx512 avx2 portable; do
  MR_CPU_KERNEL=$level "$bin" recon "$dir/scan.h5" -o "$dir/probe" --method cg --iters 2 --device cpu -q \
    >/dev/null 2>"$dir/probe.err"
  rc=$?
  rm -rf "$dir/probe"
  if [ $rc -eq 0 ]; then
    supported="$supported $level"
  elif [ $rc -eq 1 ] && grep -q "MR_CPU_KERNEL=$level" "$dir/probe.err"; then
    echo "ok: $level is not available here: $(head -n 1 "$dir/probe.err")"
    [ -d "$dir/probe" ] && { echo "FAIL: $level refused but wrote $dir/probe"; fail=1; }
  else
    echo "FAIL: MR_CPU_KERNEL=$level: exit $rc"
    sed 's/^/  stderr: /' "$dir/probe.err"
    fail=1
  fi
done
echo "levels this machine runs:$supported"
case " $supported " in *" portable "*) ;; *) echo "FAIL: the portable level must always run"; fail=1 ;; esac

for level in $supported; do
  out="$dir/out-$level"
  expect 0 "recon with MR_CPU_KERNEL=$level" -- env MR_CPU_KERNEL=$level "$bin" recon "$dir/scan.h5" -o "$out" \
    --method cg --iters 5 --device cpu -v
  check "--verbose names the $level kernels" grep -q "cpu kernels: $level" "$dir/err"
  check "report.json says cpu_kernels $level" grep -q "\"cpu_kernels\": \"$level\"" "$out/report.json"
  expect 0 "bench with MR_CPU_KERNEL=$level" -- env MR_CPU_KERNEL=$level "$bin" bench --device cpu \
    --problem 32,32,1:2000 --what kernels --threads 2 --reps 1 -q
  check "bench's config column says $level" grep -q "^FHd  cpu .* $level" "$dir/out"
done
# the best level is the default
set -- $supported
best=${1:-portable}
expect 0 "recon with MR_CPU_KERNEL unset" -- env -u MR_CPU_KERNEL "$bin" recon "$dir/scan.h5" -o "$dir/out-auto" \
  --method cg --iters 5 --device cpu -v
check "unset: the best level ($best) runs" grep -q "cpu kernels: $best" "$dir/err"
expect 0 "MR_CPU_KERNEL=auto" -- env MR_CPU_KERNEL=auto "$bin" recon "$dir/scan.h5" -o "$dir/out-auto2" \
  --method cg --iters 5 --device cpu -v
check "auto: the best level ($best) runs" grep -q "cpu kernels: $best" "$dir/err"

expect 1 "MR_CPU_KERNEL=sse9" -- env MR_CPU_KERNEL=sse9 "$bin" recon "$dir/scan.h5" -o "$dir/never"
check "the message names the variable and the choices" grep -q "MR_CPU_KERNEL='sse9': expected auto, avx512, avx2 or portable" "$dir/err"
check "nothing written" test ! -e "$dir/never"
check "nothing on stdout" test ! -s "$dir/out"
expect 0 "--help works whatever MR_CPU_KERNEL says" -- env MR_CPU_KERNEL=sse9 "$bin" recon --help
exit $fail
