// types.h - the core's own vocabulary: result status, operation and triangle.
//
// src/core includes no CUDA or cuBLAS header. src/api/ translates cuBLAS and
// BLAS arguments into these types and the core's results back (to_cublas,
// XERBLA positions), so the algorithms can be built and tested without CUDA.
#pragma once

#include <cstdint>

namespace xn {

using index_t = std::int64_t;

// x rounded up to a multiple of a (a > 0).
inline index_t round_up(index_t x, index_t a) { return (x + a - 1) / a * a; }

enum class Status {
  Ok = 0,
  InvalidValue,     // bad argument (never reaches the core from the API)
  AllocFailed,      // workspace or staging memory could not be had
  ExecutionFailed,  // a kernel launch or a leaf GEMM failed
  NotSupported,     // not possible in this context (a CUDA graph capture that
                    // would need memory or a host decision): nothing was done
  Internal          // anything else (unexpected library error)
};

// op(X): X or its transpose (real data: conjugate-transpose is the transpose).
enum class Op : unsigned char { N, T };
inline bool is_trans(Op op) { return op == Op::T; }

// The stored triangle of a symmetric matrix.
enum class Fill : unsigned char { Lower, Upper };

// The recursive GEMMs: xn?ngemm (Winograd for non-negative inputs, Badin et
// al.), xn?gemmStrassen and xn?gemmWinograd (Li, Ranka, Sahni). Each has its
// own depth and crossover options (a row each of kGemmKindFields, options.h;
// Winograd stays the last kind, which that table's check counts to).
enum class GemmKind : unsigned char { NonNegWinograd, Strassen, Winograd };

}  // namespace xn
