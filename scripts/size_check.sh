#!/usr/bin/env bash
# The house's size limits (issue 24, docs/DESIGN.md): no source file over 1000 lines, no function over 150
# lines, except where a reason is stated below. Prints every file and function over the limits, the
# exempt ones marked with their reason, and exits 1 when one is over without a reason.
#   bash scripts/size_check.sh [FILE_LIMIT [FUNCTION_LIMIT]]
# A function is counted from its opening '{' in column 0 to its closing '}' in column 0 (the layout of
# every C/CUDA file here); its name from the last line before it that starts in column 0 with a '('.
set -u
cd "$(dirname "$0")/.."
file_limit=${1:-1000}
fn_limit=${2:-150}
# exemptions: PATH or PATH:FUNCTION, then the reason
exempt() {
  case $1 in
  gpu/gemm.cu) echo "kernels: the GEMM engines of the exact sums share one file for their device templates" ;;
  gpu/nudft.cu) echo "kernels: the ladder of the exact-sum kernels, one template per rung" ;;
  recon/cli/cmd_args.c:mr_recon_args_init | recon/cli/cmd_args.c:mr_phantom_args_init | \
    recon/cli/cmd_args.c:mr_batch_args_init) echo "an option table" ;;
  *) return 1 ;;
  esac
}
bad=0
files=$(git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cc' | grep -v '^tests/fuzz/regress/')
echo "files over $file_limit lines:"
for f in $files; do
  n=$(wc -l <"$f")
  [ "$n" -le "$file_limit" ] && continue
  if why=$(exempt "$f"); then echo "  $n $f (exempt: $why)"; else echo "  $n $f"; bad=1; fi
done
echo "functions over $fn_limit lines:"
for f in $files; do
  awk -v f="$f" -v lim="$fn_limit" '
    /^[A-Za-z_].*\(/ { decl = $0 }
    /^\{/ { start = FNR; name = decl; sub(/\(.*/, "", name); n = split(name, w, /[ *]+/); name = w[n] }
    /^\}/ && start { len = FNR - start + 1; if (len > lim) print len, f ":" name; start = 0 }' "$f"
done | sort -rn | while read -r n where; do
  if why=$(exempt "$where"); then echo "  $n $where (exempt: $why)"; else echo "  $n $where"; echo bad >"${TMPDIR:-/tmp}/size_check.$$"; fi
done
[ -f "${TMPDIR:-/tmp}/size_check.$$" ] && { rm -f "${TMPDIR:-/tmp}/size_check.$$"; bad=1; }
exit $bad
