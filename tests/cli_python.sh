#!/usr/bin/env bash
# The Python package (python/mrirecon, docs/PYTHON.md) over this build's libmrirecon.so: pytest runs
# python/tests against the command next to it (every format read, recon from a file and from arrays
# bit-identical to the command's image, options reaching the pipeline, the commands' error messages as
# exceptions, phantoms, images written and read back, the README's example, pip install of the wheel).
# SKIPs (77) with the reason when python3, numpy or pytest is missing (scripts/setup.sh installs them
# with pip), when the library was not built (MR_SHARED_LIB=OFF), or for a sanitizer build (its library
# needs the sanitizer runtime preloaded into Python).
#   bash tests/cli_python.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$(dirname "$bin")" && pwd)
lib=$build/libmrirecon.so
py=${PYTHON:-python3}
skip() { echo "SKIP: $*"; exit 77; }
command -v "$py" >/dev/null 2>&1 || skip "$py not found (the Python package needs Python 3.8+)"
[ -f "$lib" ] || skip "$lib was not built (configure with -DMR_SHARED_LIB=ON, the default)"
"$py" -c "import numpy" 2>/dev/null || skip "numpy is missing for $py (pip install numpy; scripts/setup.sh installs it)"
"$py" -c "import pytest" 2>/dev/null || skip "pytest is missing for $py (pip install pytest; scripts/setup.sh installs it)"
if ldd "$lib" 2>/dev/null | grep -q 'lib[at]san\|libubsan'; then
  skip "$lib is a sanitizer build (MR_SANITIZE): Python would need the sanitizer runtime preloaded"
fi
rm -rf "$dir"
mkdir -p "$dir"
export MRIRECON_LIB=$lib MRIRECON_BIN=$bin PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
export MRIRECON_CACHE_DIR=${MRIRECON_CACHE_DIR:-$dir/cache}
# -p no:cacheprovider: nothing written into the source tree; -rs: the reason of every skipped test
exec "$py" -m pytest -q -rs -p no:cacheprovider --basetemp="$dir/pytest" "$root/python/tests"
