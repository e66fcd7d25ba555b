#!/usr/bin/env bash
# ab_width.sh - run 10's A/B of the ring kernel's last column-group width.
# One scratch binary (XNBENCH) whose symv_layout() takes the width of the
# column group dispatched last from XN_SYMV_LAST_WIDTH (lower: shift =
# chunk - w; upper: shift = (w - nt) mod chunk); unset = the library's
# layout (nt mod chunk, or chunk). Settings alternate inside each round, so
# they share the machine start. Usage: ab_width.sh OUTDIR ROUNDS PREC SIZES
# VARIANTS WIDTHS... (a width "def" = unset).
set -uo pipefail
out=$1 rounds=$2 prec=$3 sizes=$4 variants=$5
shift 5
XNBENCH=${XNBENCH:-build-ab/xnbench_knob}
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for w in "$@"; do
    if [ "$w" = def ]; then unset XN_SYMV_LAST_WIDTH; else export XN_SYMV_LAST_WIDTH=$w; fi
    "$XNBENCH" symv --device gpu --prec "$prec" --uplo both --sizes "$sizes" \
      --variant "$variants" --reps 20 --quiet --csv "$out/ab_w${w}_${prec}_${r}.csv" \
      > /dev/null 2>> "$out/stderr.log" || echo "failed: w=$w r=$r" >> "$out/stderr.log"
  done
done
unset XN_SYMV_LAST_WIDTH
