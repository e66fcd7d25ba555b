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
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 900 | tee "$log" ||
  status=$?
# ctest's "100% tests passed" counts skipped tests as passed: the last line
# says how many did not run, and why (a test skips when what it needs is
# absent: a GPU for the label gpu, otherwise its output above says what).
mapfile -t skipped < <(sed -n '/^The following tests did not run:/,$s/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$log")
if ((${#skipped[@]})); then
  mapfile -t gpu_tests < <(ctest --test-dir "$build" -N -L gpu | sed -n 's/^ *Test *#[0-9]*: //p')
  declare -A is_gpu=()
  for t in "${gpu_tests[@]}"; do is_gpu[$t]=1; done
  gpu=0 other=()
  for t in "${skipped[@]}"; do
    if [[ -n ${is_gpu[$t]:-} ]]; then ((++gpu)); else other+=("$t"); fi
  done
  why="$gpu need a GPU (label gpu; none on this machine)"
  ((${#other[@]})) && why+=", ${#other[@]} found something else missing: ${other[*]}"
  echo "test.sh: ${#skipped[@]} tests skipped: $why"
else
  echo "test.sh: no test skipped"
fi
exit "$status"
