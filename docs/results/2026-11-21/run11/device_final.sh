#!/usr/bin/env bash
# device_final.sh - run 11's last H200 call, on this tree (build-gpu/): the
# GPU test suite (all but the ngemm racecheck, whose code is unchanged),
# scripts/bench_symv.sh (main, oscillation, tuning), the unaligned and
# edge orders, and v7 (build-ab/: single-precision clipped tiles with each
# lane's rows consecutive) against this tree on the single-precision ones.
# OUT receives final.tgz.
set -uo pipefail
R=docs/results/2026-11-21/run11
o=/tmp/final
mkdir -p $o
source build-gpu/_devlibs/enter.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
(cd build-gpu && ctest -L gpu -E '^gpu_sanitizer_racecheck$' --output-on-failure > $o/ctest_gpu.log 2>&1)
echo "ctest rc=$? $SECONDS s" >> $o/progress.txt
XNBENCH=build-gpu/bench/xnbench bash scripts/bench_symv.sh $o/bench > $o/bench_symv.log 2>&1
echo "bench rc=$? $SECONDS s" >> $o/progress.txt
for pad in 0 1; do
  bash $R/ab_bins.sh $o/clip 2 s 6000,8000,14200,16384,30000 "--lda-pad $pad" \
    final=build-gpu/bench/xnbench v7=build-ab/bench/xnbench_v7
done
build-gpu/bench/xnbench symv --device gpu --prec d --uplo both --lda-pad 1 --reps 15 \
  --sizes 8000,14200,16384,30000 --csv $o/clip/d_pad1.csv > /dev/null 2>&1
echo "clip done $SECONDS s" >> $o/progress.txt
tar czf "$OUT/final.tgz" -C /tmp final
