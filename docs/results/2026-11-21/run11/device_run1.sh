#!/usr/bin/env bash
# device_run1.sh - run 11's first H200 call: clipped-tile SYMV A/B (aligned
# and unaligned columns), cuBLAS's DGEMM kernels per transpose pair, and the
# SYMV GPU tests. Run from the repository root with build-gpu/ (this tree)
# and build-ab/ (xnbench at ae3f1f7) carried; OUT receives everything.
set -uo pipefail
R=docs/results/2026-11-21/run11
source build-gpu/_devlibs/enter.sh
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > "$OUT/gpu.txt"
for p in d s; do
  bash $R/ab_bins.sh "$OUT/ab" 2 $p 8000,14200,16384,30000 "" \
    new=build-gpu/bench/xnbench old=build-ab/bench/xnbench
  bash $R/ab_bins.sh "$OUT/ab" 1 $p 8000,14200,16384 "--lda-pad 1" \
    new=build-gpu/bench/xnbench old=build-ab/bench/xnbench
done
echo "ab done $SECONDS s" >> "$OUT/progress.txt"
(cd build-gpu && ctest -R symv -L gpu --output-on-failure > "$OUT/ctest_symv.log" 2>&1)
echo "ctest done $SECONDS s rc=$?" >> "$OUT/progress.txt"
for n in 16384 32768; do
  build-gpu/probe/cublas_trans_probe $n 3 > "$OUT/probe_$n.txt" 2>&1
  ncu --clock-control none --metrics gpu__time_duration.sum \
    build-gpu/probe/cublas_trans_probe $n 1 > "$OUT/ncu_$n.txt" 2>&1
done
echo "probe done $SECONDS s" >> "$OUT/progress.txt"
