#!/usr/bin/env bash
# device_run4.sh - run 11's fourth H200 call: old (ae3f1f7) against v4 (this
# tree) at larger aligned orders, and why single precision loses ~17 % at
# orders nb = 128 does not divide near 8000 (lda changed alone; every
# variant). Carries build-ab/ only; OUT receives ab4.tgz.
set -uo pipefail
R=docs/results/2026-11-21/run11
B=build-ab/bench
source build-ab/_devlibs/enter.sh
o=/tmp/ab4
mkdir -p $o
for p in d s; do
  bash $R/ab_bins.sh $o/large 2 $p 14200,16384,30000,32768 "" old=$B/xnbench_old v4=$B/xnbench_v4
done
bash $R/ab_bins.sh $o/lda 1 s 8000,8064 "--lda-pad 64" old=$B/xnbench_old v4=$B/xnbench_v4
bash $R/ab_bins.sh $o/lda 1 s 8000,8064 "--lda-pad 0" old=$B/xnbench_old v4=$B/xnbench_v4
echo "ab done $SECONDS s" >> $o/progress.txt
$B/xnbench_v4 symv --device gpu --prec s --uplo both --sizes 8000,8064 --variant all \
  --reps 10 --csv $o/tune_s.csv > $o/tune_s.txt 2>&1
echo "tune done $SECONDS s" >> $o/progress.txt
tar czf "$OUT/ab4.tgz" -C /tmp ab4
