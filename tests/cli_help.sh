#!/usr/bin/env bash
# Top-level help: `mrirecon help COMMAND` prints exactly what `mrirecon COMMAND --help` prints (exit 0),
# `mrirecon help` the command list, an unknown command exit 2 with a message on stderr only.
#   bash tests/cli_help.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect()

expect 0 "help" -- "$bin" help
grep -q "^Commands:" "$dir/out" || { echo "FAIL: 'help' prints no command list"; fail=1; }
commands=$(awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{exit}' "$dir/out")
[ -n "$commands" ] || { echo "FAIL: no commands listed"; fail=1; }
for c in $commands; do
  expect 0 "help $c" -- "$bin" help "$c"
  cp "$dir/out" "$dir/help_$c"
  expect 0 "$c --help" -- "$bin" "$c" --help
  if cmp -s "$dir/out" "$dir/help_$c"; then
    echo "ok: 'help $c' = '$c --help'"
  else
    echo "FAIL: 'help $c' differs from '$c --help'"
    fail=1
  fi
  grep -q "Usage: mrirecon $c" "$dir/help_$c" || { echo "FAIL: 'help $c' has no usage line of $c"; fail=1; }
done
expect 2 "help of an unknown command" -- "$bin" help no-such-command
grep -q "no-such-command" "$dir/err" || { echo "FAIL: the message does not name the command"; fail=1; }
[ -s "$dir/out" ] && { echo "FAIL: unknown command printed on stdout"; fail=1; }
exit $fail
