// exblas_kernels.cu - the one-pass correctly rounded dot products of
// xnExdgemv and xnExddot (kernels/exblas_launch.h; the arithmetic is
// numerics/exact_dot.h, shared with the CPU). A is read once, as a plain
// streaming read; the parts of each dot product (32 bytes per output and
// chunk) are 0.4-3 % of it for square matrices, and the exact fallback reads
// an output's operands again only for the rare values the error bound
// leaves undecided.
#include <algorithm>
#include <cstdint>

#include "kernels/exblas_launch.h"

namespace xn {

using exact::Dot2;

namespace {

constexpr int kThreads = 256;
// Thread-per-output plans stage their chunk of x in shared memory.
constexpr std::int64_t kMaxStagedTerms = 4096;
// Block-per-output plans give each thread at least this many terms.
constexpr std::int64_t kMinTermsPerThread = 8;
// Outputs fewer than this never get a thread each (too few threads).
constexpr std::int64_t kMinThreadOutputs = 64;
// Chunks are gridDim.y.
constexpr std::int64_t kMaxChunks = 65535;
// Loads of A each thread of the thread-per-output kernel has in flight.
constexpr int kRowLoads = 8;

__device__ double load_streaming(const double *p) { return __ldcs(p); }

// One thread per output o of a chunk of terms; x's chunk in shared memory.
__global__ void __launch_bounds__(kThreads)
    dot2_thread_parts_kernel(DotProblem p, std::int64_t per_chunk, Dot2 *parts) {
  __shared__ double xs[kMaxStagedTerms];
  const std::int64_t t0 = std::int64_t(blockIdx.y) * per_chunk;
  const std::int64_t nt = min(per_chunk, p.terms - t0);
  for (std::int64_t t = threadIdx.x; t < nt; t += kThreads) xs[t] = p.x[(t0 + t) * p.x_term];
  __syncthreads();
  const std::int64_t o = std::int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (o >= p.outputs) return;
  const double *a = p.a + o * p.a_out + t0 * p.a_term;
  Dot2 d;
  exact::dot2_clear(d);
  std::int64_t t = 0;
  // Eight loads in flight before their arithmetic (four left the H200's
  // memory idle: gemv N 8191 ran 0.75 of cublasDgemv's rate, eight 0.92).
  for (; t + kRowLoads <= nt; t += kRowLoads) {
    double v[kRowLoads];
#pragma unroll
    for (int u = 0; u < kRowLoads; ++u) v[u] = load_streaming(a + (t + u) * p.a_term);
#pragma unroll
    for (int u = 0; u < kRowLoads; ++u) exact::dot2_add(d, v[u], xs[t + u]);
  }
  for (; t < nt; ++t) exact::dot2_add(d, load_streaming(a + t * p.a_term), xs[t]);
  parts[std::int64_t(blockIdx.y) * p.outputs + o] = d;
}

__device__ Dot2 shuffle_down(const Dot2 &d, int offset) {
  Dot2 r;
  r.s = __shfl_down_sync(0xffffffffu, d.s, offset);
  r.c = __shfl_down_sync(0xffffffffu, d.c, offset);
  r.cabs = __shfl_down_sync(0xffffffffu, d.cabs, offset);
  r.flags = __shfl_down_sync(0xffffffffu, d.flags, offset);
  r.pad_ = 0;
  return r;
}

// The block's accumulators merged in a fixed tree (lanes by shuffles, then
// warps in order); the total is valid in thread 0.
__device__ Dot2 block_merge(Dot2 d, Dot2 *warp_parts) {
  for (int offset = 16; offset > 0; offset /= 2) exact::dot2_merge(d, shuffle_down(d, offset));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_parts[warp] = d;
  __syncthreads();
  Dot2 total = warp_parts[0];
  if (threadIdx.x == 0)
    for (int w = 1; w < kThreads / 32; ++w) exact::dot2_merge(total, warp_parts[w]);
  return total;
}

// One block per (output, chunk): the threads stride over the chunk's terms,
// then merge in a fixed tree (lanes by shuffles, warps in order).
__global__ void __launch_bounds__(kThreads)
    dot2_block_parts_kernel(DotProblem p, std::int64_t per_chunk, Dot2 *parts) {
  __shared__ Dot2 warp_parts[kThreads / 32];
  const std::int64_t o = blockIdx.x;
  const std::int64_t t0 = std::int64_t(blockIdx.y) * per_chunk;
  const std::int64_t t1 = min(p.terms, t0 + per_chunk);
  const double *a = p.a + o * p.a_out;
  Dot2 d;
  exact::dot2_clear(d);
  std::int64_t t = t0 + threadIdx.x;
  for (; t + 3 * kThreads < t1; t += 4 * kThreads) {
    const double a0 = load_streaming(a + t * p.a_term);
    const double a1 = load_streaming(a + (t + kThreads) * p.a_term);
    const double a2 = load_streaming(a + (t + 2 * kThreads) * p.a_term);
    const double a3 = load_streaming(a + (t + 3 * kThreads) * p.a_term);
    const double x0 = p.x[t * p.x_term], x1 = p.x[(t + kThreads) * p.x_term];
    const double x2 = p.x[(t + 2 * kThreads) * p.x_term];
    const double x3 = p.x[(t + 3 * kThreads) * p.x_term];
    exact::dot2_add(d, a0, x0);
    exact::dot2_add(d, a1, x1);
    exact::dot2_add(d, a2, x2);
    exact::dot2_add(d, a3, x3);
  }
  for (; t < t1; t += kThreads) exact::dot2_add(d, load_streaming(a + t * p.a_term), p.x[t * p.x_term]);
  const Dot2 total = block_merge(d, warp_parts);
  if (threadIdx.x == 0) parts[std::int64_t(blockIdx.y) * p.outputs + o] = total;
}

__device__ double scalar_value(const ScalarArg<double> &s) { return s.dev ? *s.dev : s.value; }

__global__ void __launch_bounds__(kThreads)
    dot2_finish_kernel(DotProblem p, int chunks, double ops, const Dot2 *parts,
                       ScalarArg<double> alpha_arg, ScalarArg<double> beta_arg, double *y,
                       std::int64_t y_out) {
  const std::int64_t o = std::int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (o >= p.outputs) return;
  const double alpha = scalar_value(alpha_arg), beta = scalar_value(beta_arg);
  double *yo = y + o * y_out;
  const double c = beta != 0.0 ? *yo : 0.0;
  Dot2 d = parts[o];
  for (int k = 1; k < chunks; ++k) exact::dot2_merge(d, parts[std::int64_t(k) * p.outputs + o]);
  double out;
  if (!exact::dot2_round(d, ops, alpha, beta, c, &out))
    out = exact::exact_dot_entry(p.a + o * p.a_out, p.a_term, p.x, p.x_term, p.terms, alpha,
                                 beta, yo);
  *yo = out;
}

// The finish of few outputs with many chunks (the dot product): a block per
// output merges its chunks in a fixed tree, then thread 0 rounds.
__global__ void __launch_bounds__(kThreads)
    dot2_finish_block_kernel(DotProblem p, int chunks, double ops, const Dot2 *parts,
                             ScalarArg<double> alpha_arg, ScalarArg<double> beta_arg,
                             double *y, std::int64_t y_out) {
  __shared__ Dot2 warp_parts[kThreads / 32];
  const std::int64_t o = blockIdx.x;
  Dot2 d;
  exact::dot2_clear(d);
  for (int k = threadIdx.x; k < chunks; k += kThreads)
    exact::dot2_merge(d, parts[std::int64_t(k) * p.outputs + o]);
  const Dot2 total = block_merge(d, warp_parts);
  if (threadIdx.x != 0) return;
  const double alpha = scalar_value(alpha_arg), beta = scalar_value(beta_arg);
  double *yo = y + o * y_out;
  const double c = beta != 0.0 ? *yo : 0.0;
  double out;
  if (!exact::dot2_round(total, ops, alpha, beta, c, &out))
    out = exact::exact_dot_entry(p.a + o * p.a_out, p.a_term, p.x, p.x_term, p.terms, alpha,
                                 beta, yo);
  *yo = out;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A block per output finishes when the chunks outnumber what one thread
// merges quickly and the outputs are few.
constexpr int kBlockFinishChunks = 64;
constexpr std::int64_t kBlockFinishOutputs = 4096;

}  // namespace

DotPlan plan_dot(const DotProblem &p, int sms) {
  const std::int64_t target_blocks = 8 * std::int64_t(sms > 0 ? sms : 132);
  DotPlan plan{};
  // A thread per output stages each chunk of x (at most kMaxStagedTerms) in
  // shared memory, and gridDim.y caps the chunks at 65535: longer dot
  // products take the block plan.
  plan.thread_per_output = p.a_out == 1 && p.outputs >= kMinThreadOutputs &&
                           ceil_div(p.terms, kMaxStagedTerms) <= kMaxChunks;
  std::int64_t chunks;
  if (plan.thread_per_output) {
    const std::int64_t blocks = ceil_div(p.outputs, kThreads);
    chunks = std::max(ceil_div(target_blocks, blocks), ceil_div(p.terms, kMaxStagedTerms));
  } else {
    chunks = std::min(ceil_div(target_blocks, p.outputs),
                      ceil_div(p.terms, kThreads * kMinTermsPerThread));
  }
  chunks = std::max<std::int64_t>(1, std::min<std::int64_t>({chunks, p.terms, kMaxChunks}));
  plan.terms_per_chunk = ceil_div(p.terms, chunks);
  plan.chunks = int(ceil_div(p.terms, plan.terms_per_chunk));
  return plan;
}

std::size_t dot_parts_bytes(const DotProblem &p, const DotPlan &plan) {
  const std::size_t bytes = std::size_t(plan.chunks) * std::size_t(p.outputs) * sizeof(Dot2);
  return (bytes + 255) / 256 * 256;
}

double dot_plan_ops(const DotProblem &p, const DotPlan &plan) {
  // Products, the parts' in-block merges, and one merge per chunk (chained
  // or in the finishing block's tree).
  return double(p.terms) + double(plan.chunks) * (plan.thread_per_output ? 1.0 : kThreads + 1.0) +
         kThreads;
}

cudaError_t launch_dot2_parts(cudaStream_t stream, const DotProblem &p, const DotPlan &plan,
                              Dot2 *parts) {
  if (p.outputs <= 0 || p.terms <= 0) return cudaSuccess;
  if (plan.thread_per_output) {
    const dim3 grid(unsigned(ceil_div(p.outputs, kThreads)), unsigned(plan.chunks));
    dot2_thread_parts_kernel<<<grid, kThreads, 0, stream>>>(p, plan.terms_per_chunk, parts);
  } else {
    const dim3 grid(unsigned(p.outputs), unsigned(plan.chunks));
    dot2_block_parts_kernel<<<grid, kThreads, 0, stream>>>(p, plan.terms_per_chunk, parts);
  }
  return cudaGetLastError();
}

cudaError_t launch_dot2_finish(cudaStream_t stream, const DotProblem &p, const DotPlan &plan,
                               const Dot2 *parts, ScalarArg<double> alpha,
                               ScalarArg<double> beta, double *y, std::int64_t y_out) {
  if (p.outputs <= 0) return cudaSuccess;
  if (plan.chunks >= kBlockFinishChunks && p.outputs <= kBlockFinishOutputs)
    dot2_finish_block_kernel<<<unsigned(p.outputs), kThreads, 0, stream>>>(
        p, plan.chunks, dot_plan_ops(p, plan), parts, alpha, beta, y, y_out);
  else
    dot2_finish_kernel<<<unsigned(ceil_div(p.outputs, kThreads)), kThreads, 0, stream>>>(
        p, plan.chunks, dot_plan_ops(p, plan), parts, alpha, beta, y, y_out);
  return cudaGetLastError();
}

}  // namespace xn
