#!/usr/bin/env bash
# Build (if needed) and run the whole test suite with ctest. GPU tests report SKIP without a GPU.
#   scripts/test.sh [extra ctest arguments, e.g. -L gpu]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  MR_SKIP_APT="${MR_SKIP_APT:-1}" scripts/setup.sh
else
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
  cmake --build "$build" -j "$(nproc)" >&2
fi
ctest --test-dir "$build" --output-on-failure "$@"
