#!/usr/bin/env bash
# The whole test suite under load, from a checkout that lives somewhere unusual: a fresh clone of this
# repository's HEAD inside a private folder made by `mktemp -d` (mode 0700: other users cannot enter
# it) under a name with a space, built there with `scripts/test.sh` (setup.sh, warnings as errors), then
# `scripts/test.sh -j JOBS` ROUNDS times in a row while BURNERS busy loops keep every core busy. Stops
# at the first round that fails; exit 0 when every round passed. Tests must synchronise on events
# (files, pipes, signals), never on the time something takes, to pass here (docs/FUZZING.md, "Tests
# under load").
#   scripts/stress.sh [--rounds N] [--jobs J] [--burners B] [--keep] [-- extra ctest arguments]
# Defaults: 5 rounds, -j 4, one burner per core (nproc). MR_CUDA (default OFF here: the GPU tests skip
# without a GPU anyway, and the CUDA build takes long), MR_CMAKE_ARGS and MR_SKIP_APT (default 1) are
# passed to setup.sh. Only committed work is tested (it is a clone of HEAD). Prints the time each
# round took; --keep leaves the folder (its path is printed) for a look at a failure.
set -uo pipefail
rounds=5 jobs=4 burners=$(nproc) keep=0 extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --burners) burners=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: scripts/stress.sh [--rounds N] [--jobs J] [--burners B] [--keep] [-- ctest args]" >&2; exit 2 ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
top=$(mktemp -d) || exit 1
chmod 0700 "$top"
work="$top/check out"
burner_pids=()
finish() {
  local p
  for p in "${burner_pids[@]}"; do kill "$p" 2> /dev/null; done
  for p in "${burner_pids[@]}"; do wait "$p" 2> /dev/null; done
  if [ "$keep" = 1 ]; then echo "stress: kept $top" >&2; else rm -rf "$top"; fi
}
trap finish EXIT
git clone -q --no-hardlinks "$repo" "$work" || exit 1
echo "stress: $(git -C "$work" log -1 --format='%h %s' | cut -c1-100)" >&2
echo "stress: checkout in '$work' (parent mode $(stat -c %a "$top")); $rounds round(s) of ctest -j $jobs with $burners busy loop(s)" >&2
t=$SECONDS
(cd "$work" && BUILD_DIR=build MR_CUDA="${MR_CUDA:-OFF}" MR_WERROR="${MR_WERROR:-ON}" MR_SKIP_APT="${MR_SKIP_APT:-1}" \
  scripts/setup.sh) > "$top/build.log" 2>&1 || { tail -40 "$top/build.log" >&2; echo "stress: build failed" >&2; keep=1; exit 1; }
echo "stress: built in $((SECONDS - t)) s" >&2
for _ in $(seq 1 "$burners"); do
  bash -c 'while :; do :; done' &
  burner_pids+=($!)
done
for r in $(seq 1 "$rounds"); do
  t=$SECONDS
  if ! (cd "$work" && bash scripts/test.sh -j "$jobs" "${extra[@]}") > "$top/round$r.log" 2>&1; then
    grep -E "tests passed|\(Failed\)|\(Timeout\)|Not Run" "$top/round$r.log" >&2
    tail -n 80 "$top/round$r.log" >&2
    echo "stress: round $r of $rounds FAILED after $((SECONDS - t)) s (log: $top/round$r.log)" >&2
    keep=1
    exit 1
  fi
  echo "stress: round $r of $rounds passed in $((SECONDS - t)) s: $(grep -E 'tests passed' "$top/round$r.log")" >&2
done
echo "stress: all $rounds round(s) passed" >&2
