#!/usr/bin/env bash
# demo.sh - the project's main job (README): install what is missing, build,
# and run `xnbench demo`, a short comparison of xNGEMM with the baseline
# (cuBLAS on a GPU, OpenBLAS on the CPU) in time and accuracy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)" --target xnbench
"$build"/bench/xnbench demo "$@"
