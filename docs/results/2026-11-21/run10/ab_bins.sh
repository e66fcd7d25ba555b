#!/usr/bin/env bash
# ab_bins.sh - A/B of xnbench binaries with their default SYMV variants,
# alternating inside each round (same machine start).
# Usage: ab_bins.sh OUTDIR ROUNDS PREC SIZES NAME=BINARY...
set -uo pipefail
out=$1 rounds=$2 prec=$3 sizes=$4
shift 4
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for nb in "$@"; do
    name=${nb%%=*} bin=${nb#*=}
    "$bin" symv --device gpu --prec "$prec" --uplo both --sizes "$sizes" --reps 20 \
      --quiet --csv "$out/ab_${name}_${prec}_${r}.csv" > /dev/null 2>> "$out/stderr.log" ||
      echo "failed: $name r=$r" >> "$out/stderr.log"
  done
done
