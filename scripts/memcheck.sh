#!/usr/bin/env bash
# The memory `mrirecon info` takes on hostile and damaged files (docs/FUZZING.md, "Memory"): for every
# file of the given folders (one level), the peak resident memory of any process of the run (GNU time's
# %M: the largest of mrirecon and the children it waited for, i.e. the reading children) against the
# bound 2 x the data the file holds + 100 MB, where "the data the file holds" is the size of the arrays
# info reports for an accepted file and the file's size for a refused one (whatever it declares, data
# that are not stored cannot be read). Also the wall time. Exit 1 when a file exceeds the bound.
#   scripts/memcheck.sh [--mutants N SEED] [--keep DIR] MRIRECON DIR...
#     --mutants N SEED: in addition, N mutants of the HDF5 files of the folders (in turn), made with a fixed
#     seed: every other one has one to four 4-byte words that hold a small number (1..65535: sizes,
#     lengths, counts) set to 0x7fffffff, 0xffffffff or 0x40000000, the others one to four random bytes
#     changed; written to a scratch folder and measured the same way.
#     --keep DIR: the mutants are kept in DIR (e.g. to run them through a sanitizer build).
# Each run has 60 s (timeout; a file on which libhdf5 loops is stopped by the reading child's CPU-time
# limit only after 120 s, and counted here as "timeout", its memory measured all the same).
set -uo pipefail
mutants=0 seed=1 keep=""
if [ "${1:-}" = --mutants ]; then
  mutants=$2 seed=$3
  shift 3
fi
if [ "${1:-}" = --keep ]; then
  keep=$2
  shift 2
fi
[ $# -ge 2 ] || { echo "usage: scripts/memcheck.sh [--mutants N SEED] MRIRECON DIR..." >&2; exit 2; }
mr=$1
shift
command -v /usr/bin/time >/dev/null || { echo "memcheck: GNU time (/usr/bin/time) is needed" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
files=()
for d in "$@"; do
  for f in "$d"/*; do [ -f "$f" ] && files+=("$f"); done
done
if [ "$mutants" -gt 0 ]; then
  python3 - "$scratch" "$mutants" "$seed" "${files[@]}" <<'EOF'
import os, random, sys
out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
sources = [f for f in sys.argv[4:] if open(f, 'rb').read(8) == b'\x89HDF\r\n\x1a\n']
for k in range(n):
    src = sources[k % len(sources)]
    b = bytearray(open(src, 'rb').read())
    # sizes and lengths of a file are small numbers: half the mutants set one of them (a 4-byte word
    # whose value is 1..65535) to a huge one, the others change random bytes
    words = [i for i in range(0, len(b) - 4, 4) if 0 < int.from_bytes(b[i:i + 4], 'little') < 65536]
    for _ in range(rng.randint(1, 4)):
        if k % 2 == 0 and words:
            at = rng.choice(words)
            b[at:at + 4] = rng.choice([b'\xff\xff\xff\x7f', b'\xff\xff\xff\xff', b'\x00\x00\x00\x40'])
        else:
            b[rng.randrange(0, len(b))] = rng.randrange(256)
    name = 'mutant-%04d-%s' % (k, os.path.basename(src))
    open(os.path.join(out, name), 'wb').write(bytes(b))
EOF
  for f in "$scratch"/mutant-*; do files+=("$f"); done
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$scratch"/mutant-* "$keep"/; fi
fi
worst_ratio=0 worst="" over=0 accepted=0 refused=0 timeouts=0 n=0 maxkb=0 maxfile=""
printf '%-60s %8s %10s %10s %8s\n' file result peak_MB bound_MB wall_s
for f in "${files[@]}"; do
  size=$(stat -c %s "$f")
  start=$(date +%s.%N)
  /usr/bin/time -f %M -o "$scratch/rss" timeout 60 "$mr" info "$f" > "$scratch/out" 2> /dev/null
  rc=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  kb=$(tail -n 1 "$scratch/rss" | tr -dc 0-9)
  kb=${kb:-0}
  data=$size
  result=refused
  if [ $rc = 0 ]; then
    result=accepted
    accepted=$((accepted + 1))
    # the arrays info reports: samples x (3 + 2 coils) floats, plus the truth images and coil maps
    data=$(awk '/^samples / {m = $2} /^coils / {c = $2} /^matrix / {v = $2 * $4 * ($6 ~ /^[0-9]+$/ ? $6 : 1)}
                END {printf "%.0f", 4 * (m * (3 + 2 * c) + 2 * v + 2 * c * v)}' "$scratch/out")
    [ "${data:-0}" -gt "$size" ] || data=$size
  elif [ $rc = 124 ]; then
    result=timeout
    timeouts=$((timeouts + 1))
  else
    refused=$((refused + 1))
  fi
  n=$((n + 1))
  bound=$((2 * data + 100 * 1000 * 1000))
  [ "$kb" -gt "$maxkb" ] && { maxkb=$kb; maxfile=$f; }
  flag=""
  if [ $((kb * 1024)) -gt "$bound" ]; then
    over=$((over + 1))
    flag=" OVER"
  fi
  printf '%-60s %8s %10.1f %10.1f %8.2f%s\n' "$(basename "$f" | cut -c1-60)" "$result" "$(echo "$kb / 1024" | bc -l)" \
    "$(echo "$bound / 1048576" | bc -l)" "$wall" "$flag"
done
echo "memcheck: $n files ($accepted accepted, $refused refused, $timeouts stopped after 60 s): largest peak $((maxkb / 1024)) MiB ($(basename "$maxfile")); $over over the bound"
[ "$over" = 0 ]
