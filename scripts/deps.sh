#!/usr/bin/env bash
# deps.sh - make sure the build and test dependencies are present on a Debian
# machine; installs the missing Debian packages when run as root (or with
# sudo), otherwise names exactly what is missing and fails.
set -euo pipefail
pkgs=(cmake g++ gfortran make libopenblas-dev libmpfr-dev libgmp-dev libgtest-dev
      python3 python3-numpy python3-matplotlib python3-venv pkgconf
      openmpi-bin libopenmpi-dev libscalapack-openmpi-dev
      dpkg-dev lintian fakeroot)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: missing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo=sudo; else
    echo "deps: run as root: apt-get install -y ${missing[*]}" >&2; exit 1; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  echo "deps: installed ${missing[*]}"
fi
# The CUDA toolkit (nvcc, cuBLAS) is not a Debian package of the right version:
# it must be installed (CUDA 12.4 or newer; developed with 13.0).
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "deps: the CUDA toolkit (nvcc and cuBLAS, CUDA >= 12.4) is missing: install it from NVIDIA and put nvcc on PATH" >&2
  exit 1
fi
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
echo "deps: ok ($(nvcc --version | tail -1))"
