#!/usr/bin/env bash
# device_run6.sh - run 11's sixth H200 call: single precision, variants 33,
# 34 and 36 in old (ae3f1f7), v4 (diagonal tiles out of line) and v6 (the
# single-precision inner diagonal tile inline again), alternating, two
# rounds. Carries build-ab/ only; OUT receives ab6.tgz.
set -uo pipefail
B=build-ab/bench
source build-ab/_devlibs/enter.sh
o=/tmp/ab6
mkdir -p $o
for r in 1 2; do
  for b in old v4 v6; do
    $B/xnbench_$b symv --device gpu --prec s --uplo both --variant 33,34,36 --reps 15 \
      --sizes 6000,8000,8192,10000,12288,14200,16384,20000,32768 \
      --csv $o/v_${b}_$r.csv > /dev/null 2>> $o/stderr.log
  done
done
echo "done $SECONDS s" >> $o/progress.txt
tar czf "$OUT/ab6.tgz" -C /tmp ab6
