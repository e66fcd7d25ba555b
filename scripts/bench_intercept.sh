#!/usr/bin/env bash
# bench_intercept.sh - what libxngemm_intercept.so adds to a call it passes
# through (issue: under 1 us on the CPU): build/bench/intercept_overhead run
# without the interposer, then under it with XN_INTERCEPT=off and with
# XN_INTERCEPT=exdgemm above the call's size (XN_INTERCEPT_MIN_FLOPS), three
# times each, alternating. Run from the repository root after building.
set -euo pipefail
build=${BUILD_DIR:-build}
exe=$build/bench/intercept_overhead
lib=$build/libxngemm_intercept.so
[ -x "$exe" ] && [ -f "$lib" ] || { echo "bench_intercept.sh: build first ($exe, $lib)" >&2; exit 2; }
for round in 1 2 3; do
  echo "round $round"
  echo -n "  plain BLAS:                 "; "$exe" "$@"
  echo -n "  interposer, off:            "; LD_PRELOAD=$lib XN_INTERCEPT=off "$exe" "$@"
  echo -n "  interposer, below threshold: "
  LD_PRELOAD=$lib XN_INTERCEPT=exdgemm XN_INTERCEPT_MIN_FLOPS=1000 "$exe" "$@"
done
