# Helpers shared by tests/cli_batch*.sh (sourced, not a test itself), with the caller's arguments
# MRIRECON SCRATCH: sets MR and S, empties S, creates S/in, starts the clock t0.
set -u
MR=$1
S=$2
rm -rf "$S"
mkdir -p "$S/in"
t0=$SECONDS

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

ok() {
  echo "ok: $*"
}

# gen_scan FILE SPOKES: a tiny 2D radial scan (32x32 matrix) with truth images.
gen_scan() {
  "$MR" phantom -o "$1" --matrix 32 --spokes "$2" --readout 64 -q || fail "phantom $1"
}

# expect_rc WANT GOT WHAT
expect_rc() {
  [ "$2" = "$1" ] || fail "$3: exit status $2, expected $1"
  ok "$3: exit status $2"
}

# The files of `mrirecon recon` (the default method) plus the batch marker in a finished scan folder.
check_scan_folder() {
  local d=$1
  [ -d "$d" ] || fail "missing folder $d"
  for f in report.json report.md metrics.csv image_iterative.h5 image_iterative.png .done; do
    [ -s "$d/$f" ] || fail "$d/$f missing or empty"
  done
}

# compare_outputs REF OTHER SCAN...: image datasets and PNGs identical (timings in reports differ).
compare_outputs() {
  local ref=$1 other=$2
  shift 2
  local s f n=0
  for s in "$@"; do
    for f in "$ref/$s"/image_*.h5; do
      # tool_imgcmp (tests/tool_imgcmp.c, built next to mrirecon): same matrix, bit-identical /image
      "$(dirname "$MR")/tool_imgcmp" "$f" "$other/$s/$(basename "$f")" || fail "$s/$(basename "$f"): /image differs"
      n=$((n + 1))
    done
    for f in "$ref/$s"/*.png "$ref/$s"/.*.png; do
      [ -e "$f" ] || continue
      cmp -s "$f" "$other/$s/$(basename "$f")" || fail "$s/$(basename "$f") differs"
      n=$((n + 1))
    done
  done
  ok "$n image datasets and PNGs identical between $ref and $other"
}
