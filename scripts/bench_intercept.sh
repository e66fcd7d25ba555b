#!/usr/bin/env bash
# bench_intercept.sh - what libxngemm_intercept.so adds to a call it passes
# through, and what it gains on one it reroutes. Run from the repository root
# after building.
#
#   bench_intercept.sh [CALLS [REPEATS]]
#       host BLAS (issue: under 1 us per call on the CPU): build/bench/
#       intercept_overhead without the interposer, then under it with
#       XN_INTERCEPT=off and with XN_INTERCEPT=exdgemm above the call's size
#       (XN_INTERCEPT_MIN_FLOPS), three times each, alternating
#   bench_intercept.sh cublas [N]
#       cuBLAS (needs the GPU): build/bench/intercept_overhead_cublas, small
#       8 x 8 x 8 calls passed through (plain, off, below the threshold), and
#       one N x N x N DGEMM (default 16384) plain and under every mode, with
#       signed and non-negative inputs, three rounds
set -euo pipefail
build=${BUILD_DIR:-build}
lib=$build/libxngemm_intercept.so
if [ "${1:-}" = cublas ]; then
  exe=$build/bench/intercept_overhead_cublas
  [ -x "$exe" ] && [ -f "$lib" ] || { echo "bench_intercept.sh: build first ($exe, $lib)" >&2; exit 2; }
  n=${2:-16384}
  for round in 1 2 3; do
    echo "round $round"
    echo -n "  plain cuBLAS:                "; "$exe" small
    echo -n "  interposer, off:             "; LD_PRELOAD=$lib XN_INTERCEPT=off "$exe" small
    echo -n "  interposer, below threshold: "
    LD_PRELOAD=$lib XN_INTERCEPT=exdgemm XN_INTERCEPT_MIN_FLOPS=1e6 "$exe" small
    echo "  plain cuBLAS:"; "$exe" large "$n" | sed 's/^/    /'
    for mode in off exdgemm ngemm strassen winograd; do
      echo "  interposer, $mode:"
      LD_PRELOAD=$lib XN_INTERCEPT=$mode XN_INTERCEPT_LOG=1 "$exe" large "$n" 2>&1 |
        sed 's/^/    /'
    done
  done
  exit 0
fi
exe=$build/bench/intercept_overhead
[ -x "$exe" ] && [ -f "$lib" ] || { echo "bench_intercept.sh: build first ($exe, $lib)" >&2; exit 2; }
for round in 1 2 3; do
  echo "round $round"
  echo -n "  plain BLAS:                 "; "$exe" "$@"
  echo -n "  interposer, off:            "; LD_PRELOAD=$lib XN_INTERCEPT=off "$exe" "$@"
  echo -n "  interposer, below threshold: "
  LD_PRELOAD=$lib XN_INTERCEPT=exdgemm XN_INTERCEPT_MIN_FLOPS=1000 "$exe" "$@"
done
