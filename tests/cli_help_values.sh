#!/usr/bin/env bash
# --help offers only what the commands accept, and the documented special values work:
#  1. for every command, every numeric option's range {lo..hi} / {0, lo..hi} in --help is taken from
#     the help text and its ends are given to the parser (`mrirecon CMD --OPT VALUE --help` parses
#     the value before printing the help: exit 0 = accepted, 2 = refused), as is every special value
#     the help text documents ("0 = ...", "(0: ...)", "inf = ..."); a value just outside the range is
#     refused; integer ranges print as integers (no 1e+09);
#  2. phantom: each documented special value gives the scan it documents (tool_kspace_cmp against
#     the same scan with the value spelled out, or without the option).
#   bash tests/cli_help_values.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect()
kcmp=$(dirname "$bin")/tool_kspace_cmp

accepts() { # CMD OPT VALUE: the parser takes the value
  "$bin" "$1" "--$2" "$3" --help >/dev/null 2>"$dir/err"
  local rc=$?
  if [ $rc -eq 0 ]; then echo "ok: $1 --$2 $3 accepted"; else
    echo "FAIL: $1 --$2 $3: exit $rc, but --help offers it"; sed 's/^/  /' "$dir/err"; fail=1; fi
}
refuses() { # CMD OPT VALUE: a usage error naming the option
  "$bin" "$1" "--$2" "$3" --help >/dev/null 2>"$dir/err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "--$2" "$dir/err"; then echo "ok: $1 --$2 $3 refused"; else
    echo "FAIL: $1 --$2 $3: exit $rc, expected a usage error naming --$2"; fail=1; fi
}

checked=0
ints=0
for c in $("$bin" help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{exit}'); do
  "$bin" "$c" --help >"$dir/help_$c" || { echo "FAIL: $c --help"; fail=1; continue; }
  # option lines: "  -x, --name METAVAR  text {range} (default ...)"
  while IFS= read -r line; do
    opt=$(printf '%s\n' "$line" | sed -nE 's/^ +(-[a-zA-Z], )?--([a-z0-9-]+).*/\2/p')
    [ -n "$opt" ] || continue
    range=$(printf '%s\n' "$line" | sed -nE 's/.*\{((0, )?[-0-9.e+inf]+\.\.[-0-9.e+inf]+)\}.*/\1/p')
    if [ -n "$range" ]; then
      checked=$((checked + 1))
      # an integer option (it refuses 1.5 as "expects an integer") prints its range as integers
      if "$bin" "$c" "--$opt" 1.5 --help 2>&1 >/dev/null | grep -q "expects an integer"; then
        ints=$((ints + 1))
        case "$range" in *e*) echo "FAIL: $c --$opt: integer range {$range} in exponent notation"; fail=1 ;; esac
      fi
      lo=${range##*, }; lo=${lo%%..*}; hi=${range##*..}
      accepts "$c" "$opt" "$lo"
      accepts "$c" "$opt" "$hi"
      case "$range" in 0,*) accepts "$c" "$opt" 0 ;; esac
      # one below the low end is refused (integers: lo - 1; reals: lo - 1 as well)
      case "$lo" in -inf|*e*) ;; *) below=$(awk -v v="$lo" 'BEGIN{printf "%.17g", v - 1}')
        [ "${range#0, }" != "$range" ] && [ "$below" = 0 ] && below=-1
        refuses "$c" "$opt" "$below" ;; esac
    fi
    # documented special values: "0 = ...", "(0: ...)", "0: ...", "inf = ..."
    for v in $(printf '%s\n' "$line" | grep -oE '(^|[ (;])(0|inf) ?[=:] ' | grep -oE '0|inf'); do
      accepts "$c" "$opt" "$v"
    done
  done <"$dir/help_$c"
done
[ "$checked" -gt 20 ] && echo "ok: $checked numeric ranges checked" || { echo "FAIL: only $checked ranges found in the help texts"; fail=1; }
[ "$ints" -gt 10 ] && echo "ok: $ints integer ranges print as integers" || { echo "FAIL: only $ints integer options found"; fail=1; }

# 2. phantom's special values do what the help says
P() { "$bin" phantom -q "$@" >/dev/null; }
same() { # LABEL A.h5 B.h5
  if "$kcmp" "$2" "$3" >/dev/null 2>&1; then echo "ok: $1"; else echo "FAIL: $1"; "$kcmp" "$2" "$3"; fail=1; fi
}
P -o "$dir/r_default.h5" --matrix 32
P -o "$dir/r_s0.h5" --matrix 32 --spokes 0
P -o "$dir/r_s50.h5" --matrix 32 --spokes 50 --readout 64 # round(pi 32/2) = 50, 2N = 64
P -o "$dir/r_r0.h5" --matrix 32 --readout 0
P -o "$dir/r_dim0.h5" --matrix 32 --dim 0
P -o "$dir/r_inf.h5" --matrix 32 --snr inf
same "--spokes 0 = round(pi N/2) spokes" "$dir/r_s0.h5" "$dir/r_s50.h5"
same "--readout 0 = 2N" "$dir/r_r0.h5" "$dir/r_s50.h5"
same "--dim 0 with one matrix value = 2D" "$dir/r_dim0.h5" "$dir/r_default.h5"
same "--snr inf = noiseless" "$dir/r_inf.h5" "$dir/r_default.h5"
P -o "$dir/k_s0.h5" --matrix 8 --traj kooshball --spokes 0
P -o "$dir/k_s101.h5" --matrix 8 --traj kooshball --spokes 101 # round(pi 64/2)
same "--spokes 0 (kooshball) = round(pi N^2/2)" "$dir/k_s0.h5" "$dir/k_s101.h5"
P -o "$dir/k_dim0.h5" --matrix 8,8,8 --dim 0 --spokes 101
same "--dim 0 with three matrix values = 3D (kooshball)" "$dir/k_dim0.h5" "$dir/k_s101.h5"
P -o "$dir/sp_t0.h5" --matrix 32 --traj spiral --interleaves 8 --turns 0
P -o "$dir/sp_t2.h5" --matrix 32 --traj spiral --interleaves 8 --turns 2 # N/(2L) = 2
same "--turns 0 = N/(2L) turns" "$dir/sp_t0.h5" "$dir/sp_t2.h5"
P -o "$dir/st_p0.h5" --matrix 16 --traj stack-of-stars --partitions 0
P -o "$dir/st_p16.h5" --matrix 16 --traj stack-of-stars --partitions 16
same "--partitions 0 = Nz" "$dir/st_p0.h5" "$dir/st_p16.h5"
P -o "$dir/rnd_0.h5" --matrix 16 --traj random --samples 0
P -o "$dir/rnd_512.h5" --matrix 16 --traj random --samples 512 # 2 Nx Ny
same "--samples 0 = 2 Nx Ny" "$dir/rnd_0.h5" "$dir/rnd_512.h5"
expect 0 "info of the --snr inf scan" -- "$bin" info "$dir/r_inf.h5"
grep -q "noiseless\|sigma 0 " "$dir/out" && echo "ok: --snr inf is noiseless" || { echo "FAIL: --snr inf scan not noiseless"; fail=1; }
exit $fail
