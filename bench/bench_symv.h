// bench_symv.h - `xnbench symv`: xnSsymv/xnDsymv against cublasSsymv/
// cublasDsymv (both atomics modes) in the same run, with the device's copy
// and ?gemv bandwidth as the yardstick (bench_symv.cu; usage:
// docs/xnbench.md, "symv"). xnbench.cpp parses the command line into
// SymvOptions and hands over.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_util.h"

namespace xnb {

// With CommonOptions' seed (xnbench.cpp draws a fresh one unless --seed),
// csv, json and quiet.
struct SymvOptions : CommonOptions {
  std::vector<char> precs{'d', 's'};  // double first, as in `gemm`
  std::vector<char> uplos{'L', 'U'};
  std::vector<long long> sizes;  // empty: 8192, 16384, 32768
  int reps = 20;                 // timed batches per routine
  int warmup = 2;                // untimed batches per routine
  int batch = 0;                 // calls per event pair; 0 = automatic
  bool all_variants = false;     // --variant all: every compiled variant
  std::vector<int> variants;     // --variant ID[,ID...]: XN_OPT_SYMV_VARIANT values (0 =
                                 // built-in default); empty = the process default
                                 // (XN_SYMV_VARIANT, else 0)
  long long lda_pad = 0;         // extra rows beyond n rounded up to 32
  long long ref_rows = 256;      // sampled rows of y; <= 0 = every row
  double alpha = 1.5, beta = 0.5;
  std::string device = "auto";  // gpu | auto
};

// Runs the symv benchmark; returns the process exit status (0 ok or no GPU
// with --device auto, 1 an error row or a failed CUDA/cuBLAS call, or no GPU
// with --device gpu).
int run_symv(const SymvOptions &o);

}  // namespace xnb
