#!/usr/bin/env bash
# ab_bins.sh - A/B of xnbench binaries with their default SYMV variants,
# alternating inside each round (same machine start). Run 10's script with
# extra options for every call (e.g. "--lda-pad 1" for unaligned columns).
# Usage: ab_bins.sh OUTDIR ROUNDS PREC SIZES "EXTRA OPTIONS" NAME=BINARY...
set -uo pipefail
out=$1 rounds=$2 prec=$3 sizes=$4 extra=$5
shift 5
read -r -a more <<< "$extra"
tag=$(printf '%s' "$extra" | tr -c 'A-Za-z0-9' '_')
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for nb in "$@"; do
    name=${nb%%=*} bin=${nb#*=}
    "$bin" symv --device gpu --prec "$prec" --uplo both --sizes "$sizes" --reps 20 \
      "${more[@]}" --quiet --csv "$out/ab_${name}_${prec}${tag:+_$tag}_${r}.csv" \
      > /dev/null 2>> "$out/stderr.log" || echo "failed: $name $prec $extra r=$r" >> "$out/stderr.log"
  done
done
