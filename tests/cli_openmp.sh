#!/usr/bin/env bash
# OpenMP's wait settings (docs/RECON.md, "Threads"): mrirecon runs with a short spin (GOMP_SPINCOUNT 1000,
# set by executing itself once) unless the user chose a policy or a spin count, which it keeps; a copy of
# the program under another name (as a tool that wraps it would be) is not re-executed. `--version`'s third
# line shows what the process runs with.
#   bash tests/cli_openmp.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect(), check()

expect 0 "--version, nothing set" -- env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$bin" --version
check "a short spin by default" grep -qx "openmp wait: OMP_WAIT_POLICY unset, GOMP_SPINCOUNT 1000" "$dir/out"
expect 0 "--version, OMP_WAIT_POLICY=active" -- env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active "$bin" --version
check "the user's policy is kept" grep -qx "openmp wait: OMP_WAIT_POLICY active, GOMP_SPINCOUNT unset" "$dir/out"
expect 0 "--version, GOMP_SPINCOUNT=5" -- env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=5 "$bin" --version
check "the user's spin count is kept" grep -qx "openmp wait: OMP_WAIT_POLICY unset, GOMP_SPINCOUNT 5" "$dir/out"
cp "$bin" "$dir/other-name"
expect 0 "--version of a copy named other-name" -- env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$dir/other-name" --version
check "a program of another name is not re-executed" grep -qx "openmp wait: OMP_WAIT_POLICY unset, GOMP_SPINCOUNT unset" "$dir/out"
# the arguments survive the re-execution: a command runs as asked
expect 0 "phantom through the re-execution" -- env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$bin" phantom -o "$dir/a b.h5" --matrix 16 --spokes 8 -q
check "the file with a space in its name is written" test -s "$dir/a b.h5"
exit $fail
