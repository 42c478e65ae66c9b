#!/usr/bin/env bash
# Install mrirecon's dependencies (Debian 12 / Ubuntu packages) and build it into ./build.
#   scripts/setup.sh            install + configure + build
# Environment: MR_WERROR=ON (warnings are errors), MR_CUDA=AUTO|ON|OFF, MR_MPI=AUTO|ON|OFF, BUILD_DIR (default build),
#              MR_SKIP_APT=1 (do not call apt-get), MR_EXTRA_PACKAGES (more packages to install).
set -euo pipefail
cd "$(dirname "$0")/.."

# libopenmpi-dev, openmpi-bin: the optional MPI build (MR_MPI=AUTO turns it on) and its tests (docs/CLUSTER.md)
# libxxhash-dev: the Q cache's checksums (io/q_cache.c)
# libdcmtk-dev: DICOM output (optional in the build: without it `--format dicom` says so)
# libismrmrd-dev: the tests that write ISMRMRD files with the reference library and read our MRD images
#   back (they SKIP without it); dcmtk, dicom3tools: the DICOM checks of tests/cli_export.sh (dcmdump,
#   dciodvfy; skipped without them)
packages="build-essential cmake pkg-config libhdf5-dev libfftw3-dev libpng-dev libexpat1-dev libxxhash-dev libopenmpi-dev openmpi-bin libdcmtk-dev libismrmrd-dev dcmtk dicom3tools ${MR_EXTRA_PACKAGES:-}"
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
# Python modules for the reading checks of tests/cli_export.sh and for the Python package and its tests
# (python/, tests/cli_python.sh; they SKIP with a message without them): numpy, pytest, pydicom, nibabel,
# pillow, h5py from PyPI, only when pip is there and MR_SKIP_PIP is not 1
if [ "${MR_SKIP_PIP:-0}" != 1 ] && command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
  missing=""
  for m in numpy pytest pydicom nibabel PIL h5py; do python3 -c "import $m" 2>/dev/null || missing="$missing $m"; done
  if [ -n "$missing" ]; then
    echo "setup: pip install numpy pytest pydicom nibabel pillow h5py (for the export and Python tests)" >&2
    # a Debian system Python refuses pip installs (PEP 668) unless told to
    python3 -m pip install -q numpy pytest pydicom nibabel pillow h5py >&2 ||
      python3 -m pip install -q --break-system-packages numpy pytest pydicom nibabel pillow h5py >&2 ||
      echo "setup: pip failed: those test parts will SKIP" >&2
  fi
fi
