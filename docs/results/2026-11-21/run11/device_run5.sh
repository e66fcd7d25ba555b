#!/usr/bin/env bash
# device_run5.sh - run 11's fifth H200 call: the register variants over
# orders that nb divides and orders it does not, with this tree's clipped
# tiles (v4), to re-choose the defaults; v4b (clipped single tiles loaded in
# two halves too) on the orders where 34 lost. Carries build-ab/ only; OUT
# receives ab5.tgz.
set -uo pipefail
B=build-ab/bench
source build-ab/_devlibs/enter.sh
o=/tmp/ab5
mkdir -p $o
$B/xnbench_v4 symv --device gpu --prec s --uplo both --variant 33,34,35,36 --reps 15 \
  --sizes 4096,6000,8000,8064,8192,10000,12288,14200,16384,20000 \
  --csv $o/var_s.csv > $o/var_s.txt 2>&1
echo "s done $SECONDS s" >> $o/progress.txt
$B/xnbench_v4 symv --device gpu --prec d --uplo both --variant 33,34,35,36 --reps 15 \
  --sizes 4000,6000,8000,8100,8192,8256,10000,12288,14200,16384 \
  --csv $o/var_d.csv > $o/var_d.txt 2>&1
echo "d done $SECONDS s" >> $o/progress.txt
for b in v4 v4b v4; do
  $B/xnbench_$b symv --device gpu --prec s --uplo both --variant 33,34 --reps 15 \
    --sizes 8000,8064,14200 --csv $o/g_${b}_$SECONDS.csv > /dev/null 2>&1
done
echo "g done $SECONDS s" >> $o/progress.txt
tar czf "$OUT/ab5.tgz" -C /tmp ab5
