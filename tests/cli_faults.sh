#!/usr/bin/env bash
# Output faults through the command line: a full disk (simulated with a file-size limit, ulimit -f;
# mrirecon ignores SIGXFSZ, so writes fail with EFBIG where a full disk gives ENOSPC) and a
# read-only directory give exit 1, a message naming the file and the reason, and no partial or
# temporary file; a batch's summary keeps the end of a failed scan's log.
#   bash tests/cli_faults.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect()

no_temporaries() { # no file of fsutil's temporary naming below $1
  local left
  left=$(find "$1" -name '.*.tmp*' 2>/dev/null)
  check "no temporary file left in $1" test -z "$left"
  [ -n "$left" ] && echo "  left: $left"
}

expect 0 "phantom" -- "$bin" phantom -o "$dir/scan.h5" --dim 2 --matrix 64 -q

# full disk: 64 KiB may be written per file
mkdir -p "$dir/full"
expect 1 "phantom on a full disk" -- bash -c "ulimit -f 64; exec \"\$0\" phantom -o \"\$1\" --dim 2 --matrix 128 -q" \
  "$bin" "$dir/full/big.h5"
check "the message names the file and the reason" grep -q "$dir/full/big.h5: write failed: File too large" "$dir/err"
check "no big.h5" test ! -e "$dir/full/big.h5"
no_temporaries "$dir/full"
# 16 KiB per file: the PNGs fit, the 64 x 64 complex images (32 KiB) do not
expect 1 "recon on a full disk" -- bash -c "ulimit -f 16; exec \"\$0\" recon \"\$1\" -o \"\$2\" --method all -q" \
  "$bin" "$dir/scan.h5" "$dir/full/out"
check "the message names the image and the reason" grep -q "full/out/image_.*\.h5: write failed: File too large" "$dir/err"
check "no output folder left (the files are staged and appear together)" test ! -e "$dir/full/out"
check "no staging folder left" test -z "$(ls -A "$dir/full" | grep -v '^big' )"
no_temporaries "$dir/full"
# the same into a folder that holds an earlier run: the earlier files stay, none of the failed run's
expect 0 "recon (small) into full/prev" -- "$bin" recon "$dir/scan.h5" -o "$dir/full/prev" --method gridding-bilinear -q
ls -A "$dir/full/prev" | sort >"$dir/prev.before"
cksum "$dir/full/prev"/* >"$dir/prev.sum"
expect 1 "recon --force on a full disk into full/prev" -- bash -c "ulimit -f 16; exec \"\$0\" recon \"\$1\" -o \"\$2\" --method all --force -q" \
  "$bin" "$dir/scan.h5" "$dir/full/prev"
check "the message names OUTDIR's file, not the staging folder" grep -q "full/prev/image_.*\.h5: write failed" "$dir/err"
ls -A "$dir/full/prev" | sort >"$dir/prev.after"
check "the earlier run's files are all that is there" cmp -s "$dir/prev.before" "$dir/prev.after"
check "and they are unchanged" bash -c "cksum \"\$0\"/* | cmp -s - \"\$1\"" "$dir/full/prev" "$dir/prev.sum"

# read-only directory (root ignores permission bits: run as nobody where possible). The unprivileged user
# may not be able to enter this checkout (a private parent folder, e.g. made by mktemp -d), so the binary
# and the scan are copied into a folder of its own that it can reach.
as_user=()
if [ "$(id -u)" = 0 ]; then
  if command -v setpriv >/dev/null 2>&1; then
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  else
    as_user=(none)
  fi
fi
pub=$dir
if [ ${#as_user[@]} -gt 0 ] && [ "${as_user[0]}" != none ]; then
  pub=$(mktemp -d "${TMPDIR:-/tmp}/mrirecon-faults.XXXXXX") && chmod 0755 "$pub" &&
    cp "$bin" "$pub/mrirecon" && cp "$dir/scan.h5" "$pub/scan.h5" && chmod 0644 "$pub/scan.h5" ||
    { echo "FAIL: cannot prepare a folder for the unprivileged user"; exit 1; }
  trap 'chmod -R u+w "$pub" 2>/dev/null; rm -rf "$pub"' EXIT
fi
rbin=$bin
[ "$pub" != "$dir" ] && rbin=$pub/mrirecon
mkdir -p "$pub/ro"
chmod 0555 "$pub/ro"
chmod 0755 "$dir"
if [ "${as_user[0]:-}" = none ] || ! "${as_user[@]}" "$rbin" --version >/dev/null 2>&1; then
  echo "skip: read-only directory (running as root without a usable setpriv)"
else
  expect 1 "phantom into a read-only directory" -- "${as_user[@]}" "$rbin" phantom -o "$pub/ro/scan.h5" -q
  check "the message names the file and the reason" grep -q "$pub/ro/scan.h5: cannot create: Permission denied" "$dir/err"
  expect 1 "recon into a read-only directory" -- "${as_user[@]}" "$rbin" recon "$pub/scan.h5" -o "$pub/ro/out" \
    --q-cache off -q
  check "the message names the folder and the reason" grep -q "$pub/ro/out: cannot create directory: Permission denied" "$dir/err"
  check "nothing written" test -z "$(ls -A "$pub/ro")"
fi
chmod 0755 "$pub/ro"

# a legal but huge matrix (2048x2048x64: its Toeplitz grid alone is 16 GiB) is refused before the memory is
# taken, with the number needed (a 6 GB address-space limit stands for a machine without that memory)
expect 0 "phantom (small)" -- "$bin" phantom -o "$dir/small.h5" --matrix 32 --spokes 8 --readout 32 -q
expect 0 "convert to BART" -- "$bin" convert "$dir/small.h5" "$dir/huge" -q
sed -i 's/^matrix 32 32 1$/matrix 2048 2048 64/' "$dir/huge_traj.hdr" "$dir/huge_ksp.hdr"
expect 1 "recon of a 2048x2048x64 matrix without the memory" -- \
  bash -c 'ulimit -v 6000000; exec "$0" recon "$1" -o "$2" --q-cache off -q' "$bin" "$dir/huge_ksp.hdr" "$dir/huge-out"
check "the message says how much memory it needs" grep -qE "needs [0-9.]+ (GiB|GB) of (host )?memory, [0-9.]+ GB are available|needs 16 GiB of memory; .* available" "$dir/err"
check "no output folder" test ! -e "$dir/huge-out"

# batch: a failed scan's summary carries the end of its log
expect 1 "batch with a missing scan" -- "$bin" batch "$dir/scan.h5" "$dir/missing.h5" -o "$dir/batch" --iters 3 -q
check "summary.md has the log of the failed scan" grep -q "^### missing: the last 20 lines of .logs/missing.log" "$dir/batch/summary.md"
check "summary.md shows the log's error line" grep -q "missing.h5: cannot read: No such file or directory" "$dir/batch/summary.md"
check "summary.csv has the log_tail column" grep -q ",reason,log_tail$" "$dir/batch/summary.csv"
check "summary.html has the log block" grep -q '<details class="log">' "$dir/batch/summary.html"
exit $fail
