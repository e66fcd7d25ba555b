// native_dgemm.h - DGEMM on cuBLASLt, pinned to native IEEE double arithmetic
// and run at cuBLAS's full DGEMM rate: exdgemm's slice products.
//
// The slice products must be computed in native FP64 (then they are exact,
// docs/design.md "Why the slice products are exact"), never by cuBLAS's FP64
// emulation, which a user can switch on through the handle's math mode, the
// emulation strategy or CUBLAS_EMULATE_DOUBLE_PRECISION. cublasGemmEx with
// CUBLAS_COMPUTE_64F_PEDANTIC guarantees that, but on the H200 (cuBLAS 13.0)
// it runs another kernel family (cuBLASLt algorithm 36 instead of DGEMM's 35)
// that is 20-30 % slower at every size measured (8192^3: 22.5 ms against
// 17.0; docs/performance.md, exdgemm run 4). So we ask cuBLASLt for
// CUBLAS_COMPUTE_64F algorithms and accept one only if its capabilities say
// IEEE double: DMMA tensor-core or FMA instructions, 64-bit inputs, a 64-bit
// accumulator and no floating-point emulation support. With no such algorithm
// (or no usable cuBLASLt), the caller falls back to the pedantic GemmEx.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/view.h"

namespace xn {

// True when a cuBLASLt algorithm with these CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS
// and CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT computes in IEEE
// double arithmetic: DMMA or FMA, FP64 inputs and accumulator, no emulation.
inline bool is_native_fp64_algo(std::uint64_t impl_flags, int emulation_support) {
  const std::uint64_t op = impl_flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_OP_TYPE_MASK;
  const std::uint64_t acc =
      impl_flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_TYPE_MASK;
  const std::uint64_t in = impl_flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_OP_INPUT_TYPE_MASK;
  const bool op_native =
      op == CUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA || op == CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA;
  return emulation_support == 0 && op_native &&
         acc == CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_64F &&
         in == CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_64F;
}

// Largest power of two (at most 256) dividing both the address and the
// leading dimension in bytes: the alignment cuBLASLt may assume.
inline std::uint32_t lt_alignment(const void *p, index_t ld) {
  const std::uint64_t bits = std::uint64_t(reinterpret_cast<std::uintptr_t>(p)) |
                             std::uint64_t(ld) * sizeof(double) | 256u;
  return std::uint32_t(bits & (~bits + 1));
}

// One per handle state (calls on a handle are serialised by its mutex).
// Plans (descriptors and the chosen algorithm) are cached per shape,
// transposes, leading dimensions and alignments, so a call after the first
// of its shape makes no heuristic query and no allocation.
class NativeDgemm {
 public:
  enum class Result { Ran, NoNativeAlgorithm, Failed };

  NativeDgemm() = default;
  ~NativeDgemm();
  NativeDgemm(const NativeDgemm &) = delete;
  NativeDgemm &operator=(const NativeDgemm &) = delete;

  // C = op(A) op(B) on `stream` (alpha 1 and beta 0 as host scalars, no
  // workspace). NoNativeAlgorithm: nothing was launched (caller falls back).
  Result run(cudaStream_t stream, bool trans_a, bool trans_b, index_t m, index_t n,
             index_t k, const double *A, index_t lda, const double *B, index_t ldb,
             double *C, index_t ldc);

 private:
  struct Plan {
    bool trans_a, trans_b;
    index_t m, n, k, lda, ldb, ldc;
    std::uint32_t align_a, align_b, align_c;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool native = false;
  };
  static void destroy(Plan &p);
  bool make_plan(Plan &p);

  cublasLtHandle_t lt_ = nullptr;
  bool lt_unusable_ = false;
  std::vector<Plan> plans_;
  std::size_t next_victim_ = 0;
};

namespace testing {
// Test hooks: force the pedantic fallback; count the slice DGEMMs that ran
// on a native cuBLASLt algorithm and on the fallback since the last reset.
void set_native_dgemm_disabled(bool disabled);
bool native_dgemm_disabled();
void count_native_dgemm(bool native);
void native_dgemm_counts(std::uint64_t *native, std::uint64_t *fallback);
void reset_native_dgemm_counts();
}  // namespace testing

}  // namespace xn
