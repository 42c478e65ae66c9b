#!/usr/bin/env bash
# Fuzz the readers of user files with libFuzzer + ASan + UBSan (docs/FUZZING.md).
#   scripts/fuzz.sh [--ci] [--strict] [SECONDS] [TARGET...]
# Builds the fuzz targets in build-fuzz/ (clang, MR_FUZZ=ON, MR_SANITIZE=ON, no CUDA), writes the
# seed corpus (tests/fuzz/seeds.c, whose ISMRMRD seeds need libismrmrd-dev; tests/test_io_malformed.c,
# tests/test_io_hostile.c; plus tests/fuzz/regress/), then fuzzes each TARGET (default: every
# tests/fuzz/fuzz_<target>.c: kspace image ismrmrd) for SECONDS (default 60), one process at a time
# (libFuzzer -fork=1, which goes on after a finding).
#   --ci      start from the seeds alone (no corpus kept from earlier runs), and install what is
#             missing of clang, libclang-rt-dev, libomp-dev and libismrmrd-dev with apt-get (as
#             scripts/setup.sh does; not with MR_SKIP_APT=1).
#   --strict  also fail on findings inside libhdf5 that the readers contain (see below).
#   --triage  do not fuzz: triage again every finding kept in build-fuzz/findings/<target>/.
# Without --ci the corpus grows in build-fuzz/corpus/<target> from run to run.
# Every finding (crash, sanitizer report, leak, timeout > 10 s, more than 2 GiB resident) is kept in
# build-fuzz/findings/<target>/ with its report (<input>.txt) and triaged by its stack:
#   ours      the fault is in our code (or a reader broke its promise; a file libhdf5 itself cannot
#             close after the target closed it is a "libhdf5 fault" line, counted as libhdf5): fails;
#   libhdf5   the fault is inside libhdf5, decoding the file's own structures before any check of
#             ours can run; replayed through the public reader (child-process isolation,
#             mr_h5_read_isolated), which must refuse it without crashing: "contained", listed,
#             not a failure (with --strict: a failure); not contained: the script fails;
#   not reproducible alone: the input does not fail when run by itself (libhdf5 keeps state from
#             file to file; our readers keep none): listed, a failure only with --strict.
# Exit 0 when nothing failed. Replay: build-fuzz/fuzz_<target> FILE, or
# build-fuzz/fuzz_<target>_replay [--isolated] FILE (also in a normal build).
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_ARGS (more libFuzzer options).
set -euo pipefail
cd "$(dirname "$0")/.."

ci=0
strict=0
triage_only=0
seconds=60
targets=()
for a in "$@"; do
  case "$a" in
    --ci) ci=1 ;;
    --strict) strict=1 ;;
    --triage) triage_only=1 ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    [0-9]*) seconds="$a" ;;
    *) targets+=("$a") ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do
    t="$(basename "$f" .c)"; t="${t#fuzz_}"
    [ "$t" = common ] || [ "$t" = driver ] || targets+=("$t")
  done
fi
build="${FUZZ_BUILD_DIR:-build-fuzz}"

# ---- clang with libFuzzer ---------------------------------------------------------------------
have_libfuzzer() {
  command -v clang >/dev/null 2>&1 || return 1
  local d; d="$(mktemp -d)"
  printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$d/t.c"
  clang -fsanitize=fuzzer,address,undefined "$d/t.c" -o "$d/t" >/dev/null 2>&1
  local rc=$?
  rm -rf "$d"
  return $rc
}
if [ "$ci" = 1 ] && [ "${MR_SKIP_APT:-0}" != 1 ]; then
  missing=""
  for p in clang libclang-rt-dev libomp-dev libismrmrd-dev; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    sudo=""; [ "$(id -u)" != 0 ] && sudo="sudo"
    echo "fuzz: installing$missing" >&2
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >&2
  fi
fi
[ -f /usr/include/ismrmrd/ismrmrd.h ] ||
  echo "fuzz: libismrmrd-dev is missing: no ISMRMRD seeds (apt-get install libismrmrd-dev)" >&2
if ! have_libfuzzer; then
  echo "fuzz: clang with libFuzzer is needed (Debian: apt-get install clang libclang-rt-dev libomp-dev)" >&2
  exit 1
fi

# ---- build ------------------------------------------------------------------------------------
jobs="$(nproc)"
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMR_CUDA=OFF \
  -DMR_NATIVE=OFF -DMR_SANITIZE=ON -DMR_FUZZ=ON -DMR_DICOM=OFF -DBUILD_TESTING=ON >"$build.cmake.log" 2>&1 ||
  { cat "$build.cmake.log" >&2; exit 1; }
build_targets=(fuzz_seeds test_io_malformed test_io_hostile test_io_checksum)
for t in "${targets[@]}"; do build_targets+=("fuzz_$t" "fuzz_${t}_replay"); done
cmake --build "$build" -j "$jobs" --target "${build_targets[@]}" >"$build/build.log" 2>&1 ||
  { tail -40 "$build/build.log" >&2; exit 1; }

# ---- seeds ------------------------------------------------------------------------------------
# ASan reports leaks of HDF5's own caches at exit of the seed writers, which are not ours to judge
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
seeds="$build/fuzz-seeds"
"$build/fuzz_seeds" "$seeds" >"$build/seeds.log" 2>&1 || { tail -20 "$build/seeds.log" >&2; exit 1; }
"$build/test_io_malformed" "$seeds/kspace-malformed" >>"$build/seeds.log" 2>&1 ||
  { tail -20 "$build/seeds.log" >&2; exit 1; }
"$build/test_io_hostile" "$seeds/kspace-hostile" >>"$build/seeds.log" 2>&1 ||
  { tail -20 "$build/seeds.log" >&2; exit 1; }
"$build/test_io_checksum" "$seeds/kspace-checksum" >>"$build/seeds.log" 2>&1 ||
  { tail -20 "$build/seeds.log" >&2; exit 1; }
unset ASAN_OPTIONS

seed_dirs() { # the seeds of target $1: its own files first, then the others' (any HDF5 file helps)
  case "$1" in
    image) echo "$seeds/image tests/fuzz/regress/image $seeds/kspace-valid" ;;
    ismrmrd) echo "$seeds/ismrmrd tests/fuzz/regress/ismrmrd $seeds/kspace-valid" ;;
    *) echo "$seeds/kspace-valid $seeds/kspace-malformed $seeds/kspace-hostile $seeds/kspace-checksum tests/fuzz/regress/$1 $seeds/image" ;;
  esac
}

# ---- run ----------------------------------------------------------------------------------------
# A failed allocation returns NULL as glibc's malloc does (libhdf5 asks for whatever size a damaged
# header states); above 4 GiB ASan fails it outright instead of mapping (and shadowing) it, as a
# machine without that much memory would. What counts is memory really used: -rss_limit_mb.
export ASAN_OPTIONS="abort_on_error=0:detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=4096"
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
limits=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1048576)

# Where a finding's report puts the fault: the innermost stack frame that is in libhdf5 or in our
# sources decides ("ours" also for UBSan reports, which only our code can raise, and broken
# promises of a target; "libhdf5" for a target's "libhdf5 fault" line: a file libhdf5 cannot close,
# tests/fuzz/fuzz_common.c); "unknown" when neither shows. A write past a block that our code
# allocated is ours even when libhdf5 made it (we gave libhdf5 a buffer it overran); a read is
# judged where it happened (ASan names the nearest block, which need not be the one read).
classify() {
  awk -v root="$PWD/" '
    function side(line) {
      if (line ~ /libhdf5/) return "libhdf5"
      if (index(line, root) > 0 && line ~ /\.[ch]:[0-9]+/) return "ours"
      return ""
    }
    /runtime error:/ { if (fault == "") fault = "ours" }
    /^fuzz target: libhdf5 fault:/ { if (fault == "") fault = "libhdf5" }
    /^WRITE of size/ { write = 1 }
    /allocated by thread/ { inalloc = 1; next }
    /freed by thread/ { inalloc = 0; infree = 1; next }
    /^ *#[0-9]+ / {
      s = side($0)
      if (s == "") next
      if (inalloc) { if (owner == "") owner = s }
      else if (!infree && fault == "") fault = s
    }
    /^$/ { infree = 0 }
    END {
      if (write && owner == "ours") print "ours"
      else if (fault != "") print fault
      else print "unknown"
    }' "$1"
}
# The innermost named libhdf5 function of a report, to group findings.
h5_function() {
  grep -m1 -o 'in H5[A-Za-z0-9_]*' "$1" | cut -c4- || true
}

failed=0
summary=()
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  findings="$build/findings/$t"
  [ "$ci" = 1 ] && [ "$triage_only" = 0 ] && rm -rf "$corpus" "$findings"
  mkdir -p "$corpus" "$findings"
  log="$build/fuzz-$t.log"
  marker="$build/.fuzz-start-$t"
  if [ "$triage_only" = 1 ]; then
    touch -d '1970-01-02' "$marker" # every finding kept
    line="$t: triage of the kept findings"
  else
    touch "$marker"
    dirs=()
    for d in $(seed_dirs "$t"); do [ -d "$d" ] && dirs+=("$d"); done
    echo "fuzz: $t for ${seconds} s (log $log)" >&2
    set +e
    # shellcheck disable=SC2086
    "$build/fuzz_$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" \
      "${limits[@]}" -max_len=65536 -artifact_prefix="$findings/" ${FUZZ_ARGS:-} "$corpus" "${dirs[@]}" >"$log" 2>&1
    rc=$?
    set -e
    stats="$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)"
    runs="$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$stats")"
    cov="$(grep -oE 'cov: [0-9]+' <<<"$stats" | cut -d' ' -f2)"
    ft="$(grep -oE 'ft: [0-9]+' <<<"$stats" | cut -d' ' -f2)"
    line="$t: ${runs:-0} inputs in ${seconds} s, coverage ${cov:-?} edges, ${ft:-?} features, corpus $(find "$corpus" -type f | wc -l) files"
    # in fork mode libFuzzer's exit status is that of its last job; what counts is that it ran to
    # the end, and the triage below
    if ! grep -q '^INFO: exiting:' "$log"; then
      failed=1
      line="$line; libFuzzer stopped early with status $rc (see $log)"
    fi
  fi
  ours=0; contained=0; loose=0; norepro=0; classes=""
  while IFS= read -r a; do
    [ -n "$a" ] || continue
    name="$(basename "$a")"; kind="${name%%-*}"; rep="$a.txt"
    "$build/fuzz_$t" "${limits[@]}" "$a" >"$rep" 2>&1 || true
    where="$(classify "$rep")"
    if ! grep -qE 'ERROR|runtime error|broken promise' "$rep"; then
      where="not reproducible"
    fi
    if [ "$where" = "not reproducible" ]; then
      # our readers keep no state between files; libhdf5 does (metadata cache, free lists)
      norepro=$((norepro + 1))
      [ "$strict" = 1 ] && failed=1
    elif [ "$where" = libhdf5 ]; then
      fn="$(h5_function "$rep")"
      ok=0
      if [ "$kind" = timeout ]; then
        ok=1 # the child's CPU-time limit ends a looping libhdf5 (mr_h5_read_isolated)
      elif "$build/fuzz_${t}_replay" --isolated "$a" >"$a.isolated.txt" 2>&1; then
        ok=1
      fi
      if [ "$ok" = 1 ]; then
        contained=$((contained + 1))
        case " $classes " in *" $kind:$fn "*) ;; *) classes="$classes $kind:$fn" ;; esac
        [ "$strict" = 1 ] && failed=1
      else
        loose=$((loose + 1)); failed=1
        echo "fuzz: $t: $name: libhdf5 $kind NOT contained by the isolated reader ($a.isolated.txt)" >&2
      fi
    else
      ours=$((ours + 1)); failed=1
      echo "fuzz: $t: $name: $kind in our code ($where), report $rep:" >&2
      grep -m1 -E 'ERROR|runtime error|broken promise' "$rep" >&2 || true
    fi
  done < <(find "$findings" -maxdepth 1 -type f -newer "$marker" ! -name '*.txt')
  line="$line; findings: $ours ours, $contained inside libhdf5 and contained${classes:+ (${classes# })}, $loose not contained, $norepro not reproducible alone"
  summary+=("$line")
done
printf 'fuzz: %s\n' "${summary[@]}"
exit "$failed"
