#!/usr/bin/env bash
# Build (if needed) and run the whole test suite with ctest. GPU tests report SKIP without a GPU.
#   scripts/test.sh [extra ctest arguments, e.g. -L gpu]
#   MR_CPU_KERNEL=avx2 scripts/test.sh   the same with the CPU kernels forced to a level (base/cpu.h)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  MR_SKIP_APT="${MR_SKIP_APT:-1}" scripts/setup.sh
else
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
  cmake --build "$build" -j "$(nproc)" >&2
fi
# which CPU kernel level the tests run at (MR_CPU_KERNEL forces one: avx512, avx2 or portable)
if [ -x "$build/mrirecon" ]; then
  echo "test.sh: $("$build/mrirecon" --version | sed -n 's/^cpu kernels:/CPU kernel levels here:/p'); MR_CPU_KERNEL=${MR_CPU_KERNEL:-unset (the first)}" >&2
fi
ctest --test-dir "$build" --output-on-failure "$@"
