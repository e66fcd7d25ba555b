#!/usr/bin/env bash
source build/_devlibs/enter.sh
ctest --test-dir build -L gpu -j4 --output-on-failure --timeout 470 > $OUT/ctest_gpu.txt 2>&1
grep -E "tests passed|\(Failed\)|Timeout|intercept" $OUT/ctest_gpu.txt | tail -12
bash scripts/bench_intercept.sh cublas 16384 > $OUT/bench_cublas.txt 2>&1
grep -E "small|large" $OUT/bench_cublas.txt
