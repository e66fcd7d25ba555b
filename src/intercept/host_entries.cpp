// host_entries.cpp - the host BLAS symbols of the interposer (symbols.h's
// XN_HOST_SYMBOLS): ?GEMM, DGEMV and DDOT in their Fortran and CBLAS forms,
// each written once over its integer type and defined under every build's
// names. A call is checked as the BLAS checks it (bad arguments are the
// BLAS's to report), routed (routing.h), and goes to the library's 32-bit
// host routine of the mode or, untouched, to the definition the caller
// reaches without the interposer.
#include <cstdint>

#include "core/blas_conventions.h"
#include "intercept/routing.h"

// Only what the interposer intercepts is exported (exports.map).
#define XN_INTERCEPTED extern "C" __attribute__((visibility("default")))

namespace xn::intercept {

namespace {

using i64 = std::int64_t;

using blas::upper;
// (TRANS characters already in upper case.)
bool is_trans(char c) { return blas::transposes(c); }
bool op_ok(char t) { return blas::valid_trans(t); }
bool ld_ok(i64 ld, i64 rows) { return ld >= (rows > 1 ? rows : 1); }

// BLAS's checks of ?GEMM (column-major, op(A) m x k, op(B) k x n).
bool valid_gemm(char ta, char tb, i64 m, i64 n, i64 k, i64 lda, i64 ldb, i64 ldc) {
  return op_ok(ta) && op_ok(tb) && m >= 0 && n >= 0 && k >= 0 &&
         ld_ok(lda, is_trans(ta) ? k : m) && ld_ok(ldb, is_trans(tb) ? n : k) && ld_ok(ldc, m);
}

// BLAS's checks of DGEMV (A m x n column-major).
bool valid_gemv(char t, i64 m, i64 n, i64 lda, i64 incx, i64 incy) {
  return op_ok(t) && m >= 0 && n >= 0 && ld_ok(lda, m) && incx != 0 && incy != 0;
}

// The OR of the EntryFlags (numerics/elementwise.h, the classification the
// library's device scan applies) of a rows x cols operand in host memory;
// stops at the first NaN or Inf, which decides every scanning mode.
template <class T>
int host_operand_flags(const T *p, i64 rows, i64 cols, i64 ld) {
  int flags = 0;
  for (i64 j = 0; j < cols; ++j)
    for (i64 i = 0; i < rows; ++i) {
      flags |= ew_entry_flags(p[i + j * ld]);
      if (flags & kEntryNonFinite) return flags;
    }
  return flags;
}

// route() for a valid column-major GEMM with its operands in host memory;
// kTooLarge past the library's 32-bit integers.
template <class T>
Outcome route_gemm(Form form, char ta, char tb, i64 m, i64 n, i64 k, T alpha, const T *A,
                   i64 lda, const T *B, i64 ldb, i64 ldc) {
  const Outcome o = route(
      form, precision_index<T>(), 2.0 * double(m) * double(n) * double(k),
      m == 0 || n == 0 || k == 0 || alpha == T(0), [&](int *flags) {
        *flags = host_operand_flags(A, is_trans(ta) ? k : m, is_trans(ta) ? m : k, lda);
        if (!(*flags & kEntryNonFinite))
          *flags |= host_operand_flags(B, is_trans(tb) ? n : k, is_trans(tb) ? k : n, ldb);
        return kRerouted;
      });
  return o == kRerouted && !fits_int(m, n, k, lda, ldb, ldc) ? kTooLarge : o;
}

// route() for the vector routines (no scanning mode has them).
Outcome route_vector(Form form, double flops, bool quick, bool fits) {
  const Outcome o = route(form, 0, flops, quick, [](int *flags) {
    *flags = 0;
    return kRerouted;
  });
  return o == kRerouted && !fits ? kTooLarge : o;
}

// The library's routine of the mode for `form`, or kNoLibrary.
template <class F>
Outcome library_routine_for(Form form, int precision, Outcome o, F *fn) {
  if (o != kRerouted) return o;
  *fn = reinterpret_cast<F>(mode_routine_address(form, precision));
  return *fn ? o : kNoLibrary;
}

// ---------------------------------------------------------------- GEMM

template <class T, class Int>
using FortranGemm = void (*)(const char *, const char *, const Int *, const Int *,
                             const Int *, const T *, const T *, const Int *, const T *,
                             const Int *, const T *, T *, const Int *);
template <class T, class Int>
using CblasGemm = void (*)(int, int, int, Int, Int, Int, T, const T *, Int, const T *, Int,
                           T, T *, Int);

template <class T, class Int>
void fortran_gemm(SymbolId id, const void *caller, const char *transa, const char *transb,
                  const Int *m, const Int *n, const Int *k, const T *alpha, const T *A,
                  const Int *lda, const T *B, const Int *ldb, const T *beta, T *C,
                  const Int *ldc) {
  const char ta = upper(*transa), tb = upper(*transb);
  Outcome o = valid_gemm(ta, tb, *m, *n, *k, *lda, *ldb, *ldc)
                  ? route_gemm<T>(Form::FortranGemm, ta, tb, *m, *n, *k, *alpha, A, *lda, B,
                                  *ldb, *ldc)
                  : kBadArguments;
  FortranGemm<T, int> fn = nullptr;
  o = library_routine_for(Form::FortranGemm, precision_index<T>(), o, &fn);
  const int m32 = int(*m), n32 = int(*n), k32 = int(*k), lda32 = int(*lda), ldb32 = int(*ldb),
            ldc32 = int(*ldc);
  dispatch_host<FortranGemm<T, Int>>(
      id, o, caller,
      [&] { fn(transa, transb, &m32, &n32, &k32, alpha, A, &lda32, B, &ldb32, beta, C, &ldc32); },
      [&](FortranGemm<T, Int> next) {
        next(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      });
}

// CBLAS arguments as the column-major call they describe: RowMajor C =
// op(A) op(B) is column-major C^T = op(B)^T op(A)^T. False for arguments
// CBLAS rejects (left to the BLAS).
using blas::kColMajor;
using blas::kRowMajor;
constexpr char cblas_op(int t) { return blas::trans_char(t); }

template <class T, class Int>
void cblas_gemm(SymbolId id, const void *caller, int layout, int transa, int transb, Int m,
                Int n, Int k, T alpha, const T *A, Int lda, const T *B, Int ldb, T beta, T *C,
                Int ldc) {
  const bool swap = layout == kRowMajor;
  const char ta = cblas_op(swap ? transb : transa), tb = cblas_op(swap ? transa : transb);
  const i64 cm = swap ? n : m, cn = swap ? m : n;
  const T *X = swap ? B : A, *Y = swap ? A : B;
  const i64 ldx = swap ? ldb : lda, ldy = swap ? lda : ldb;
  Outcome o = (layout == kRowMajor || layout == kColMajor) &&
                      valid_gemm(ta, tb, cm, cn, k, ldx, ldy, ldc)
                  ? route_gemm<T>(Form::CblasGemm, ta, tb, cm, cn, k, alpha, X, ldx, Y, ldy, ldc)
                  : kBadArguments;
  CblasGemm<T, int> fn = nullptr;
  o = library_routine_for(Form::CblasGemm, precision_index<T>(), o, &fn);
  dispatch_host<CblasGemm<T, Int>>(
      id, o, caller,
      [&] {
        fn(layout, transa, transb, int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb),
           beta, C, int(ldc));
      },
      [&](CblasGemm<T, Int> next) {
        next(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      });
}

// ---------------------------------------------------------------- GEMV

template <class Int>
using FortranGemv = void (*)(const char *, const Int *, const Int *, const double *,
                             const double *, const Int *, const double *, const Int *,
                             const double *, double *, const Int *);
template <class Int>
using CblasGemv = void (*)(int, int, Int, Int, double, const double *, Int, const double *,
                           Int, double, double *, Int);

// BLAS's quick return (m = 0 or n = 0; alpha = 0 leaves y = beta y to the
// BLAS, one rounding either way, A and x unread).
Outcome route_gemv(Form form, i64 m, i64 n, double alpha, i64 lda, i64 incx, i64 incy) {
  return route_vector(form, 2.0 * double(m) * double(n), m == 0 || n == 0 || alpha == 0.0,
                      fits_int(m, n, lda, incx, incy));
}

template <class Int>
void fortran_gemv(SymbolId id, const void *caller, const char *trans, const Int *m,
                  const Int *n, const double *alpha, const double *A, const Int *lda,
                  const double *x, const Int *incx, const double *beta, double *y,
                  const Int *incy) {
  Outcome o = valid_gemv(upper(*trans), *m, *n, *lda, *incx, *incy)
                  ? route_gemv(Form::FortranGemv, *m, *n, *alpha, *lda, *incx, *incy)
                  : kBadArguments;
  FortranGemv<int> fn = nullptr;
  o = library_routine_for(Form::FortranGemv, 0, o, &fn);
  const int m32 = int(*m), n32 = int(*n), lda32 = int(*lda), incx32 = int(*incx),
            incy32 = int(*incy);
  dispatch_host<FortranGemv<Int>>(
      id, o, caller,
      [&] { fn(trans, &m32, &n32, alpha, A, &lda32, x, &incx32, beta, y, &incy32); },
      [&](FortranGemv<Int> next) { next(trans, m, n, alpha, A, lda, x, incx, beta, y, incy); });
}

template <class Int>
void cblas_gemv(SymbolId id, const void *caller, int layout, int trans, Int m, Int n,
                double alpha, const double *A, Int lda, const double *x, Int incx,
                double beta, double *y, Int incy) {
  // Row-major A (m x n) is column-major A^T (n x m).
  const bool row = layout == kRowMajor;
  Outcome o = (row || layout == kColMajor) &&
                      valid_gemv(cblas_op(trans), row ? n : m, row ? m : n, lda, incx, incy)
                  ? route_gemv(Form::CblasGemv, m, n, alpha, lda, incx, incy)
                  : kBadArguments;
  CblasGemv<int> fn = nullptr;
  o = library_routine_for(Form::CblasGemv, 0, o, &fn);
  dispatch_host<CblasGemv<Int>>(
      id, o, caller,
      [&] {
        fn(layout, trans, int(m), int(n), alpha, A, int(lda), x, int(incx), beta, y, int(incy));
      },
      [&](CblasGemv<Int> next) {
        next(layout, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
      });
}

// ---------------------------------------------------------------- DOT

template <class Int>
using FortranDot = double (*)(const Int *, const double *, const Int *, const double *,
                              const Int *);
template <class Int>
using CblasDot = double (*)(Int, const double *, Int, const double *, Int);

// DDOT has no bad arguments; n <= 0 is its quick return (0).
Outcome route_dot(Form form, i64 n, i64 incx, i64 incy) {
  return route_vector(form, 2.0 * double(n), n <= 0, fits_int(n, incx, incy));
}

template <class Int>
double fortran_dot(SymbolId id, const void *caller, const Int *n, const double *x,
                   const Int *incx, const double *y, const Int *incy) {
  FortranDot<int> fn = nullptr;
  const Outcome o = library_routine_for(Form::FortranDot, 0,
                                        route_dot(Form::FortranDot, *n, *incx, *incy), &fn);
  const int n32 = int(*n), incx32 = int(*incx), incy32 = int(*incy);
  return dispatch_host<FortranDot<Int>>(
      id, o, caller, [&] { return fn(&n32, x, &incx32, y, &incy32); },
      [&](FortranDot<Int> next) { return next(n, x, incx, y, incy); });
}

template <class Int>
double cblas_dot(SymbolId id, const void *caller, Int n, const double *x, Int incx,
                 const double *y, Int incy) {
  CblasDot<int> fn = nullptr;
  const Outcome o =
      library_routine_for(Form::CblasDot, 0, route_dot(Form::CblasDot, n, incx, incy), &fn);
  return dispatch_host<CblasDot<Int>>(
      id, o, caller, [&] { return fn(int(n), x, int(incx), y, int(incy)); },
      [&](CblasDot<Int> next) { return next(n, x, incx, y, incy); });
}

}  // namespace

}  // namespace xn::intercept

// ---------------------------------------------------------------- the symbols

using namespace xn::intercept;

// One definition per row of XN_HOST_SYMBOLS, by its form's argument list.
#define XN_DEFINE_FortranGemm(name, T, Int)                                                  \
  XN_INTERCEPTED void name(const char *transa, const char *transb, const Int *m,             \
                           const Int *n, const Int *k, const T *alpha, const T *A,           \
                           const Int *lda, const T *B, const Int *ldb, const T *beta, T *C,  \
                           const Int *ldc) {                                                 \
    fortran_gemm<T, Int>(kSym_##name, __builtin_return_address(0), transa, transb, m, n, k,  \
                         alpha, A, lda, B, ldb, beta, C, ldc);                               \
  }
#define XN_DEFINE_CblasGemm(name, T, Int)                                                    \
  XN_INTERCEPTED void name(int layout, int transa, int transb, Int m, Int n, Int k, T alpha, \
                           const T *A, Int lda, const T *B, Int ldb, T beta, T *C, Int ldc) { \
    cblas_gemm<T, Int>(kSym_##name, __builtin_return_address(0), layout, transa, transb, m,  \
                       n, k, alpha, A, lda, B, ldb, beta, C, ldc);                           \
  }
#define XN_DEFINE_FortranGemv(name, T, Int)                                                 \
  XN_INTERCEPTED void name(const char *trans, const Int *m, const Int *n, const T *alpha,   \
                           const T *A, const Int *lda, const T *x, const Int *incx,         \
                           const T *beta, T *y, const Int *incy) {                          \
    fortran_gemv<Int>(kSym_##name, __builtin_return_address(0), trans, m, n, alpha, A, lda, \
                      x, incx, beta, y, incy);                                              \
  }
#define XN_DEFINE_CblasGemv(name, T, Int)                                                 \
  XN_INTERCEPTED void name(int layout, int trans, Int m, Int n, T alpha, const T *A,      \
                           Int lda, const T *x, Int incx, T beta, T *y, Int incy) {       \
    cblas_gemv<Int>(kSym_##name, __builtin_return_address(0), layout, trans, m, n, alpha, \
                    A, lda, x, incx, beta, y, incy);                                      \
  }
#define XN_DEFINE_FortranDot(name, T, Int)                                                \
  XN_INTERCEPTED T name(const Int *n, const T *x, const Int *incx, const T *y,            \
                        const Int *incy) {                                                \
    return fortran_dot<Int>(kSym_##name, __builtin_return_address(0), n, x, incx, y, incy); \
  }
#define XN_DEFINE_CblasDot(name, T, Int)                                                \
  XN_INTERCEPTED T name(Int n, const T *x, Int incx, const T *y, Int incy) {            \
    return cblas_dot<Int>(kSym_##name, __builtin_return_address(0), n, x, incx, y, incy); \
  }
#define XN_DEFINE_HOST_SYMBOL(name, form, T, Int) XN_DEFINE_##form(name, T, Int)

XN_HOST_SYMBOLS(XN_DEFINE_HOST_SYMBOL)
