#!/usr/bin/env bash
# test.sh - the project's test command (README, .ci/run): install what is
# missing, build everything in Release, run every ctest suite. GPU suites skip
# cleanly on a machine without a device. BUILD_DIR overrides the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 900
