#!/usr/bin/env bash
# bench_gpu.sh - xNGEMM's performance and accuracy tables on the H200.
#
# Run from the repository root, after building (build/bench/xnbench) and
# `source build/_devlibs/enter.sh` (docs/gpu.md):
#
#   scripts/bench_gpu.sh [OUTDIR] [PART...]
#
# OUTDIR: where the tables go (default: $OUT, else ./bench-out). For each part
# P it writes P.txt (the printed table), P.csv and P.json (one record per
# case, see docs/xnbench.md), then prints a summary of all parts.
#
# PARTs (default: table rect, about 2 minutes on an H200):
#   table    (a) square, NN, uniform [0,1), double and single,
#                n = 1024 2048 4096 8192 16384 32768                (~1 min)
#   rect     (c) rectangular, double and single: m = 32768, k = 8192,
#                n = 32768 (the issue's "32768x8192x32768" read as m x k x n;
#                xnbench's --shape is MxNxK, so 32768x32768x8192) and, in
#                case the other reading was meant, m = 32768, n = 8192,
#                k = 32768; then NN, TN, NT, TT at n = 16384        (~1 min)
#   sweep-d  (b) double, square NN, n = 1024..32768 step 1024, automatic
#                reps (3 at the largest sizes): the ">= 0.98x at every n"
#                check                                              (~2-3 min)
#   sweep-s  (b) the same in single precision                       (~2-3 min)
#   sweep    sweep-d and sweep-s
#   all      table rect sweep-d sweep-s                             (~6-7 min)
#
# Environment: XNBENCH (the binary, default build/bench/xnbench),
# XNBENCH_ARGS (extra options for every run, e.g. "--leaf 2048"),
# MIN_SPEEDUP (the summary's threshold, default 0.98).
set -uo pipefail

OUTDIR=${1:-${OUT:-./bench-out}}
[ $# -gt 0 ] && shift
PARTS=("$@")
[ ${#PARTS[@]} -eq 0 ] && PARTS=(table rect)
XNBENCH=${XNBENCH:-build/bench/xnbench}
MIN_SPEEDUP=${MIN_SPEEDUP:-0.98}
read -r -a EXTRA <<< "${XNBENCH_ARGS:-}"

if [ ! -x "$XNBENCH" ]; then
  echo "bench_gpu.sh: $XNBENCH not found (build first, or set XNBENCH)" >&2
  exit 2
fi
mkdir -p "$OUTDIR" || exit 2

status=0
ran=()

# run NAME ARGS... and CSV_AWK (records read by column name).
source "$(dirname "$0")/bench_lib.sh"

part_table() {
  run table --prec both --trans NN --dist u01 --time-budget 3 \
    --sizes 1024,2048,4096,8192,16384,32768
}
part_rect() {
  run rect --prec both --dist u01 \
    --shape 32768x32768x8192,32768x8192x32768 --trans NN
  run trans --prec both --dist u01 --sizes 16384 --trans NN,TN,NT,TT
}
part_sweep() {  # $1 = d or s
  run "sweep-$1" --prec "$1" --trans NN --dist u01 --sizes 1024:32768:1024
}

for p in "${PARTS[@]}"; do
  case $p in
    table) part_table ;;
    rect) part_rect ;;
    sweep-d) part_sweep d ;;
    sweep-s) part_sweep s ;;
    sweep) part_sweep d; part_sweep s ;;
    all) part_table; part_rect; part_sweep d; part_sweep s ;;
    *) echo "bench_gpu.sh: unknown part '$p' (table rect sweep-d sweep-s sweep all)" >&2
       exit 2 ;;
  esac
done

# Summary: per run, the smallest speedup and every case below MIN_SPEEDUP,
# the largest relative errors of both routines, and every case not "ok".
echo
echo "=== summary (threshold ${MIN_SPEEDUP}x), files in $OUTDIR"
for name in "${ran[@]}"; do
  f="$OUTDIR/$name.csv"
  [ -s "$f" ] || { echo "$name: no records"; status=1; continue; }
  awk -v name="$name" -v thr="$MIN_SPEEDUP" "$CSV_AWK"'
    {
      st = f[col["status"]]; p = f[col["prec"]]
      id = p " " f[col["trans"]] " " f[col["m"]] "x" f[col["n"]] "x" f[col["k"]]
      if (st != "ok") { bad = bad "\n  " id ": " st; next }
      s = f[col["speedup"]]; eo = f[col["ours_max_rel"]]; eb = f[col["base_max_rel"]]
      n[p]++
      if (!(p in min) || s + 0 < min[p] + 0) { min[p] = s; minid[p] = id }
      if (s + 0 < thr + 0) below = below sprintf("\n  %s: %.3fx", id, s)
      if (eo + 0 > maxo[p] + 0) maxo[p] = eo
      if (eb + 0 > maxb[p] + 0) maxb[p] = eb
    }
    END {
      for (p in n)
        printf "%s [%s]: %d case(s) ok, min speedup %.3fx (%s), max rel error ours %.2e, baseline %.2e\n",
               name, p, n[p], min[p], minid[p], maxo[p], maxb[p]
      if (below != "") printf "  below %sx:%s\n", thr, below
      if (bad != "") printf "  not ok:%s\n", bad
    }' "$f"
done
exit $status
