#!/usr/bin/env bash
# bench_symv.sh - issue 3's SYMV figures on the H200, in one go.
#
# Run from the repository root, after building (build/bench/xnbench) and
# `source build/_devlibs/enter.sh` (docs/gpu.md):
#
#   scripts/bench_symv.sh [OUTDIR]
#
# OUTDIR (default: $OUT, else ./bench-out/symv) receives NAME.txt (the
# printed table and summary), NAME.csv and NAME.json for each run:
#   main   xnDsymv/xnSsymv vs cublas?symv (both atomics modes), d and s,
#          L and U, n = 8192, 16384, 32768, default variant     (~15 s)
#   osc    the oscillation sweep n = 14172..14200 (step 1), d and s, L and U,
#          default variant; the summary prints the spread over n  (~40 s)
#   tune   --variant all (Nath et al., SC'11, section 6.1 autotuning; needs a build
#          with -DXN_BUILD_TUNING=ON for more than the defaults) at n = 8192 and
#          16384, d and s, L and U; the summary ranks the variants by the
#          geometric mean of bandwidth                           (~15 s)
# Estimates: ours ~0.27 ms per double call at n = 16384 (stored triangle at
# ~4 TB/s), cuBLAS's default mode 2-3.5x slower and its atomics mode about
# as fast (docs/gpu.md: 2.07 / 1.14 / 4.0 TB/s at 32768),
# batches of ~1 ms, 30/20/20 timed batches: about 1 minute in all, 1.5 with
# process start-up. Each run also measures the device-to-device copy
# bandwidth once, and cublas?gemv (N and T) once per precision and n.
#
# Environment: XNBENCH (the binary, default build/bench/xnbench), SEED (a
# base seed for every run, default fresh), XNBENCH_ARGS (extra options for
# every run, e.g. "--lda-pad 7"), REPS_MAIN / REPS_OSC / REPS_TUNE (timed
# batches, default 30 / 20 / 20).
set -uo pipefail

OUTDIR=${1:-${OUT:-./bench-out/symv}}
XNBENCH=${XNBENCH:-build/bench/xnbench}
read -r -a EXTRA <<< "${XNBENCH_ARGS:-}"
[ -n "${SEED:-}" ] && EXTRA+=(--seed "$SEED")

if [ ! -x "$XNBENCH" ]; then
  echo "bench_symv.sh: $XNBENCH not found (build first, or set XNBENCH)" >&2
  exit 2
fi
mkdir -p "$OUTDIR" || exit 2

status=0
ran=()
t0=$(date +%s)

# run NAME ARGS...: one `xnbench symv` run, output to NAME.txt/.csv/.json.
XNBENCH_COMMAND=symv
source "$(dirname "$0")/bench_lib.sh"

run main --prec both --uplo both --sizes 8192,16384,32768 --reps "${REPS_MAIN:-30}"
run osc --prec both --uplo both --sizes 14172:14200 --reps "${REPS_OSC:-20}"
run tune --prec both --uplo both --sizes 8192,16384 --variant all \
  --reps "${REPS_TUNE:-20}"

# Summary: each run's own summary, then every row that is not "ok".
echo
echo "=== summary ($(( $(date +%s) - t0 )) s), files in $OUTDIR"
for name in "${ran[@]}"; do
  echo "--- $name"
  sed -n '/^summary/,$p' "$OUTDIR/$name.txt" | sed '/^$/d'
  f="$OUTDIR/$name.csv"
  if [ ! -s "$f" ] || [ "$(wc -l < "$f")" -le 1 ]; then
    echo "no records"
    status=1
    continue
  fi
  awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["status"] != "ok" {
      bad = bad sprintf("\n  %s %s n=%s variant %s: %s", $col["prec"], $col["uplo"],
                        $col["n"], $col["variant_id"], $col["status"])
    }
    END { if (bad != "") printf "not ok (see the table for the message):%s\n", bad }' "$f"
done
exit $status
