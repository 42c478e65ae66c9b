#!/usr/bin/env bash
# Install mrirecon's dependencies (Debian 12 / Ubuntu packages) and build it into ./build.
#   scripts/setup.sh            install + configure + build
# Environment: MR_WERROR=ON (warnings are errors), MR_CUDA=AUTO|ON|OFF, MR_MPI=AUTO|ON|OFF, BUILD_DIR (default build),
#              MR_SKIP_APT=1 (do not call apt-get), MR_EXTRA_PACKAGES (more packages to install).
set -euo pipefail
cd "$(dirname "$0")/.."

# libopenmpi-dev, openmpi-bin: the optional MPI build (MR_MPI=AUTO turns it on) and its tests (docs/CLUSTER.md)
packages="build-essential cmake pkg-config libhdf5-dev libfftw3-dev libpng-dev libexpat1-dev libopenmpi-dev openmpi-bin ${MR_EXTRA_PACKAGES:-}"
if [ "${MR_SKIP_APT:-0}" != 1 ]; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  missing=""
  for p in $packages; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "setup: installing$missing" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >&2
  fi
fi

# nvcc usually lives outside PATH
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

build="${BUILD_DIR:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMR_CUDA="${MR_CUDA:-AUTO}" -DMR_MPI="${MR_MPI:-AUTO}" -DMR_WERROR="${MR_WERROR:-OFF}" \
  ${MR_CMAKE_ARGS:-} >&2
cmake --build "$build" -j "$(nproc)" >&2
echo "setup: built $build/mrirecon" >&2
