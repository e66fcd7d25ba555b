// cublas_entries.cpp - the cuBLAS symbols of the interposer (symbols.h's
// XN_CUBLAS_SYMBOLS): the GEMMs (cublasDgemm_v2, cublasSgemm_v2, and
// cublasGemmEx with FP64 operands and compute type), DGEMV, DDOT and the
// batched GEMMs go to the mode's device routine on the caller's handle,
// stream and pointer mode, or untouched to cuBLAS. cublasDestroy_v2 first
// frees the library's state of the handle.
#include <cublas_v2.h>

#include <cstdint>

#include "api/interposer_support.h"
#include "intercept/routing.h"
#include "xngemm.h"

#define XN_INTERCEPTED extern "C" __attribute__((visibility("default")))

namespace xn::intercept {

namespace {

NextDefinition g_next_get_pointer_mode{"cublasGetPointerMode_v2", false};

char op_char(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? 'N' : op == CUBLAS_OP_T ? 'T' : op == CUBLAS_OP_C ? 'C' : '?';
}
bool op_ok(cublasOperation_t op) { return op_char(op) != '?'; }
bool is_trans(cublasOperation_t op) { return op == CUBLAS_OP_T || op == CUBLAS_OP_C; }
bool ld_ok(long long ld, long long rows) { return ld >= (rows > 1 ? rows : 1); }

// cuBLAS's checks of a GEMM (column-major, op(A) m x k, op(B) k x n).
bool valid_gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, int lda,
                int ldb, int ldc) {
  return op_ok(ta) && op_ok(tb) && m >= 0 && n >= 0 && k >= 0 &&
         ld_ok(lda, is_trans(ta) ? k : m) && ld_ok(ldb, is_trans(tb) ? n : k) &&
         ld_ok(ldc, m);
}

// Whether alpha is known to be 0: only a host alpha can be read here; a
// device alpha of 0 is the library's quick return (it handles both modes).
template <class T>
bool host_alpha_zero(cublasHandle_t h, const T *alpha, const void *caller) {
  const auto get_pointer_mode =
      g_next_get_pointer_mode.for_program<decltype(&cublasGetPointerMode_v2)>(caller);
  cublasPointerMode_t mode;
  return get_pointer_mode(h, &mode) == CUBLAS_STATUS_SUCCESS &&
         mode == CUBLAS_POINTER_MODE_HOST && alpha && *alpha == T(0);
}

// The library's scan of device operands (api/interposer_support.h), on the
// call's handle: kRerouted with *flags set, or why it could not run. In
// ngemm mode the same read also gives the depth at which the product keeps
// its accuracy on these operands (*max_levels; else -1).
template <class T>
Outcome device_operand_flags(cublasHandle_t h, cublasOperation_t transa,
                             cublasOperation_t transb, int m, int n, int k, const T *A,
                             int lda, const T *B, int ldb, int *flags, int *max_levels) {
  const char precision = precision_index<T>() == 0 ? 'd' : 's';
  *max_levels = -1;
  cublasStatus_t s;
  if (config().mode->scan == Scan::NonNeg) {
    static const auto scan =
        routine<decltype(&xn_internal_operand_scan)>("xn_internal_operand_scan");
    if (!scan) return kNoLibrary;
    s = scan(h, precision, transa, transb, m, n, k, A, lda, B, ldb, flags, max_levels);
  } else {
    static const auto scan =
        routine<decltype(&xn_internal_operand_flags)>("xn_internal_operand_flags");
    if (!scan) return kNoLibrary;
    s = scan(h, precision, transa, transb, m, n, k, A, lda, B, ldb, flags);
  }
  return s == CUBLAS_STATUS_SUCCESS ? kRerouted : kCannotRun;
}

// Runs `call` with the handle's XN_OPT_MAX_LEVELS at most `levels` (>= 0;
// the option as it was afterwards): the depth ngemm mode's scan allows.
template <class Call>
cublasStatus_t with_max_levels(cublasHandle_t h, int levels, Call &&call) {
  static const auto get = routine<decltype(&xnGetOption)>("xnGetOption");
  static const auto set = routine<decltype(&xnSetOption)>("xnSetOption");
  std::int64_t was = 0;
  if (levels < 0 || !get || !set || get(h, XN_OPT_MAX_LEVELS, &was) != CUBLAS_STATUS_SUCCESS ||
      was <= levels)
    return call();
  set(h, XN_OPT_MAX_LEVELS, levels);
  const cublasStatus_t s = call();
  set(h, XN_OPT_MAX_LEVELS, was);
  return s;
}

// Statuses with which the library's routines return before writing their
// output (bad arguments, no memory, no support): the call can still go to
// cuBLAS.
bool leaves_output_untouched(cublasStatus_t s) {
  return s == CUBLAS_STATUS_NOT_INITIALIZED || s == CUBLAS_STATUS_ALLOC_FAILED ||
         s == CUBLAS_STATUS_INVALID_VALUE || s == CUBLAS_STATUS_ARCH_MISMATCH ||
         s == CUBLAS_STATUS_NOT_SUPPORTED;
}

// On kRerouted, the library's routine of the mode (`call(fn)`, typed F);
// its status unless it left the output untouched; otherwise, or then,
// `pass(o)` (cuBLAS with the original arguments). Counts what happened.
template <class F, class Call, class Pass>
cublasStatus_t dispatch_device(SymbolId id, Form form, int precision, Outcome o, Call &&call,
                               Pass &&pass) {
  F fn = nullptr;
  if (o == kRerouted && !(fn = reinterpret_cast<F>(mode_routine_address(form, precision))))
    o = kNoLibrary;
  if (o == kRerouted) {
    const cublasStatus_t s = call(fn);
    if (s == CUBLAS_STATUS_SUCCESS || !leaves_output_untouched(s)) {
      count(id, s == CUBLAS_STATUS_SUCCESS ? kRerouted : kDeviceError);
      return s;
    }
    o = kCannotRun;
  }
  count(id, o);
  return pass(o);
}

// ---------------------------------------------------------------- GEMM

template <class T>
using CublasGemm = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                      int, int, int, const T *, const T *, int, const T *,
                                      int, const T *, T *, int);

// A GEMM: route (the scanning modes read op(A) and op(B) on the device and
// synchronise the handle's stream once), then the library's routine on the
// same handle, or `pass(o)`.
template <class T, class Pass>
cublasStatus_t gemm_entry(SymbolId id, Form form, const void *caller, cublasHandle_t h,
                          cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                          int k, const T *alpha, const T *A, int lda, const T *B, int ldb,
                          const T *beta, T *C, int ldc, Pass &&pass) {
  int max_levels = -1;  // ngemm mode: the depth its scan allows
  const Outcome o =
      inside_library() ? kReentrant
      : h && valid_gemm(transa, transb, m, n, k, lda, ldb, ldc)
          ? route(form, precision_index<T>(), 2.0 * double(m) * n * k,
                  m == 0 || n == 0 || k == 0 || host_alpha_zero(h, alpha, caller),
                  [&](int *flags) {
                    return device_operand_flags<T>(h, transa, transb, m, n, k, A, lda, B, ldb,
                                                   flags, &max_levels);
                  })
          : kBadArguments;
  return dispatch_device<CublasGemm<T>>(
      id, form, precision_index<T>(), o,
      [&](CublasGemm<T> fn) {
        return with_max_levels(h, max_levels, [&] {
          return fn(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        });
      },
      pass);
}

// cublasGemm*Ex: FP64 operands and compute type (the pedantic and the
// emulated FP64 ones too: the caller asked for FP64).
bool fp64_ex(cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t compute) {
  return a == CUDA_R_64F && b == CUDA_R_64F && c == CUDA_R_64F &&
         (compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC ||
          compute == CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT);
}

// ---------------------------------------------------------------- batched GEMM

// cuBLAS's Ex routines (C++ overloads them with a cudaDataType compute
// type: the symbols take cublasComputeType_t).
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                    int, int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
    const void *, cudaDataType, int, long long int, const void *, cudaDataType, int,
    long long int, const void *, void *, cudaDataType, int, long long int, int,
    cublasComputeType_t, cublasGemmAlgo_t);
using GemmBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                           cublasOperation_t, int, int, int, const void *,
                                           const void *const[], cudaDataType, int,
                                           const void *const[], cudaDataType, int,
                                           const void *, void *const[], cudaDataType, int,
                                           int, cublasComputeType_t, cublasGemmAlgo_t);

using StridedBatched = decltype(&xnExdgemmStridedBatched);
using PointerBatched = decltype(&xnExdgemmBatched);

// Batched GEMMs (exdgemm mode only: no scan).
Outcome route_batched(Form form, const void *caller, cublasHandle_t h,
                      cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                      const double *alpha, int lda, int ldb, int ldc, int batch) {
  if (inside_library()) return kReentrant;
  if (!h || !valid_gemm(transa, transb, m, n, k, lda, ldb, ldc) || batch < 0)
    return kBadArguments;
  // The GEMM threshold applies to each product.
  return route(form, 0, 2.0 * double(m) * n * k,
               m == 0 || n == 0 || k == 0 || batch == 0 || host_alpha_zero(h, alpha, caller),
               [](int *flags) {
                 *flags = 0;
                 return kRerouted;
               });
}

}  // namespace

}  // namespace xn::intercept

using namespace xn::intercept;

XN_INTERCEPTED cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k,
                                             const double *alpha, const double *A, int lda,
                                             const double *B, int ldb, const double *beta,
                                             double *C, int ldc) {
  const void *caller = __builtin_return_address(0);
  return gemm_entry<double>(
      kSym_cublasDgemm_v2, Form::CublasGemm, caller, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
      beta, C, ldc, [&](Outcome o) {
        return next_for<decltype(&cublasDgemm_v2)>(kSym_cublasDgemm_v2, o, caller)(
            handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      });
}

XN_INTERCEPTED cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k,
                                             const float *alpha, const float *A, int lda,
                                             const float *B, int ldb, const float *beta,
                                             float *C, int ldc) {
  const void *caller = __builtin_return_address(0);
  return gemm_entry<float>(
      kSym_cublasSgemm_v2, Form::CublasGemm, caller, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
      beta, C, ldc, [&](Outcome o) {
        return next_for<decltype(&cublasSgemm_v2)>(kSym_cublasSgemm_v2, o, caller)(
            handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      });
}

XN_INTERCEPTED cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k,
                                           const void *alpha, const void *A,
                                           cudaDataType Atype, int lda, const void *B,
                                           cudaDataType Btype, int ldb, const void *beta,
                                           void *C, cudaDataType Ctype, int ldc,
                                           cublasComputeType_t computeType,
                                           cublasGemmAlgo_t algo) {
  const void *caller = __builtin_return_address(0);
  auto pass = [&](Outcome o) {
    return next_for<GemmExFn>(kSym_cublasGemmEx, o, caller)(
        handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,
        ldc, computeType, algo);
  };
  if (!fp64_ex(Atype, Btype, Ctype, computeType)) {
    const Outcome o = inside_library() ? kReentrant : kOtherTypes;
    count(kSym_cublasGemmEx, o);
    return pass(o);
  }
  return gemm_entry<double>(kSym_cublasGemmEx, Form::CublasGemmEx, caller, handle, transa, transb, m, n, k,
                            static_cast<const double *>(alpha), static_cast<const double *>(A),
                            lda, static_cast<const double *>(B), ldb,
                            static_cast<const double *>(beta), static_cast<double *>(C), ldc,
                            pass);
}

XN_INTERCEPTED cublasStatus_t cublasDgemv_v2(cublasHandle_t handle, cublasOperation_t trans,
                                             int m, int n, const double *alpha,
                                             const double *A, int lda, const double *x,
                                             int incx, const double *beta, double *y,
                                             int incy) {
  const void *caller = __builtin_return_address(0);
  const bool valid = handle && op_ok(trans) && m >= 0 && n >= 0 && ld_ok(lda, m) &&
                     incx != 0 && incy != 0;
  const Outcome o =
      inside_library() ? kReentrant
      : valid          ? route(Form::CublasGemv, 0, 2.0 * double(m) * n,
                    m == 0 || n == 0 || host_alpha_zero(handle, alpha, caller),
                    [](int *flags) {
                      *flags = 0;
                      return kRerouted;
                    })
            : kBadArguments;
  return dispatch_device<decltype(&xnExdgemv)>(
      kSym_cublasDgemv_v2, Form::CublasGemv, 0, o,
      [&](decltype(&xnExdgemv) fn) {
        return fn(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
      },
      [&](Outcome why) {
        return next_for<decltype(&cublasDgemv_v2)>(kSym_cublasDgemv_v2, why, caller)(
            handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
      });
}

XN_INTERCEPTED cublasStatus_t cublasDdot_v2(cublasHandle_t handle, int n, const double *x,
                                            int incx, const double *y, int incy,
                                            double *result) {
  const void *caller = __builtin_return_address(0);
  const Outcome o = inside_library()   ? kReentrant
                    : handle && result ? route(Form::CublasDot, 0, 2.0 * double(n), n <= 0,
                                             [](int *flags) {
                                               *flags = 0;
                                               return kRerouted;
                                             })
                                     : kBadArguments;
  return dispatch_device<decltype(&xnExddot)>(
      kSym_cublasDdot_v2, Form::CublasDot, 0, o,
      [&](decltype(&xnExddot) fn) { return fn(handle, n, x, incx, y, incy, result); },
      [&](Outcome why) {
        return next_for<decltype(&cublasDdot_v2)>(kSym_cublasDdot_v2, why, caller)(
            handle, n, x, incx, y, incy, result);
      });
}

XN_INTERCEPTED cublasStatus_t cublasDgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
    int k, const double *alpha, const double *A, int lda, long long int strideA,
    const double *B, int ldb, long long int strideB, const double *beta, double *C, int ldc,
    long long int strideC, int batchCount) {
  const void *caller = __builtin_return_address(0);
  const Outcome o = route_batched(Form::CublasGemmStridedBatched, caller, handle, transa,
                                  transb, m, n, k, alpha, lda, ldb, ldc, batchCount);
  return dispatch_device<StridedBatched>(
      kSym_cublasDgemmStridedBatched, Form::CublasGemmStridedBatched, 0, o,
      [&](StridedBatched fn) {
        return fn(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                  beta, C, ldc, strideC, batchCount);
      },
      [&](Outcome why) {
        return next_for<decltype(&cublasDgemmStridedBatched)>(kSym_cublasDgemmStridedBatched,
                                                              why, caller)(
            handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
            ldc, strideC, batchCount);
      });
}

XN_INTERCEPTED cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
    int k, const void *alpha, const void *A, cudaDataType Atype, int lda,
    long long int strideA, const void *B, cudaDataType Btype, int ldb, long long int strideB,
    const void *beta, void *C, cudaDataType Ctype, int ldc, long long int strideC,
    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const void *caller = __builtin_return_address(0);
  const bool fp64 = fp64_ex(Atype, Btype, Ctype, computeType);
  const Outcome o =
      !fp64 ? (inside_library() ? kReentrant : kOtherTypes)
            : route_batched(Form::CublasGemmStridedBatched, caller, handle, transa, transb, m,
                            n, k, static_cast<const double *>(alpha), lda, ldb, ldc,
                            batchCount);
  return dispatch_device<StridedBatched>(
      kSym_cublasGemmStridedBatchedEx, Form::CublasGemmStridedBatched, 0, o,
      [&](StridedBatched fn) {
        return fn(handle, transa, transb, m, n, k, static_cast<const double *>(alpha),
                  static_cast<const double *>(A), lda, strideA, static_cast<const double *>(B),
                  ldb, strideB, static_cast<const double *>(beta), static_cast<double *>(C),
                  ldc, strideC, batchCount);
      },
      [&](Outcome why) {
        return next_for<GemmStridedBatchedExFn>(
            kSym_cublasGemmStridedBatchedEx, why, caller)(
            handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
            strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
      });
}

XN_INTERCEPTED cublasStatus_t cublasDgemmBatched(cublasHandle_t handle,
                                                 cublasOperation_t transa,
                                                 cublasOperation_t transb, int m, int n, int k,
                                                 const double *alpha,
                                                 const double *const Aarray[], int lda,
                                                 const double *const Barray[], int ldb,
                                                 const double *beta, double *const Carray[],
                                                 int ldc, int batchCount) {
  const void *caller = __builtin_return_address(0);
  const Outcome o = route_batched(Form::CublasGemmBatched, caller, handle, transa, transb, m,
                                  n, k, alpha, lda, ldb, ldc, batchCount);
  return dispatch_device<PointerBatched>(
      kSym_cublasDgemmBatched, Form::CublasGemmBatched, 0, o,
      [&](PointerBatched fn) {
        return fn(handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta,
                  Carray, ldc, batchCount);
      },
      [&](Outcome why) {
        return next_for<decltype(&cublasDgemmBatched)>(kSym_cublasDgemmBatched, why, caller)(
            handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray,
            ldc, batchCount);
      });
}

XN_INTERCEPTED cublasStatus_t cublasGemmBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
    int k, const void *alpha, const void *const Aarray[], cudaDataType Atype, int lda,
    const void *const Barray[], cudaDataType Btype, int ldb, const void *beta,
    void *const Carray[], cudaDataType Ctype, int ldc, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const void *caller = __builtin_return_address(0);
  const bool fp64 = fp64_ex(Atype, Btype, Ctype, computeType);
  const Outcome o =
      !fp64 ? (inside_library() ? kReentrant : kOtherTypes)
            : route_batched(Form::CublasGemmBatched, caller, handle, transa, transb, m, n, k,
                            static_cast<const double *>(alpha), lda, ldb, ldc, batchCount);
  return dispatch_device<PointerBatched>(
      kSym_cublasGemmBatchedEx, Form::CublasGemmBatched, 0, o,
      [&](PointerBatched fn) {
        return fn(handle, transa, transb, m, n, k, static_cast<const double *>(alpha),
                  reinterpret_cast<const double *const *>(Aarray), lda,
                  reinterpret_cast<const double *const *>(Barray), ldb,
                  static_cast<const double *>(beta), reinterpret_cast<double *const *>(Carray),
                  ldc, batchCount);
      },
      [&](Outcome why) {
        return next_for<GemmBatchedExFn>(kSym_cublasGemmBatchedEx, why, caller)(
            handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb,
            beta, Carray, Ctype, ldc, batchCount, computeType, algo);
      });
}

namespace {
// Frees the library's state of a handle about to be destroyed (its
// workspace, events, cuBLASLt plans): the library's if loaded here, else a
// libxngemm the program links; nothing if neither.
void release_library_state(cublasHandle_t h) {
  if (!h || inside_library()) return;  // the library releases its own
  void *lib = loaded_library();
  using Release = cublasStatus_t (*)(cublasHandle_t);
  if (auto release = reinterpret_cast<Release>(dlsym(lib ? lib : RTLD_DEFAULT, "xnRelease")))
    release(h);
}
}  // namespace

XN_INTERCEPTED cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  const bool own = inside_library();
  release_library_state(handle);
  NextDefinition &next = symbol(kSym_cublasDestroy_v2).next;
  using Destroy = decltype(&cublasDestroy_v2);
  return (own ? next.for_library<Destroy>()
              : next.for_program<Destroy>(__builtin_return_address(0)))(handle);
}
