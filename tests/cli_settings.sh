#!/usr/bin/env bash
# The library names a setting as {name} in its messages and the command line spells it --name
# (base/status.h): every {name} in the library's sources (base/ gpu/ solver/ io/ phantoms/) must be an
# option of some command (its --help lists --name), and no library string may spell an option itself;
# a message reaches the user spelled (--volume on a multi-volume file, --device on a machine without a GPU).
#   bash tests/cli_settings.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect(), check()
src=$(cd "$(dirname "$0")/.." && pwd)
lib=("$src/base" "$src/gpu" "$src/solver" "$src/io" "$src/phantoms") # the path may hold spaces

for c in recon batch convert info phantom bench validate cache; do "$bin" $c --help; done >"$dir/help.txt" 2>&1
names=$(grep -rhoE '"[^"]*\{[a-z][a-z0-9-]*\}' --include='*.c' --include='*.cu' --include='*.h' "${lib[@]}" |
  grep -oE '\{[a-z][a-z0-9-]*\}' | tr -d '{}' | sort -u)
check "the library names settings as {name}" test -n "$names"
for n in $names; do
  check "{$n} is an option: --$n in some command's --help" grep -qE -- "--$n( |=|,|$)" "$dir/help.txt"
done
# a string in the library that spells an option itself (" --name" or "(--name") instead of {name}; a quoted
# command line (`mrirecon phantom --suite DIR` in the suite's README) is a fact, not advice
grep -rnE '"[^"]*[ (]--[a-z][a-z0-9-]*' --include='*.c' --include='*.cu' "${lib[@]}" | grep -vE ':\s*(/\*|\*)' |
  grep -v '`mrirecon ' >"$dir/spelled.txt"
check "no library string spells an option itself (use {name})" test ! -s "$dir/spelled.txt"
[ -s "$dir/spelled.txt" ] && cat "$dir/spelled.txt"

# spelled on the way out: --device gpu without a GPU (the CPU-only build or a machine without one)
expect 0 "a small scan" -- "$bin" phantom -o "$dir/s.h5" --matrix 16 --spokes 8 -q
if ! "$bin" recon "$dir/s.h5" -o "$dir/o" --device gpu -q >/dev/null 2>"$dir/err"; then
  check "a GPU request without a GPU names --device" grep -q -- "--device gpu: no usable GPU" "$dir/err"
fi
exit $fail
