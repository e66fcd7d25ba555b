// bench_batched.h - `xnbench batched`: xnExdgemmStridedBatched and
// xnExdgemmBatched against cublasDgemmStridedBatched and cublasDgemmBatched
// (bench_batched.cu; usage: docs/xnbench.md, "batched"). xnbench.cpp parses
// the command line into BatchedOptions and hands over.
#pragma once

#include <string>
#include <vector>

#include "bench_gemm.h"
#include "bench_util.h"

namespace xnb {

// With CommonOptions' seed (xnbench.cpp draws a fresh one unless --seed).
struct BatchedOptions : CommonOptions {
  // Empty: issue 35's cases (64 products of 1024^3 at phi 0, 512 of 256^3
  // at phi 1); else `batch` products of each shape at `phi`.
  std::vector<Shape> sizes;
  long long batch = 64;
  double phi = 0;  // entries (u - 0.5) exp(phi randn)
  bool phi_given = false;
  bool strided = true, array = true;  // --form strided|array|both
  int reps = 7, warmup = 2;
  long long check = 64;  // sampled entries (of sampled products) per form
  // --products: "auto" (the engine's choice), "digits" (the CRT digits
  // made in the INT8 products' epilogue wherever k is one chunk) or "sums"
  // (cuBLAS's INT8 GEMM, int32 sums): xn::testing::set_batched_digits.
  std::string products = "auto";
  std::string device = "auto";  // gpu | auto
};

// Runs the benchmark; returns the process exit status (0 ok or no GPU with
// --device auto, 1 a wrong entry, a failed call, or no GPU with --device
// gpu).
int run_batched(const BatchedOptions &o);

}  // namespace xnb
