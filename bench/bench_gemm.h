// bench_gemm.h - `xnbench gemm`, `xnbench exdgemm` and `xnbench demo`: our
// GEMM routines against the vendor GEMM in the same run, one table row and
// record per case, or per depth with --per-level (bench_gemm.cpp; the
// runners bench_gpu.cu and bench_cpu.cpp; usage: docs/xnbench.md).
// xnbench.cpp parses the command line into GemmOptions and hands over.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bench_common.h"
#include "bench_util.h"

namespace xnb {

// C is m x n, the inner dimension k.
struct Shape {
  long long m, n, k;
};

// With CommonOptions' seed, csv, json and quiet.
struct GemmOptions : CommonOptions {
  std::string command;  // "gemm" (also for `xnbench exdgemm`) or "demo"
  Routine routine = Routine::Ngemm;
  std::vector<char> precs{'d', 's'};
  bool prec_given = false;
  std::vector<Shape> shapes;  // empty: the defaults of the routine and device
  std::vector<std::pair<bool, bool>> trans{{false, false}};
  Dist dist = Dist::U01;
  bool dist_given = false;
  double phi = 0;
  bool phi_given = false;
  long long ex_budget = -1, ex_block = -1;
  int reps = 0;
  double time_budget = 1.0;
  double train_below = 1e-3;  // --train-below, seconds (CaseSpec::train_below)
  int warmup = 1;
  int levels = -1;
  long long leaf = -1;
  long long min_size = -1;
  int check_nonneg = -1;  // --check-nonneg: XN_OPT_CHECK_NONNEG (-1 untouched)
  long long ref_samples = 512;
  std::string device = "auto";
  CpuLeafKind cpu_leaf = CpuLeafKind::OpenBlas;
  bool baseline = true;
  int level_lo = -1, level_hi = -1;  // --per-level L0:L1
  // GPU only: --leaf-train, --cpu-baseline, --ngemm-u01 (CaseSpec).
  bool leaf_train = false, cpu_baseline = false, ngemm_u01 = false;
  double timed_beta = 0;  // --timed-beta (CaseSpec)
  double timed_alpha = 1;  // --timed-alpha (CaseSpec)
};

// Runs the cases; returns the process exit status (0 every case ran or was
// skipped, 1 an error row or no usable GPU with --device gpu, 2 a file that
// cannot be written).
int run_gemm(const GemmOptions &o);

}  // namespace xnb
