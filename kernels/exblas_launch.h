// exblas_launch.h - host-side launchers of the one-pass correctly rounded
// dot-product kernels (xnExdgemv, xnExddot; numerics/exact_dot.h). Each
// enqueues on `stream` and returns the launch's cudaError_t (never
// synchronises).
//
// A problem is `outputs` dot products of length `terms`: output o is
// sum_t a[o * a_out + t * a_term] * x[t * x_term] (strides in elements, any
// sign: a BLAS vector with a negative increment is its far end with a
// negative stride). The first kernel accumulates `chunks` consecutive pieces
// of every dot product into parts[chunk * outputs + o]; the second merges
// them (in chunk order, or in a block's fixed tree for few outputs with many
// chunks) and writes y[o * y_out] = RN(alpha X_o + beta y_o).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/launch.h"
#include "numerics/exact_dot.h"

namespace xn {

struct DotProblem {
  std::int64_t outputs, terms;
  const double *a;
  std::int64_t a_out, a_term;
  const double *x;
  std::int64_t x_term;
};

// How the accumulation is laid out: `chunks` pieces of the terms, and
// whether outputs are owned by threads (consecutive outputs adjacent in
// memory: a_out == 1, as the rows of a column-major matrix) or by blocks
// (consecutive terms adjacent: a_term == 1 or any other stride).
struct DotPlan {
  bool thread_per_output;
  int chunks;
  std::int64_t terms_per_chunk;
};

// The plan for a problem on a device with `sms` multiprocessors (0: unknown).
DotPlan plan_dot(const DotProblem &p, int sms);

// Bytes of parts the plan writes (aligned to 256).
std::size_t dot_parts_bytes(const DotProblem &p, const DotPlan &plan);

// The TwoSums the plan's accumulation of one output counts (its error bound's
// N, numerics/exact_dot.h): products, in-block merges and chunk merges.
double dot_plan_ops(const DotProblem &p, const DotPlan &plan);

cudaError_t launch_dot2_parts(cudaStream_t stream, const DotProblem &p, const DotPlan &plan,
                              exact::Dot2 *parts);

// y[o * y_out] = RN(alpha X_o + beta y_o) for every output; beta == 0 never
// reads y. Values the bound leaves undecided are computed exactly from the
// operands (exact_dot_entry) by the thread of that output.
cudaError_t launch_dot2_finish(cudaStream_t stream, const DotProblem &p, const DotPlan &plan,
                               const exact::Dot2 *parts, ScalarArg<double> alpha,
                               ScalarArg<double> beta, double *y, std::int64_t y_out);

}  // namespace xn
