#!/usr/bin/env bash
# run_sanitizer.sh TOOL PROGRAM [ARGS...] - run a GPU test program under
# compute-sanitizer; exit 77 (ctest: skipped) without a device or a sanitizer.
set -u
tool=$1; shift
san=$(command -v compute-sanitizer || true)
[ -z "$san" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && san=/usr/local/cuda/bin/compute-sanitizer
if [ -z "$san" ]; then echo "compute-sanitizer not found: skipped"; exit 77; fi
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no CUDA device: skipped"; exit 77; fi
extra=()
[ "$tool" = racecheck ] && extra=(--racecheck-report hazard)
exec "$san" --tool "$tool" --error-exitcode 1 "${extra[@]}" "$@"
