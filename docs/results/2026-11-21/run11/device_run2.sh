#!/usr/bin/env bash
# device_run2.sh - run 11's second H200 call: SYMV A/B of the register
# kernel's clipped tiles. old = ae3f1f7 (edge and unaligned tiles element by
# element, mirrored and redirected); v1 = guarded loads, each lane's rows
# consecutive (wide loads where whole); v3 = guarded single-element loads,
# lane l's rows l, l + 32, .., and the clipped diagonal tile split like an
# inner one (this commit). Carries build-ab/ only; OUT receives ab.tgz.
set -uo pipefail
R=docs/results/2026-11-21/run11
B=build-ab/bench
source build-ab/_devlibs/enter.sh
o=/tmp/ab2
for p in d s; do
  bash $R/ab_bins.sh $o 2 $p 8000,14200,16384,30000 "" old=$B/xnbench_old v1=$B/xnbench_v1 v3=$B/xnbench_v3
  bash $R/ab_bins.sh $o 2 $p 8000,14200,16384 "--lda-pad 1" old=$B/xnbench_old v1=$B/xnbench_v1 v3=$B/xnbench_v3
done
bash $R/ab_bins.sh $o 2 s 7936:8448:64 "" old=$B/xnbench_old v3=$B/xnbench_v3
echo "ab done $SECONDS s" >> $o/progress.txt
build-ab/tests/test_gpu_symv > $o/test_gpu_symv.log 2>&1
echo "test rc=$? $SECONDS s" >> $o/progress.txt
tar czf "$OUT/ab2.tgz" -C /tmp ab2
