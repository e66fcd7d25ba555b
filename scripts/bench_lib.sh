# bench_lib.sh - what the benchmark scripts share (sourced by bench_gpu.sh
# and bench_fastgemm.sh): the xnbench runner and a CSV reader for awk.
#
# The sourcing script sets OUTDIR, XNBENCH and the array EXTRA, and has
# `status=0` and `ran=()`; XNBENCH_COMMAND is the xnbench command (default
# gemm), and a start time t0 (seconds) adds the elapsed time to each line.

# run NAME ARGS...: one xnbench run on the GPU, the printed table to
# NAME.txt, the records to NAME.csv / NAME.json; a failed run sets status=1.
run() {
  local name=$1 command=${XNBENCH_COMMAND:-gemm}
  shift
  echo "=== $name: xnbench $command $* ${EXTRA[*]}${t0:+ ($(( $(date +%s) - t0 )) s elapsed)}" >&2
  "$XNBENCH" "$command" --device gpu "$@" "${EXTRA[@]}" \
    --csv "$OUTDIR/$name.csv" --json "$OUTDIR/$name.json" | tee "$OUTDIR/$name.txt"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    echo "$(basename "$0"): $name: xnbench exited with status $rc" >&2
    status=1
  fi
  ran+=("$name")
}

# An awk prologue: csv(line, f) splits a CSV line into f[1..n] (RFC 4180
# quoting: the message column may hold commas) and returns n; the header
# line fills col[name] = index. Use as awk "$CSV_AWK"' { ... f[col["x"]] ... }'.
# shellcheck disable=SC2016
CSV_AWK='
function csv(s, f,    n, i, c, q, cur) {
  n = 0; cur = ""; q = 0
  for (i = 1; i <= length(s); i++) {
    c = substr(s, i, 1)
    if (q) {
      if (c == "\"" && substr(s, i + 1, 1) == "\"") { cur = cur c; i++ }
      else if (c == "\"") q = 0
      else cur = cur c
    } else if (c == "\"") q = 1
    else if (c == ",") { f[++n] = cur; cur = "" }
    else cur = cur c
  }
  f[++n] = cur
  return n
}
NR == 1 { nh = csv($0, h); for (i = 1; i <= nh; i++) col[h[i]] = i; next }
{ delete f; csv($0, f) }
'
