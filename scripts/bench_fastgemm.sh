#!/usr/bin/env bash
# bench_fastgemm.sh - the tables of the general-input recursive GEMMs
# xn?gemmStrassen and xn?gemmWinograd (Li, Ranka, Sahni, ICPADS'11) on the
# H200.
#
# Run from the repository root, after building (build/bench/xnbench) and
# `source build/_devlibs/enter.sh` (docs/gpu.md):
#
#   scripts/bench_fastgemm.sh [OUTDIR] [PART...]
#
# OUTDIR: where the tables go (default: $OUT, else ./bench-out/fastgemm). For
# each xnbench run NAME it writes NAME.txt (the printed table), NAME.csv and
# NAME.json (one record per row, see docs/xnbench.md), then prints how long
# each part took and a summary of the runs.
#
# PARTs (default: quick). Each part fits one device command (9 minutes);
# the times are those measured on the H200 on 2026-11-25 (both routines
# unless said):
#   quick     (a) square NN, inputs uniform [-1,1), d and s, strassen and
#                 winograd, n = 1024 2048 4096 8192 16384 32768, with
#                 --leaf-train (the leaf GEMMs back to back, `outside`)  (71 s)
#   sweep-d   (b) double, square NN, n = 1024..32768 step 1024, strassen
#                 and winograd, automatic repeats (3 for the large sizes,
#                 up to 25 for the small ones, whose 50-us calls are noisy
#                 with 3)                                    (about 2 min per routine)
#   sweep-s   (b) the same in single precision               (about as long)
#   sweep     sweep-d and sweep-s (about 8 min)
#   accuracy  (c) one row per depth L = 0..4 (--per-level 0:4), s at
#                 n = 16384 and d at 8192, --dist upm1 and paper, strassen
#                 and winograd, with --cpu-baseline (OpenBLAS on the host,
#                 most of the time) and --ngemm-u01 (xn?ngemm at the same
#                 depth on [0,1) inputs), 4096 sampled entries          (228 s)
#   trans     (d) NN, NT, TN, TT at n = 16384 and the rectangular
#                 32768x32768x8192, 32768x8192x32768, 8192x32768x32768
#                 (MxNxK), d and s, strassen and winograd                 (64 s)
# A part writes three files per xnbench run (up to 24 for accuracy): where
# only a few files can be fetched back, tar OUTDIR first.
#   all       quick sweep accuracy trans (about 13 min: more than one command)
#
# Environment: XNBENCH (the binary, default build/bench/xnbench),
# XNBENCH_ARGS (extra options for every run, e.g. "--seed 1"),
# ROUTINES (default "strassen winograd").
set -uo pipefail

OUTDIR=${1:-${OUT:-./bench-out/fastgemm}}
[ $# -gt 0 ] && shift
PARTS=("$@")
[ ${#PARTS[@]} -eq 0 ] && PARTS=(quick)
XNBENCH=${XNBENCH:-build/bench/xnbench}
read -r -a EXTRA <<< "${XNBENCH_ARGS:-}"
read -r -a ROUTINES <<< "${ROUTINES:-strassen winograd}"

if [ ! -x "$XNBENCH" ]; then
  echo "bench_fastgemm.sh: $XNBENCH not found (build first, or set XNBENCH)" >&2
  exit 2
fi
mkdir -p "$OUTDIR" || exit 2

status=0
ran=()
times=()

# run NAME ARGS... and CSV_AWK (records read by column name).
source "$(dirname "$0")/bench_lib.sh"

part_quick() {
  for r in "${ROUTINES[@]}"; do
    run "table-$r" --routine "$r" --prec both --trans NN --dist upm1 --leaf-train \
      --sizes 1024,2048,4096,8192,16384,32768
  done
}
part_sweep() {  # $1 = d or s
  for r in "${ROUTINES[@]}"; do
    run "sweep-$r-$1" --routine "$r" --prec "$1" --trans NN --dist upm1 \
      --warmup 1 --sizes 1024:32768:1024
  done
}
part_accuracy() {
  for r in "${ROUTINES[@]}"; do
    for dist in upm1 paper; do
      run "acc-$r-s-$dist" --routine "$r" --prec s --sizes 16384 --dist "$dist" \
        --per-level 0:4 --cpu-baseline --ngemm-u01 --ref-samples 4096
      run "acc-$r-d-$dist" --routine "$r" --prec d --sizes 8192 --dist "$dist" \
        --per-level 0:4 --cpu-baseline --ngemm-u01 --ref-samples 4096
    done
  done
}
part_trans() {
  for r in "${ROUTINES[@]}"; do
    run "trans-$r" --routine "$r" --prec both --dist upm1 --sizes 16384 \
      --trans NN,NT,TN,TT
    run "rect-$r" --routine "$r" --prec both --dist upm1 --trans NN \
      --shape 32768x32768x8192,32768x8192x32768,8192x32768x32768
  done
}

# timed PART FUNCTION [ARG]: runs a part and notes how long it took.
timed() {
  local part=$1 t0=$SECONDS
  shift
  "$@"
  times+=("$part: $((SECONDS - t0)) s")
  echo "=== part $part took $((SECONDS - t0)) s" >&2
}

for p in "${PARTS[@]}"; do
  case $p in
    quick) timed quick part_quick ;;
    sweep-d) timed sweep-d part_sweep d ;;
    sweep-s) timed sweep-s part_sweep s ;;
    sweep) timed sweep-d part_sweep d; timed sweep-s part_sweep s ;;
    accuracy) timed accuracy part_accuracy ;;
    trans) timed trans part_trans ;;
    all) timed quick part_quick; timed sweep-d part_sweep d
         timed sweep-s part_sweep s; timed accuracy part_accuracy
         timed trans part_trans ;;
    *) echo "bench_fastgemm.sh: unknown part '$p'" \
         "(quick sweep-d sweep-s sweep accuracy trans all)" >&2
       exit 2 ;;
  esac
done

# Summary: per run and precision the speedup range, the largest normalized
# errors (ours and cuBLAS) and their ratio, and every row that was not "ok".
# Columns are found by name in the header; quoted fields (the message) may
# hold commas.
echo
echo "=== time per part: ${times[*]}"
echo "=== summary, files in $OUTDIR"
for name in "${ran[@]}"; do
  f="$OUTDIR/$name.csv"
  [ -s "$f" ] || { echo "$name: no records"; status=1; continue; }
  awk -v name="$name" "$CSV_AWK"'
    {
      p = f[col["prec"]]
      id = p " " f[col["trans"]] " " f[col["m"]] "x" f[col["n"]] "x" f[col["k"]]
      if (f[col["level_forced"]] != "") id = id " L" f[col["level_forced"]]
      if (f[col["status"]] != "ok") { bad = bad "\n  " id ": " f[col["status"]] " " f[col["message"]]; next }
      s = f[col["speedup"]]; eo = f[col["ours_maxnorm"]]; eb = f[col["base_maxnorm"]]
      r = f[col["err_ratio"]]
      n[p]++
      if (s != "") {
        if (!(p in lo) || s + 0 < lo[p] + 0) { lo[p] = s; loid[p] = id }
        if (!(p in hi) || s + 0 > hi[p] + 0) { hi[p] = s; hiid[p] = id }
      }
      if (eo + 0 > maxo[p] + 0) maxo[p] = eo
      if (eb + 0 > maxb[p] + 0) maxb[p] = eb
      if (r + 0 > maxr[p] + 0) { maxr[p] = r; maxrid[p] = id }
    }
    END {
      for (p in n)
        printf "%s [%s]: %d row(s) ok, speedup %.3fx (%s) .. %.3fx (%s); max normalized error ours %.2e, cuBLAS %.2e; largest ratio %.1f (%s)\n",
               name, p, n[p], lo[p], loid[p], hi[p], hiid[p], maxo[p], maxb[p], maxr[p], maxrid[p]
      if (bad != "") printf "  not ok:%s\n", bad
    }' "$f"
done
exit $status
