// types.h - the core's own vocabulary: result status, operation and triangle.
//
// src/core includes no CUDA or cuBLAS header. src/api/ translates cuBLAS and
// BLAS arguments into these types and the core's results back (to_cublas,
// XERBLA positions), so the algorithms can be built and tested without CUDA.
#pragma once

#include <cstdint>

namespace xn {

using index_t = std::int64_t;

enum class Status {
  Ok = 0,
  InvalidValue,     // bad argument (never reaches the core from the API)
  AllocFailed,      // workspace or staging memory could not be had
  ExecutionFailed,  // a kernel launch or a leaf GEMM failed
  Internal          // anything else (unexpected library error)
};

// op(X): X or its transpose (real data: conjugate-transpose is the transpose).
enum class Op : unsigned char { N, T };
inline bool is_trans(Op op) { return op == Op::T; }

// The stored triangle of a symmetric matrix.
enum class Fill : unsigned char { Lower, Upper };

}  // namespace xn
