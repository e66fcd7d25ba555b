#!/usr/bin/env bash
# device_run3.sh - run 11's third H200 call: the SYMV GPU tests on this tree
# (and on a mutant whose diagonal tiles multiply their unstored zeros, which
# InfAtRedirectTargetsMatchesNaive must catch), then the A/B: old = ae3f1f7,
# v1 = guarded loads with consecutive rows per lane, v4 = this tree (lane l
# rows l, l + 32, ..; every tile but the inner off-diagonal ones out of
# line). Carries build-ab/ only; OUT receives ab3.tgz.
set -uo pipefail
R=docs/results/2026-11-21/run11
B=build-ab/bench
source build-ab/_devlibs/enter.sh
o=/tmp/ab3
mkdir -p $o
build-ab/tests/test_gpu_symv > $o/test_gpu_symv.log 2>&1
echo "test rc=$? $SECONDS s" >> $o/progress.txt
build-ab/tests/test_gpu_symv_mutant --gtest_filter='*InfAtRedirect*' > $o/test_mutant.log 2>&1
echo "mutant rc=$? (must be 1) $SECONDS s" >> $o/progress.txt
for p in d s; do
  bash $R/ab_bins.sh $o 2 $p 8000,14200,16384,30000 "" old=$B/xnbench_old v1=$B/xnbench_v1 v4=$B/xnbench_v4
  bash $R/ab_bins.sh $o 2 $p 8000,14200,16384 "--lda-pad 1" old=$B/xnbench_old v1=$B/xnbench_v1 v4=$B/xnbench_v4
done
bash $R/ab_bins.sh $o 2 s 7936:8448:64 "" old=$B/xnbench_old v4=$B/xnbench_v4
bash $R/ab_bins.sh $o 2 d 7936:8448:64 "" old=$B/xnbench_old v4=$B/xnbench_v4
echo "ab done $SECONDS s" >> $o/progress.txt
tar czf "$OUT/ab3.tgz" -C /tmp ab3
