#!/usr/bin/env bash
# run_concurrent.sh N PROGRAM [ARGS...] - N copies of a GPU test program at
# once, the GPU time-sliced between their contexts (as under ctest -j, or
# beside other jobs); fails if any copy fails, printing its output; exit 77
# (ctest: skipped) without a device, or when every copy skipped.
set -u
if [ $# -lt 2 ] || ! [ "$1" -ge 1 ] 2>/dev/null; then
  echo "usage: run_concurrent.sh N PROGRAM [ARGS...]  (N >= 1)" >&2
  exit 2
fi
n=$1; shift
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no CUDA device: skipped"; exit 77; fi
logs=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$logs"' EXIT  # (copies left by a timeout)
trap 'exit 143' INT TERM
for i in $(seq 1 "$n"); do
  "$@" >"$logs/$i.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in $(seq 1 "$n"); do
  if ! wait "${pids[$((i - 1))]}"; then
    failed=$((failed + 1))
    echo "== copy $i of $n failed:"
    cat "$logs/$i.log"
  fi
done
if [ "$failed" -gt 0 ]; then echo "$failed of $n copies failed"; exit 1; fi
if ! grep -L "SKIPPED" "$logs"/*.log | grep -q .; then echo "every copy skipped"; exit 77; fi
echo "all $n copies passed; copy 1:"
tail -n 4 "$logs/1.log"
