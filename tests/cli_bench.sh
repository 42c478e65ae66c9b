#!/usr/bin/env bash
# `mrirecon bench`: help, usage errors, the GPU-only options without a GPU, and a tiny CPU run of the
# ladder and the end-to-end reconstruction with --json (exit codes, the table on stdout, a JSON file
# with one row per sum and the two end-to-end entries: Q computed into an emptied cache, then read back).
#   bash tests/cli_bench.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh"

expect 0 "--help" -- "$bin" bench --help
check "--help lists --problem" grep -q -- "--problem" "$dir/out"
expect 2 "bad --problem" -- "$bin" bench --problem 12x
check "bad --problem: message names the value" grep -q "12x" "$dir/err"
expect 2 "zero matrix edge" -- "$bin" bench --problem 0,4,1:10
expect 2 "--reps 0" -- "$bin" bench --reps 0
expect 2 "unknown --what" -- "$bin" bench --what everything
if [ "$("$bin" bench --device gpu --problem 4,4,1:8 --what kernels --reps 1 -q >/dev/null 2>&1; echo $?)" = 1 ]; then
  # no usable GPU here: --device gpu and --sweep are run-time failures with a message, nothing on stdout
  expect 1 "--device gpu without a GPU" -- "$bin" bench --device gpu --problem 4,4,1:8 -q
  check "--device gpu: message" grep -q "no usable GPU" "$dir/err"
  check "--device gpu: no table on stdout" test ! -s "$dir/out"
  expect 1 "--sweep without a GPU" -- "$bin" bench --sweep --device auto -q
  expect 1 "--what q without a GPU" -- "$bin" bench --what q --device gpu:all --problem 4,4,1:8 -q
  check "--what q: message" grep -q "no usable GPU" "$dir/err"
fi
expect 2 "bad --device list" -- "$bin" bench --device gpu:0,x --what q
check "bad --device: one message format" grep -q "'gpu:0,x' is not auto, cpu, gpu, gpu:N, gpu:N,M,... or gpu:all" "$dir/err"

expect 0 "tiny CPU run with e2e and JSON" -- "$bin" bench --device cpu --problem 12,10,1:300 --what all --reps 1 \
  --iters 2 --threads 2 --scratch "$dir/scratch" --json "$dir/bench.json" -q
check "table has a Q row" grep -qE "^Q +cpu" "$dir/out"
check "table has an FHd row" grep -qE "^FHd +cpu" "$dir/out"
check "end-to-end line" grep -q "end to end" "$dir/out"
check "JSON written" test -s "$dir/bench.json"
check "JSON has rows and e2e" grep -q '"rows"' "$dir/bench.json"
check "JSON has pairs_per_s" grep -q '"pairs_per_s"' "$dir/bench.json"
check "no temporary files left" test -z "$(find "$dir" -name '*.tmp*')"
check "e2e: the second run reads Q from the cache" grep -qE "warm Q cache.*Q [0-9.]+ s store" "$dir/out"
if command -v python3 >/dev/null; then
  check "JSON parses" python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['rows'])==2 and len(d['e2e'])==2 and d['e2e'][1]['q_source']=='store'" "$dir/bench.json"
fi
exit $fail
