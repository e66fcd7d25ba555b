#!/usr/bin/env bash
# device_run7.sh - run 11's seventh H200 call: where double should switch
# from variant 35 (nb 64) to 34 (nb 128), and single's 33 against 34 and 36
# at orders between the earlier points, all on v4 (this tree). Carries
# build-ab/ only; OUT receives ab7.tgz.
set -uo pipefail
B=build-ab/bench
source build-ab/_devlibs/enter.sh
o=/tmp/ab7
mkdir -p $o
$B/xnbench_v4 symv --device gpu --prec d --uplo both --variant 33,34,35 --reps 15 \
  --sizes 8192:12288:512,8300,8700,9100,9500,9900,10300,10700,11100,11500,11900 \
  --csv $o/d_switch.csv > /dev/null 2>> $o/stderr.log
$B/xnbench_v4 symv --device gpu --prec s --uplo both --variant 33,34,36 --reps 15 \
  --sizes 3000,4500,5000,7000,7500,9000,11000,13000,15000,17000,24000,28000 \
  --csv $o/s_between.csv > /dev/null 2>> $o/stderr.log
echo "done $SECONDS s" >> $o/progress.txt
tar czf "$OUT/ab7.tgz" -C /tmp ab7
