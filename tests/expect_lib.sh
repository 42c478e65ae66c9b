# Helpers for the command-line tests (sourced, not a test itself: the name does not match cli_*.sh).
# The caller sets $dir (its scratch directory) before sourcing; sourcing empties it and sets fail=0.
rm -rf "$dir"
mkdir -p "$dir"
fail=0

# expect CODE LABEL -- command...: runs the command, keeps stdout/stderr in $dir/out, $dir/err
expect() {
  local want=$1 label=$2
  shift 3
  "$@" >"$dir/out" 2>"$dir/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $label: exit $got, expected $want"
    sed 's/^/  stderr: /' "$dir/err"
    fail=1
  else
    echo "ok: $label: exit $got"
  fi
}

# check LABEL command...: passes when the command succeeds
check() {
  local label=$1
  shift
  if "$@"; then echo "ok: $label"; else echo "FAIL: $label"; fail=1; fi
}

# csv FILE METHOD TRUTH: the psnr_db column of a metrics.csv row (method, truth)
csv() {
  awk -F, -v m="$2" -v t="$3" '$1 == m && $2 == t { print $4 }' "$1"
}
