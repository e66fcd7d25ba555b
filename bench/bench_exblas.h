// bench_exblas.h - `xnbench exblas`: the correctly rounded xnExdgemv and
// xnExddot against cublasDgemv and cublasDdot on the same handle, stream and
// buffers, with a streaming read of the same bytes as the yardstick and
// every checked output compared bit for bit with the exact IEEE reference
// (bench_exblas.cu; usage: docs/xnbench.md, "exblas"). xnbench.cpp parses
// the command line into ExblasOptions and hands over.
#pragma once

#include <string>
#include <vector>

#include "bench_util.h"

namespace xnb {

// With CommonOptions' seed (xnbench.cpp draws a fresh one unless --seed),
// csv, json and quiet.
struct ExblasOptions : CommonOptions {
  bool gemv = true, dot = true;  // --routine gemv|dot|all
  // Empty: the cases (gemv N 16384 phi 0, T 16384 phi 1, N and T
  // 8191 phi 0; dot 2^24 and 2^20 phi 0), filtered by --routine and --trans,
  // phi replaced by --phi if given. Else every selected routine at each size
  // (gemv: n x n; dot: length n), gemv at each --trans.
  std::vector<long long> sizes;
  std::vector<char> trans{'N', 'T'};
  bool trans_given = false;
  double phi = 0;  // entries (u - 0.5) exp(phi randn)
  bool phi_given = false;
  long long inc = 1;       // incx = incy; negative: BLAS order from the far end
  long long lda_pad = 0;   // lda = m + lda_pad
  int reps = 15;           // timed samples per routine
  int warmup = 2;          // untimed samples per routine
  int train = 0;           // calls per sample; 0 = about 2 ms, at most 50
  long long ref_rows = 64;  // gemv outputs checked per call; <= 0 = all
  std::string device = "auto";  // gpu | auto
};

// Runs the benchmark; returns the process exit status (0 ok or no GPU with
// --device auto, 1 an error row, a wrong output or a failed CUDA/cuBLAS
// call, or no GPU with --device gpu, 2 an output file that cannot be
// written).
int run_exblas(const ExblasOptions &o);

}  // namespace xnb
