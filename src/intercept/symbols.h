// symbols.h - every symbol the interposer defines, as table data
// (docs/design.md, "Interposer" and "Adding a routine family").
//
// A symbol is a routine family in one argument list (its Form) under one
// BLAS build's name and integer width. The forms' argument orders are
// written once (host_entries.cpp, cublas_entries.cpp); the names are made
// here from the builds' naming rules:
//
//   build                          Fortran           CBLAS                 integers
//   reference BLAS, OpenBLAS, MKL  dgemm_            cblas_dgemm           32-bit
//   ILP64 with the 64_ suffix      dgemm_64_         cblas_dgemm64_        64-bit
//     (OpenBLAS INTERFACE64 + SYMBOLSUFFIX=64_; the names Julia's
//     libblastrampoline exports, though Julia itself reaches them by dlsym
//     on its handle, which no preloaded library intercepts)
//   scipy-openblas32 (SciPy wheels) scipy_dgemm_     scipy_cblas_dgemm     32-bit
//   scipy-openblas64 (NumPy wheels) scipy_dgemm_64_  scipy_cblas_dgemm64_  64-bit
//
// XN_BLAS_BUILDS(X, ...) calls X(..., prefix, Fortran suffix, CBLAS suffix,
// integer type) once per build; XN_HOST_ROUTINES(X, build...) calls
// X(name, Form, scalar type, integer type) once per host routine of a
// build. XN_CUBLAS_SYMBOLS(X) lists the cuBLAS symbols, X(name, Form).
// (The exports.map patterns must match every name made here.)
#pragma once

#include <cstdint>

namespace xn::intercept {

// The argument lists. A routine of the library stands beside each (by mode:
// routing.cpp's kModes), with the same list in its 32-bit form.
enum class Form : int {
  FortranGemm,  // ?gemm_(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
  CblasGemm,    // cblas_?gemm(layout, transa, transb, m, n, k, alpha, A, lda, ...)
  FortranGemv,  // dgemv_(trans, m, n, alpha, A, lda, x, incx, beta, y, incy)
  CblasGemv,    // cblas_dgemv(layout, trans, m, n, alpha, A, lda, x, incx, ...)
  FortranDot,   // ddot_(n, x, incx, y, incy), a function returning double
  CblasDot,     // cblas_ddot(n, x, incx, y, incy)
  CublasGemm,   // cublas?gemm_v2
  CublasGemmEx,  // cublasGemmEx with FP64 operands (exdgemm mode only)
  CublasGemv,   // cublasDgemv_v2
  CublasDot,    // cublasDdot_v2
  CublasGemmStridedBatched,  // cublasDgemmStridedBatched (and ...Ex, FP64)
  CublasGemmBatched,         // cublasDgemmBatched (and ...Ex, FP64)
  CublasDestroy,             // cublasDestroy_v2: frees the library's state
  kForms
};

using lp64 = int;
using ilp64 = std::int64_t;

#define XN_BLAS_BUILDS(X, ...)                   \
  X(__VA_ARGS__, , _, , lp64)                    \
  X(__VA_ARGS__, , _64_, 64_, ilp64)             \
  X(__VA_ARGS__, scipy_, _, , lp64)              \
  X(__VA_ARGS__, scipy_, _64_, 64_, ilp64)

#define XN_HOST_ROUTINES(X, prefix, fsuf, csuf, Int)           \
  X(prefix##dgemm##fsuf, FortranGemm, double, Int)             \
  X(prefix##sgemm##fsuf, FortranGemm, float, Int)              \
  X(prefix##cblas_dgemm##csuf, CblasGemm, double, Int)         \
  X(prefix##cblas_sgemm##csuf, CblasGemm, float, Int)          \
  X(prefix##dgemv##fsuf, FortranGemv, double, Int)             \
  X(prefix##cblas_dgemv##csuf, CblasGemv, double, Int)         \
  X(prefix##ddot##fsuf, FortranDot, double, Int)               \
  X(prefix##cblas_ddot##csuf, CblasDot, double, Int)

// Every host symbol: X(name, Form, scalar type, integer type).
#define XN_HOST_SYMBOLS(X) XN_BLAS_BUILDS(XN_HOST_ROUTINES, X)

// Every cuBLAS symbol: X(name, Form). (cuBLAS 13 has no un-suffixed
// cublasDgemm: the _v2 names are the symbols.)
#define XN_CUBLAS_SYMBOLS(X)                              \
  X(cublasDgemm_v2, CublasGemm)                           \
  X(cublasSgemm_v2, CublasGemm)                           \
  X(cublasGemmEx, CublasGemmEx)                           \
  X(cublasDgemv_v2, CublasGemv)                           \
  X(cublasDdot_v2, CublasDot)                             \
  X(cublasDgemmStridedBatched, CublasGemmStridedBatched)  \
  X(cublasGemmStridedBatchedEx, CublasGemmStridedBatched) \
  X(cublasDgemmBatched, CublasGemmBatched)                \
  X(cublasGemmBatchedEx, CublasGemmBatched)               \
  X(cublasDestroy_v2, CublasDestroy)

// The symbols' indices (kSym_dgemm_, kSym_scipy_cblas_ddot64_, ...).
#define XN_SYMBOL_ID(name, ...) kSym_##name,
enum SymbolId : int {
  XN_HOST_SYMBOLS(XN_SYMBOL_ID) XN_CUBLAS_SYMBOLS(XN_SYMBOL_ID) kSymbols
};
#undef XN_SYMBOL_ID

}  // namespace xn::intercept
