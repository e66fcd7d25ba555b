// intercept.cpp - libxngemm_intercept.so: the GEMMs of an unchanged program,
// rerouted to xNGEMM by environment, loaded with LD_PRELOAD. The host BLAS
// ones (dgemm_, sgemm_, cblas_dgemm, cblas_sgemm) go to the host entry
// points; cuBLAS's (cublasDgemm_v2, cublasSgemm_v2: cuBLAS 13 has no separate
// un-suffixed symbols) go to the device routines on the caller's handle,
// stream and pointer mode.
//
//   XN_INTERCEPT           off (default) | exdgemm | ngemm | strassen | winograd
//   XN_INTERCEPT_MIN_FLOPS calls with 2 m n k below this pass through (default 0)
//   XN_INTERCEPT_LOG       1: at exit, print to stderr how many calls were
//                          rerouted and passed through, and why
//
// A call that is not rerouted goes to the real routine, the next definition
// of the symbol after this library (dlsym(RTLD_NEXT)), with its arguments
// untouched: the result is the one the program gets without the interposer,
// bad arguments included (they are never rerouted, so the BLAS reports them
// as it always does). libxngemm is loaded only at the first rerouted call,
// privately (RTLD_LOCAL): a process that reroutes nothing pays nothing, and
// the library's own BLAS never becomes the program's. The library's BLAS
// calls (its CPU leaves) come back here while a host entry point runs; the
// library's per-thread count of them (api/host_depth.h) sends them straight
// through, also when the program calls xNGEMM directly. A call the library
// cannot run (C left untouched: a cuBLAS status says so, for a BLAS call the
// library's per-thread flag) goes to the real routine; cublasDestroy_v2
// first frees the library's state of the handle.
// docs/design.md, "Interposer".
#include <cublas_v2.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api/interposer_support.h"
#include "numerics/elementwise.h"

#ifndef XN_LIBRARY_SONAME
#define XN_LIBRARY_SONAME "libxngemm.so.0"
#endif

namespace {

// Why a call went where it went: one counter each.
enum Outcome {
  kRerouted,
  kOff,           // XN_INTERCEPT off or unknown
  kSmall,         // 2 m n k below XN_INTERCEPT_MIN_FLOPS
  kNegative,      // ngemm: an operand has a negative entry
  kNonFinite,     // a recursive mode: NaN or Inf would spread further than in BLAS
  kNoRoutine,     // the mode has no routine for the precision (single, exdgemm)
  kBadArguments,  // left to the BLAS to report
  kReentrant,     // the library's own BLAS call during a rerouted one
  kQuickReturn,   // alpha = 0, k = 0 or an empty C: A and B are not read
  kNoLibrary,     // libxngemm could not be loaded
  kCannotRun,     // the library's scan or routine could not run the call and
                  // left C untouched (no memory, ...)
  kDeviceError,   // cuBLAS: the library's routine failed after it may have
                  // written C: its status is returned, cuBLAS not called
                  // (reasons hold no comma: the exit log is comma-separated)
  kOutcomes
};
constexpr const char *kOutcomeNames[kOutcomes] = {
    "rerouted",
    "passed through: XN_INTERCEPT off",
    "passed through: below XN_INTERCEPT_MIN_FLOPS",
    "passed through: negative entries (ngemm)",
    "passed through: NaN or Inf entries",
    "passed through: no such routine for this precision",
    "passed through: bad arguments (reported by the BLAS)",
    "passed through: the library's own calls",
    "passed through: quick return (alpha = 0 or k = 0 or empty C)",
    "passed through: libxngemm not loadable",
    "passed through: xNGEMM could not run the call",
    "rerouted and failed: the library's status returned"};

// Which family of entry points a call came through: one log line each.
enum Family { kBlas, kCublas, kFamilies };
constexpr const char *kFamilyLogPrefix[kFamilies] = {"xngemm intercept:",
                                                     "xngemm intercept (cuBLAS):"};

// The library's routines of each mode by symbol name, Fortran and CBLAS
// forms (nullptr: none for that precision, the call passes through).
template <class T>
using FortranGemm = void (*)(const char *, const char *, const int *, const int *,
                             const int *, const T *, const T *, const int *, const T *,
                             const int *, const T *, T *, const int *);
template <class T>
using CblasGemm = void (*)(int, int, int, int, int, int, T, const T *, int, const T *,
                           int, T, T *, int);
template <class T>
using CublasGemm = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                      cublasOperation_t, int, int, int, const T *,
                                      const T *, int, const T *, int, const T *, T *,
                                      int);
// What a mode requires of op(A) and op(B) before it takes a call.
enum class Scan {
  None,    // exdgemm: every input, non-finite ones as BLAS
  Finite,  // Strassen, Winograd: NaN and Inf would reach more entries than
           // in the classical product (pre-additions, Inf - Inf)
  NonNeg,  // ngemm: its contract (Badin et al., ICS'13), and finite
};
struct Mode {
  const char *name;  // XN_INTERCEPT's value
  Scan scan;
  const char *fortran[2];  // double, single
  const char *cblas[2];
  const char *device[2];  // the cuBLAS-compatible routine
};
const Mode kModes[] = {
    {"exdgemm",
     Scan::None,
     {"exdgemm_", nullptr},
     {"cblas_exdgemm", nullptr},
     {"xnExdgemm", nullptr}},
    {"ngemm",
     Scan::NonNeg,
     {"dngemm_", "sngemm_"},
     {"cblas_dngemm", "cblas_sngemm"},
     {"xnDngemm", "xnSngemm"}},
    {"strassen",
     Scan::Finite,
     {"dstgemm_", "sstgemm_"},
     {"cblas_dstgemm", "cblas_sstgemm"},
     {"xnDgemmStrassen", "xnSgemmStrassen"}},
    {"winograd",
     Scan::Finite,
     {"dwigemm_", "swigemm_"},
     {"cblas_dwigemm", "cblas_swigemm"},
     {"xnDgemmWinograd", "xnSgemmWinograd"}},
};
template <class T>
constexpr int precision_index() {
  return sizeof(T) == sizeof(double) ? 0 : 1;
}

struct Config {
  const Mode *mode = nullptr;  // nullptr: off
  double min_flops = 0;
  bool log = false;
};

std::atomic<std::uint64_t> g_count[kFamilies][kOutcomes];
std::atomic<bool> g_seen[kFamilies];  // whether the family had a call

// The BLAS line always (the host GEMMs are what most programs call), the
// cuBLAS line when a cuBLAS GEMM was seen.
void print_log() {
  for (int f = 0; f < kFamilies; ++f) {
    if (f != kBlas && !g_seen[f].load()) continue;
    std::fprintf(stderr, "%s", kFamilyLogPrefix[f]);
    for (int i = 0; i < kOutcomes; ++i)
      std::fprintf(stderr, "%s %llu %s", i ? "," : "",
                   static_cast<unsigned long long>(g_count[f][i].load()),
                   kOutcomeNames[i]);
    std::fprintf(stderr, "\n");
  }
}

void count(Family f, Outcome o) {
  g_count[f][o].fetch_add(1, std::memory_order_relaxed);
  if (f != kBlas && !g_seen[f].load(std::memory_order_relaxed)) g_seen[f].store(true);
}

const Config &config() {
  static const Config c = [] {
    Config r;
    const char *m = std::getenv("XN_INTERCEPT");
    for (const Mode &mode : kModes)
      if (m && !std::strcmp(m, mode.name)) r.mode = &mode;
    if (m && !r.mode && std::strcmp(m, "off"))
      std::fprintf(stderr,
                   "xngemm intercept: unknown XN_INTERCEPT=%s (off, exdgemm, ngemm, "
                   "strassen, winograd): every call passes through\n",
                   m);
    if (const char *f = std::getenv("XN_INTERCEPT_MIN_FLOPS")) r.min_flops = std::atof(f);
    const char *l = std::getenv("XN_INTERCEPT_LOG");
    r.log = l && *l && std::strcmp(l, "0");
    if (r.log) std::atexit(print_log);
    return r;
  }();
  return c;
}

// libxngemm, loaded at the first rerouted call, privately; nullptr (said
// once) when it cannot be. g_library: the handle once loaded, for the paths
// that must not load it (cublasDestroy_v2).
std::atomic<void *> g_library{nullptr};
void *library() {
  static void *const handle = [] {
    void *h = dlopen(XN_LIBRARY_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
      std::fprintf(stderr,
                   "xngemm intercept: cannot load %s (%s): every call passes "
                   "through\n",
                   XN_LIBRARY_SONAME, dlerror());
    g_library.store(h, std::memory_order_release);
    return h;
  }();
  return handle;
}
std::atomic<int (*)()> g_loaded_depth{nullptr};  // set once the library is loaded

// Whether the calling thread is inside one of xNGEMM's entry points, host or
// device: of a libxngemm the program links itself, or of the one loaded here.
bool inside_library() {
  static int (*const linked)() =
      reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "xn_internal_call_depth"));
  if (linked && linked() > 0) return true;
  int (*const loaded)() = g_loaded_depth.load(std::memory_order_acquire);
  return loaded && loaded() > 0;
}

// The real routine: the next definition after this library, else (a BLAS
// without the CBLAS symbols, the library's leaves asking for them) the one
// the library itself links.
template <class F>
F real(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  if (!p && library()) p = dlsym(library(), name);
  if (!p) {
    std::fprintf(stderr, "xngemm intercept: no %s after the interposer\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(p);
}

// The library's routine `name`, or nullptr.
template <class F>
F routine(const char *name) {
  void *h = library();
  if (!h) return nullptr;
  if (!g_loaded_depth.load(std::memory_order_acquire))
    g_loaded_depth.store(reinterpret_cast<int (*)()>(dlsym(h, "xn_internal_call_depth")),
                         std::memory_order_release);
  return reinterpret_cast<F>(dlsym(h, name));
}

char upper(char c) { return c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c; }
bool is_trans(char c) { return c == 'T' || c == 'C'; }

// BLAS's checks of ?GEMM (column-major, op(A) m x k, op(B) k x n): whether
// the reference BLAS would accept the call.
bool valid(char ta, char tb, long m, long n, long k, long lda, long ldb, long ldc) {
  auto op_ok = [](char t) { return t == 'N' || t == 'T' || t == 'C'; };
  const long rows_a = is_trans(ta) ? k : m, rows_b = is_trans(tb) ? n : k;
  auto at_least = [](long ld, long rows) { return ld >= (rows > 1 ? rows : 1); };
  return op_ok(ta) && op_ok(tb) && m >= 0 && n >= 0 && k >= 0 && at_least(lda, rows_a) &&
         at_least(ldb, rows_b) && at_least(ldc, m);
}

// The OR of the EntryFlags (numerics/elementwise.h, the classification the
// library's device scan applies) of a rows x cols operand in host memory
// (column-major, leading dimension ld); stops at the first NaN or Inf,
// which decides every scanning mode.
template <class T>
int host_operand_flags(const T *p, long rows, long cols, long ld) {
  int flags = 0;
  for (long j = 0; j < cols; ++j)
    for (long i = 0; i < rows; ++i) {
      flags |= xn::ew_entry_flags(p[i + j * ld]);
      if (flags & xn::kEntryNonFinite) return flags;
    }
  return flags;
}

// Where a valid column-major call goes; kRerouted when to the library.
// `alpha_zero()` says whether alpha is known to be 0; `flags_of(&flags)`
// classifies op(A) and op(B) (kRerouted, or why it could not).
template <class T, class AlphaZero, class FlagsOf>
Outcome route(long m, long n, long k, AlphaZero &&alpha_zero, FlagsOf &&flags_of) {
  const Config &c = config();
  if (inside_library()) return kReentrant;
  // BLAS's quick return reads neither A nor B (they may be invalid
  // pointers): the BLAS does it, nothing to scan or reroute.
  if (k == 0 || m == 0 || n == 0 || alpha_zero()) return kQuickReturn;
  if (!c.mode) return kOff;
  // (Every form of a mode has routines for the same precisions.)
  if (!c.mode->fortran[precision_index<T>()]) return kNoRoutine;
  if (2.0 * double(m) * double(n) * double(k) < c.min_flops) return kSmall;
  if (c.mode->scan == Scan::None) return kRerouted;
  int flags = 0;
  const Outcome scanned = flags_of(&flags);
  if (scanned != kRerouted) return scanned;
  if (flags & xn::kEntryNonFinite) return kNonFinite;
  if (c.mode->scan == Scan::NonNeg && (flags & xn::kEntryNegative)) return kNegative;
  return kRerouted;
}

// route() for a call with its operands in host memory.
template <class T>
Outcome route_host(char ta, char tb, long m, long n, long k, T alpha, const T *A,
                   long lda, const T *B, long ldb) {
  return route<T>(
      m, n, k, [&] { return alpha == T(0); },
      [&](int *flags) {
        *flags = host_operand_flags(A, is_trans(ta) ? k : m, is_trans(ta) ? m : k, lda);
        if (!(*flags & xn::kEntryNonFinite))
          *flags |=
              host_operand_flags(B, is_trans(tb) ? n : k, is_trans(tb) ? k : n, ldb);
        return kRerouted;
      });
}

// On kRerouted runs `library`, then `pass` if the library could not run the
// call (it left C unchanged: a BLAS routine has no status to say so, the
// library's per-thread flag does); otherwise `pass`. Counts what happened.
template <class Library, class Pass>
void dispatch(Outcome o, Library &&library, Pass &&pass) {
  config();  // reads the environment (and arms the exit log) on the first call
  if (o == kRerouted) {
    library();
    static const auto failed =
        routine<decltype(&xn_internal_host_call_failed)>("xn_internal_host_call_failed");
    if (!failed || !failed()) {
      count(kBlas, kRerouted);
      return;
    }
    o = kCannotRun;
  }
  count(kBlas, o);
  pass();
}

// CBLAS arguments as the column-major call they describe: RowMajor C = op(A)
// op(B) is column-major C^T = op(B)^T op(A)^T. False for arguments CBLAS
// rejects (left to the BLAS).
constexpr int kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112,
              kConjTrans = 113;
bool cblas_as_column_major(int layout, int transa, int transb, int m, int n, int k,
                           int lda, int ldb, int ldc, char *ta, char *tb, long *cm,
                           long *cn, bool *swap) {
  auto op = [](int t) {
    return t == kNoTrans ? 'N' : t == kTrans ? 'T' : t == kConjTrans ? 'C' : '?';
  };
  if (layout != kRowMajor && layout != kColMajor) return false;
  *swap = layout == kRowMajor;
  *ta = op(*swap ? transb : transa);
  *tb = op(*swap ? transa : transb);
  *cm = *swap ? n : m;
  *cn = *swap ? m : n;
  return valid(*ta, *tb, *cm, *cn, k, *swap ? ldb : lda, *swap ? lda : ldb, ldc);
}

// The two entry forms, for either precision: route, then the library's
// routine or the real one (`next`).
template <class T>
void fortran_entry(FortranGemm<T> next, const char *transa, const char *transb,
                   const int *m, const int *n, const int *k, const T *alpha, const T *A,
                   const int *lda, const T *B, const int *ldb, const T *beta, T *C,
                   const int *ldc) {
  const char ta = upper(*transa), tb = upper(*transb);
  Outcome o = valid(ta, tb, *m, *n, *k, *lda, *ldb, *ldc)
                  ? route_host<T>(ta, tb, *m, *n, *k, *alpha, A, *lda, B, *ldb)
                  : kBadArguments;
  FortranGemm<T> fn = nullptr;
  if (o == kRerouted &&
      !(fn = routine<FortranGemm<T>>(config().mode->fortran[precision_index<T>()])))
    o = kNoLibrary;
  dispatch(
      o, [&] { fn(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); },
      [&] { next(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); });
}

template <class T>
void cblas_entry(CblasGemm<T> next, int layout, int transa, int transb, int m, int n,
                 int k, T alpha, const T *A, int lda, const T *B, int ldb, T beta, T *C,
                 int ldc) {
  char ta, tb;
  long cm, cn;
  bool swap;
  Outcome o = cblas_as_column_major(layout, transa, transb, m, n, k, lda, ldb, ldc, &ta,
                                    &tb, &cm, &cn, &swap)
                  ? route_host<T>(ta, tb, cm, cn, k, alpha, swap ? B : A,
                                  swap ? ldb : lda, swap ? A : B, swap ? lda : ldb)
                  : kBadArguments;
  CblasGemm<T> fn = nullptr;
  if (o == kRerouted &&
      !(fn = routine<CblasGemm<T>>(config().mode->cblas[precision_index<T>()])))
    o = kNoLibrary;
  dispatch(
      o,
      [&] { fn(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); },
      [&] {
        next(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      });
}

// ---------------------------------------------------------------- cuBLAS

char cublas_op(cublasOperation_t op) {
  return op == CUBLAS_OP_N   ? 'N'
         : op == CUBLAS_OP_T ? 'T'
         : op == CUBLAS_OP_C ? 'C'
                             : '?';
}

// The library's scan of device operands (api/interposer_support.h), on the
// call's handle: kRerouted with *flags set, or why it could not run.
template <class T>
Outcome device_operand_flags(cublasHandle_t h, cublasOperation_t transa,
                             cublasOperation_t transb, int m, int n, int k, const T *A,
                             int lda, const T *B, int ldb, int *flags) {
  static const auto scan =
      routine<decltype(&xn_internal_operand_flags)>("xn_internal_operand_flags");
  if (!scan) return kNoLibrary;
  return scan(h, precision_index<T>() == 0 ? 'd' : 's', transa, transb, m, n, k, A, lda,
              B, ldb, flags) == CUBLAS_STATUS_SUCCESS
             ? kRerouted
             : kCannotRun;
}

// Statuses with which the library's routines return before writing C (bad
// arguments, no memory, no support): the call can still go to cuBLAS.
bool leaves_c_untouched(cublasStatus_t s) {
  return s == CUBLAS_STATUS_NOT_INITIALIZED || s == CUBLAS_STATUS_ALLOC_FAILED ||
         s == CUBLAS_STATUS_INVALID_VALUE || s == CUBLAS_STATUS_ARCH_MISMATCH ||
         s == CUBLAS_STATUS_NOT_SUPPORTED;
}

// cublas?gemm_v2: route (the scanning modes read op(A) and op(B) on the
// device and synchronise the handle's stream once), then the library's
// routine on the same handle, or cuBLAS (`next`).
template <class T>
cublasStatus_t cublas_entry(CublasGemm<T> next, cublasHandle_t h,
                            cublasOperation_t transa, cublasOperation_t transb, int m,
                            int n, int k, const T *alpha, const T *A, int lda, const T *B,
                            int ldb, const T *beta, T *C, int ldc) {
  config();
  static const auto get_pointer_mode =
      real<decltype(&cublasGetPointerMode_v2)>("cublasGetPointerMode_v2");
  Outcome o = h && valid(cublas_op(transa), cublas_op(transb), m, n, k, lda, ldb, ldc)
                  ? route<T>(
                        m, n, k,
                        [&] {
                          // Only a host alpha can be read here; a device alpha = 0 is
                          // the library's quick return (it handles both modes).
                          cublasPointerMode_t mode;
                          return get_pointer_mode(h, &mode) == CUBLAS_STATUS_SUCCESS &&
                                 mode == CUBLAS_POINTER_MODE_HOST && alpha &&
                                 *alpha == T(0);
                        },
                        [&](int *flags) {
                          return device_operand_flags<T>(h, transa, transb, m, n, k, A,
                                                         lda, B, ldb, flags);
                        })
                  : kBadArguments;
  CublasGemm<T> fn = nullptr;
  if (o == kRerouted &&
      !(fn = routine<CublasGemm<T>>(config().mode->device[precision_index<T>()])))
    o = kNoLibrary;
  if (o == kRerouted) {
    const cublasStatus_t s =
        fn(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (s == CUBLAS_STATUS_SUCCESS || !leaves_c_untouched(s)) {
      count(kCublas, s == CUBLAS_STATUS_SUCCESS ? kRerouted : kDeviceError);
      return s;
    }
    o = kCannotRun;
  }
  count(kCublas, o);
  return next(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// Frees the library's state of a handle about to be destroyed (its
// workspace, events, cuBLASLt plans): the library's if loaded here, else a
// libxngemm the program links; nothing if neither.
void release_library_state(cublasHandle_t h) {
  if (!h || inside_library()) return;  // the library releases its own
  void *lib = g_library.load(std::memory_order_acquire);
  using Release = cublasStatus_t (*)(cublasHandle_t);
  if (auto release =
          reinterpret_cast<Release>(dlsym(lib ? lib : RTLD_DEFAULT, "xnRelease")))
    release(h);
}

}  // namespace

extern "C" {

void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
            const int *k, const double *alpha, const double *A, const int *lda,
            const double *B, const int *ldb, const double *beta, double *C,
            const int *ldc) {
  static const auto next = real<FortranGemm<double>>("dgemm_");
  fortran_entry<double>(next, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                        ldc);
}

void sgemm_(const char *transa, const char *transb, const int *m, const int *n,
            const int *k, const float *alpha, const float *A, const int *lda,
            const float *B, const int *ldb, const float *beta, float *C, const int *ldc) {
  static const auto next = real<FortranGemm<float>>("sgemm_");
  fortran_entry<float>(next, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                       ldc);
}

void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                 const double *A, int lda, const double *B, int ldb, double beta,
                 double *C, int ldc) {
  static const auto next = real<CblasGemm<double>>("cblas_dgemm");
  cblas_entry<double>(next, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,
                      C, ldc);
}

void cblas_sgemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                 const float *A, int lda, const float *B, int ldb, float beta, float *C,
                 int ldc) {
  static const auto next = real<CblasGemm<float>>("cblas_sgemm");
  cblas_entry<float>(next, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,
                     C, ldc);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const double *alpha, const double *A, int lda,
                              const double *B, int ldb, const double *beta, double *C,
                              int ldc) {
  static const auto next = real<CublasGemm<double>>("cublasDgemm_v2");
  return cublas_entry<double>(next, handle, transa, transb, m, n, k, alpha, A, lda, B,
                              ldb, beta, C, ldc);
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const float *alpha, const float *A, int lda, const float *B,
                              int ldb, const float *beta, float *C, int ldc) {
  static const auto next = real<CublasGemm<float>>("cublasSgemm_v2");
  return cublas_entry<float>(next, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                             beta, C, ldc);
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  static const auto next = real<decltype(&cublasDestroy_v2)>("cublasDestroy_v2");
  release_library_state(handle);
  return next(handle);
}

}  // extern "C"
