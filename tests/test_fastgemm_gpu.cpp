// test_fastgemm_gpu.cpp - xn?gemmStrassen and xn?gemmWinograd (general inputs,
// Li, Ranka, Sahni, ICPADS'11) through the public device API and the host
// names (label gpu; every test skips cleanly without a device).
//
// Inputs are fresh random draws (the seed is printed on failure); padding rows
// of A and B hold NaN (a read of it shows up in the result), C's padding a
// sentinel (a write to it shows up), and C's live part NaN when beta = 0
// (which must never read it). Leaves of 8..64 make sizes of a few hundred
// recurse 1-3 levels. Two kinds of check:
//  - exact: small signed integers (Dist::SmallSignedInt, -8..8) keep every
//    value of the recursion an integer small enough to be exact
//    (exact_for), so the result must be the classical product exactly: the
//    strongest check of the tables and of the fused combine kernel;
//  - oracle: general values against the MPFR oracle within the normwise
//    bound of a fast algorithm (allowed_error).
// GpuFastGemmSanitized holds one small case of every path for the
// compute-sanitizer runs (tests/fastgemm.cmake).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/device_model_cuda.h"
#include "core/gemm_driver.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "support/gpu_support.h"
#include "support/mpfr_oracle.h"
#include "support/test_support.h"

namespace {

using namespace xn_test;

constexpr double kCSentinel = -777.25;  // C's padding must keep this value

template <class T>
constexpr bool is_double() {
  return sizeof(T) == sizeof(double);
}
template <class T>
const char *type_name() {
  return is_double<T>() ? "double" : "float";
}

// One of the two routines, with its options and the constants of the bounds.
struct FastAlgo {
  const char *name;
  xnFastGemm_t id;
  const xn::GemmAlgorithm &(*algorithm)();
  xnOption_t leaf_s, leaf_d, min_size_s, min_size_d;
  double growth;     // error growth per level (Higham: 12, 18)
  double adds;       // additions per leaf row in Higham's bound (5, 6)
  double magnitude;  // growth per level of the values themselves (20, 27)

  xnOption_t leaf(bool d) const { return d ? leaf_d : leaf_s; }
  xnOption_t min_size(bool d) const { return d ? min_size_d : min_size_s; }
};

const FastAlgo kStrassen{"Strassen",
                         XN_FAST_GEMM_STRASSEN,
                         &xn::strassen_algorithm,
                         XN_OPT_STRASSEN_LEAF_S,
                         XN_OPT_STRASSEN_LEAF_D,
                         XN_OPT_STRASSEN_MIN_SIZE_S,
                         XN_OPT_STRASSEN_MIN_SIZE_D,
                         12,
                         5,
                         20};
const FastAlgo kWinograd{"Winograd",
                         XN_FAST_GEMM_WINOGRAD,
                         &xn::winograd_algorithm,
                         XN_OPT_WINOGRAD_LEAF_S,
                         XN_OPT_WINOGRAD_LEAF_D,
                         XN_OPT_WINOGRAD_MIN_SIZE_S,
                         XN_OPT_WINOGRAD_MIN_SIZE_D,
                         18,
                         6,
                         27};
const FastAlgo *const kAlgos[] = {&kStrassen, &kWinograd};

const cublasOperation_t kOps[] = {CUBLAS_OP_N, CUBLAS_OP_T};
const char *op_name(cublasOperation_t o) {
  return o == CUBLAS_OP_N ? "N" : o == CUBLAS_OP_T ? "T" : "C";
}

cublasStatus_t fast_gemm(const FastAlgo &a, cublasHandle_t h, cublasOperation_t ta,
                         cublasOperation_t tb, int m, int n, int k, const float *alpha,
                         const float *A, int lda, const float *B, int ldb,
                         const float *beta, float *C, int ldc) {
  return a.id == XN_FAST_GEMM_STRASSEN
             ? xnSgemmStrassen(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
             : xnSgemmWinograd(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t fast_gemm(const FastAlgo &a, cublasHandle_t h, cublasOperation_t ta,
                         cublasOperation_t tb, int m, int n, int k, const double *alpha,
                         const double *A, int lda, const double *B, int ldb,
                         const double *beta, double *C, int ldc) {
  return a.id == XN_FAST_GEMM_STRASSEN
             ? xnDgemmStrassen(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
             : xnDgemmWinograd(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t cublas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                           int m, int n, int k, const float *alpha, const float *A,
                           int lda, const float *B, int ldb, const float *beta, float *C,
                           int ldc) {
  return cublasSgemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t cublas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                           int m, int n, int k, const double *alpha, const double *A,
                           int lda, const double *B, int ldb, const double *beta,
                           double *C, int ldc) {
  return cublasDgemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

struct Case {
  int m, n, k;
  cublasOperation_t ta, tb;
  double alpha, beta;
  int pad;     // extra rows of lda (ldb: + 1 more, ldc: + 2 more when pad > 0)
  Dist dist;   // of A, B and C
  int offset;  // elements between the (256-byte aligned) buffers and A, B, C
};
Case make_case(int m, int n, int k, cublasOperation_t ta, cublasOperation_t tb,
               double alpha, double beta, int pad = 0, Dist dist = Dist::UniformPm1,
               int offset = 0) {
  return Case{m, n, k, ta, tb, alpha, beta, pad, dist, offset};
}

// The normwise bound (Higham, Accuracy and Stability of Numerical Algorithms,
// 2nd ed., section 23.2.2, Theorems 23.2 and 23.3): for square n = 2^L n0 and
// classical leaves of n0,
//   max|C - C^| <= [12^L (n0^2 + 5 n0) - 5n] u max|A| max|B|   (Strassen)
//   max|C - C^| <= [18^L (n0^2 + 6 n0) - 6n] u max|A| max|B|   (Winograd)
// + O(u^2). A level multiplies the error by 12 (18) because a quadrant of C
// sums the errors of its products, each scaled by its operands' growth
// (Strassen's C11 = M1 + M4 - M5 + M7: 4 + 2 + 2 + 4 = 12; Winograd's
// C12 = M1 + M6 + M5 + M3: 1 + 9 + 4 + 4 = 18), in whatever order the
// schedule adds them (the accumulating tables too); the leaf contributes its
// classical error n0 u (n0 max|A| max|B|) and the additions 5 (6) roundings
// of that size. For an m x n x k call with L levels on its core, n0 = k >> L
// is the leaf's inner dimension and k >= 2^L n0, so in units of
// u |alpha| max|A| max|B| k the error is at most
//   f(L) = 2 (c/2)^L (n0 + d + 2),   (c, d) = (12, 5) or (18, 6).
// The factor 2 and the + 2 cover the O(u^2) terms, alpha's rounding in the
// leaves and the peeled strips (classical GEMMs of at most k terms, error
// k u k max|A| max|B| <= f(L) as (c/4)^L >= 1); at L = 0, 2 (k + d + 2) is
// the classical k-term bound with room. C's old value enters once and is
// then rounded at every accumulation into it, at most 4 per level (a
// quadrant adds at most four products), hence 2 (4^L + 2) u |beta c0|.
// Meaningful: f u is below 1e-10 in double and a few 1e-3 in float at three
// levels, while an entry that misses a product, adds one twice or with the
// wrong sign errs by that product's size, about k / 2^(L+3) max|A| max|B|
// for Uniform01 inputs and sqrt(k / 2^L) / 3 for UniformPm1 (a tenth to a
// hundredth of k max|A| max|B| at the sizes here).
double normwise_factor(const FastAlgo &a, int levels, std::int64_t k) {
  const double n0 = double(k >> levels);
  return 2 * std::pow(a.growth / 2, levels) * (n0 + a.adds + 2);
}
double beta_factor(int levels) { return 2 * (std::pow(4.0, levels) + 2); }

// Integer inputs |a|, |b| <= 8: the largest magnitude any value of the
// recursion can take. A level's values are pre-additions of at most four
// quadrants (Winograd's S4 = A12 - A21 - A22 + A11) and signed partial sums
// of its seven products, each bounded by the level below times its operands'
// growth: Strassen's products grow by 4, 2, 2, 2, 2, 4, 4 (|A11 + A22| <=
// 2 max|A|, ...), 20 in all; Winograd's by 1, 1, 4, 4, 4, 9, 4 (M6 = S2 T2
// with |S2|, |T2| <= 3 max), 27 in all. With the leaves' k / 2^L-term sums:
//   |alpha| (S/2)^L k max|A| max|B| + |beta| max|C0|,
// the peeled strips being classical sums within k max|A| max|B|. Below
// 2^digits (2^24 float, 2^53 double) every value is exact.
template <class T>
bool exact_for(const FastAlgo &a, int levels, const Case &c) {
  const double bound = std::fabs(c.alpha) * std::pow(a.magnitude / 2, levels) * c.k * 64 +
                       std::fabs(c.beta) * 8;
  return bound < std::ldexp(1.0, std::numeric_limits<T>::digits);
}

template <class T>
struct Problem {
  Case c{};
  bool ta = false, tb = false;
  int lda = 1, ldb = 1, ldc = 1;
  std::vector<T> A, B, C0;  // C0 holds NaN in its live part when beta = 0
  double amax = 0, bmax = 0;
  std::uint64_t seed = 0;
  std::vector<ExactEntry> exact;  // the MPFR oracle, made on first use
  std::vector<double> classical;  // the product of integer inputs, first use

  T a(int i, int p) const { return ta ? A[std::size_t(p + i * lda)] : A[i + p * lda]; }
  T b(int p, int j) const { return tb ? B[std::size_t(j + p * ldb)] : B[p + j * ldb]; }
  T c0(int i, int j) const { return C0[std::size_t(i + j * ldc)]; }

  std::string describe() const {
    return std::string(type_name<T>()) + " m=" + std::to_string(c.m) +
           " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " " +
           op_name(c.ta) + op_name(c.tb) + " alpha=" + std::to_string(c.alpha) +
           " beta=" + std::to_string(c.beta) + " lda=" + std::to_string(lda) +
           " ldb=" + std::to_string(ldb) + " ldc=" + std::to_string(ldc) +
           " offset=" + std::to_string(c.offset) + "; " + describe_seed(seed);
  }
  const std::vector<ExactEntry> &oracle() {
    if (exact.empty() && c.m > 0 && c.n > 0)
      exact_gemm<T>(ta, tb, c.m, c.n, c.k, T(c.alpha), A.data(), lda, B.data(), ldb,
                    T(c.beta), C0.data(), ldc, exact);
    return exact;
  }
  // Exact for inputs within exact_for's bound (every partial sum is an
  // integer below 2^53).
  const std::vector<double> &integer_product() {
    if (classical.empty() && c.m > 0 && c.n > 0) {
      classical.resize(std::size_t(c.m) * c.n);
      for (int j = 0; j < c.n; ++j)
        for (int i = 0; i < c.m; ++i) {
          double s = 0;
          for (int p = 0; p < c.k; ++p) s += double(a(i, p)) * double(b(p, j));
          classical[std::size_t(i + j * c.m)] =
              c.alpha * s + (c.beta == 0 ? 0.0 : c.beta * double(c0(i, j)));
        }
    }
    return classical;
  }
};

template <class T>
Problem<T> make_problem(const Case &c, std::uint64_t seed = fresh_seed()) {
  Problem<T> p;
  p.c = c;
  p.seed = seed;
  std::mt19937_64 rng(seed);
  p.ta = c.ta != CUBLAS_OP_N;
  p.tb = c.tb != CUBLAS_OP_N;
  const int ra = p.ta ? c.k : c.m, ca = p.ta ? c.m : c.k;
  const int rb = p.tb ? c.n : c.k, cb = p.tb ? c.k : c.n;
  p.lda = std::max(1, ra) + c.pad;
  p.ldb = std::max(1, rb) + c.pad + (c.pad > 0);
  p.ldc = std::max(1, c.m) + c.pad + 2 * (c.pad > 0);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  fill<T>(p.A, ra, ca, p.lda, c.dist, rng, nan);
  fill<T>(p.B, rb, cb, p.ldb, c.dist, rng, nan);
  fill<T>(p.C0, c.m, c.n, p.ldc, c.dist, rng, T(kCSentinel));
  if (c.beta == 0)  // beta = 0 must not read C: poison its live part
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < c.m; ++i) p.C0[std::size_t(i + j * p.ldc)] = nan;
  for (int i = 0; i < c.m; ++i)
    for (int q = 0; q < c.k; ++q) p.amax = std::max(p.amax, std::fabs(double(p.a(i, q))));
  for (int q = 0; q < c.k; ++q)
    for (int j = 0; j < c.n; ++j) p.bmax = std::max(p.bmax, std::fabs(double(p.b(q, j))));
  return p;
}

// |c - exact| allowed at (i, j) after `levels` levels (see normwise_factor).
template <class T>
double allowed_error(const FastAlgo &a, int levels, const Problem<T> &p, int i, int j) {
  const double c0 = p.c.beta == 0 ? 0.0 : std::fabs(double(p.c0(i, j)));
  return unit_roundoff<T>() * (normwise_factor(a, levels, p.c.k) * std::fabs(p.c.alpha) *
                                   p.amax * p.bmax * p.c.k +
                               beta_factor(levels) * std::fabs(p.c.beta) * c0);
}

// Every entry within the bound of the oracle, C's padding untouched.
template <class T>
void check_oracle(const FastAlgo &a, int levels, Problem<T> &p, const std::vector<T> &C,
                  const std::string &what) {
  const std::vector<ExactEntry> &x = p.oracle();
  ASSERT_EQ(C.size(), p.C0.size()) << what;
  for (int j = 0; j < p.c.n; ++j)
    for (int i = 0; i < p.ldc; ++i) {
      const T got = C[std::size_t(i + j * p.ldc)];
      if (i >= p.c.m) {
        ASSERT_EQ(got, T(kCSentinel))
            << "wrote C's padding at " << i << "," << j << " " << what;
        continue;
      }
      const ExactEntry &e = x[std::size_t(i + j * p.c.m)];
      ASSERT_TRUE(std::isfinite(double(got))) << "at " << i << "," << j << " " << what;
      ASSERT_LE(abs_error(double(got), e), allowed_error(a, levels, p, i, j) + 1e-300)
          << "at " << i << "," << j << " got " << got << " exact " << e.hi << " " << what;
    }
}

// Every entry equal to the classical product of integer inputs (as values: an
// exact zero's sign depends on the order of evaluation, -1 * 0 = -0 but
// x - x = +0), C's padding untouched.
template <class T>
void check_exact(Problem<T> &p, const std::vector<T> &C, const std::string &what) {
  const std::vector<double> &ref = p.integer_product();
  ASSERT_EQ(C.size(), p.C0.size()) << what;
  for (int j = 0; j < p.c.n; ++j)
    for (int i = 0; i < p.ldc; ++i) {
      const T got = C[std::size_t(i + j * p.ldc)];
      if (i >= p.c.m) {
        ASSERT_EQ(got, T(kCSentinel))
            << "wrote C's padding at " << i << "," << j << " " << what;
        continue;
      }
      ASSERT_EQ(double(got), ref[std::size_t(i + j * p.c.m)])
          << "at " << i << "," << j << " " << what;
    }
}

struct Exec {
  bool device_scalars;  // alpha and beta in device memory
  cudaStream_t stream;
  bool cublas;  // cuBLAS's own GEMM with the same arguments (the reference)
};
constexpr Exec kHost{false, nullptr, false};

// A problem's operands on the device (at its offset from aligned buffers).
template <class T>
struct DeviceProblem {
  DeviceBuffer<T> A, B, C, scalars;
  T alpha = 0, beta = 0;
  int off = 0;

  void upload(const Problem<T> &p) {
    off = p.c.offset;
    auto shifted = [&](const std::vector<T> &v) {
      std::vector<T> s(static_cast<std::size_t>(off), T(kCSentinel));
      s.insert(s.end(), v.begin(), v.end());
      return s;
    };
    A.upload(shifted(p.A));
    B.upload(shifted(p.B));
    C.upload(shifted(p.C0));
    alpha = T(p.c.alpha);
    beta = T(p.c.beta);
    scalars.upload({alpha, beta});
  }
  // Enqueues the call on the handle's stream, in its pointer mode (which
  // must match e.device_scalars).
  cublasStatus_t launch(cublasHandle_t h, const FastAlgo &a, const Problem<T> &p,
                        const Exec &e) {
    const T *pa = e.device_scalars ? scalars.get() : &alpha;
    const T *pb = e.device_scalars ? scalars.get() + 1 : &beta;
    if (e.cublas)
      return cublas_gemm(h, p.c.ta, p.c.tb, p.c.m, p.c.n, p.c.k, pa, A.get() + off, p.lda,
                         B.get() + off, p.ldb, pb, C.get() + off, p.ldc);
    return fast_gemm(a, h, p.c.ta, p.c.tb, p.c.m, p.c.n, p.c.k, pa, A.get() + off, p.lda,
                     B.get() + off, p.ldb, pb, C.get() + off, p.ldc);
  }
  std::vector<T> result() const {
    const std::vector<T> v = C.download();
    return std::vector<T>(v.begin() + std::min<std::size_t>(v.size(), off), v.end());
  }
};

// A non-blocking stream that the handle is taken off before it is destroyed.
class ScopedStream {
 public:
  explicit ScopedStream(cublasHandle_t h) : h_(h) {
    if (cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking) != cudaSuccess)
      s_ = nullptr;
  }
  ~ScopedStream() {
    if (h_) cublasSetStream(h_, nullptr);
    if (s_) {
      cudaStreamSynchronize(s_);
      cudaStreamDestroy(s_);
    }
  }
  ScopedStream(const ScopedStream &) = delete;
  ScopedStream &operator=(const ScopedStream &) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cublasHandle_t h_;
  cudaStream_t s_ = nullptr;
};

class GpuFastGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    XN_REQUIRE_GPU();
    ASSERT_EQ(cublasCreate(&h_), CUBLAS_STATUS_SUCCESS);
    configure(16);
  }
  void TearDown() override {
    if (h_) {
      cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST);
      cublasSetStream(h_, nullptr);
      xnRelease(h_);
      cublasDestroy(h_);
    }
  }

  // Leaf `leaf` and crossover `min_size` for both routines and precisions,
  // the depth cap, XN_OPT_PACK_TRANS_B and no workspace limit.
  // `pack`, `pack_a`: XN_OPT_PACK_TRANS_B and XN_OPT_PACK_TRANS_A.
  void configure(std::int64_t leaf, std::int64_t min_size = 0,
                 std::int64_t max_levels = 6, std::int64_t pack = -1,
                 std::int64_t pack_a = -1) {
    for (const FastAlgo *a : kAlgos)
      for (bool d : {false, true}) {
        ASSERT_EQ(xnSetOption(h_, a->leaf(d), leaf), CUBLAS_STATUS_SUCCESS);
        ASSERT_EQ(xnSetOption(h_, a->min_size(d), min_size), CUBLAS_STATUS_SUCCESS);
      }
    ASSERT_EQ(xnSetOption(h_, XN_OPT_MAX_LEVELS, max_levels), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_PACK_TRANS_B, pack), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_PACK_TRANS_A, pack_a), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_WORKSPACE_LIMIT, -1), CUBLAS_STATUS_SUCCESS);
  }
  // Drops the handle's state (its workspace too), then configure().
  void reset(std::int64_t leaf, std::int64_t min_size = 0, std::int64_t max_levels = 6,
             std::int64_t pack = -1, std::int64_t pack_a = -1) {
    ASSERT_EQ(xnRelease(h_), CUBLAS_STATUS_SUCCESS);
    configure(leaf, min_size, max_levels, pack, pack_a);
  }

  // The depth the handle's options choose for the routine.
  template <class T>
  int planned(const FastAlgo &a, int m, int n, int k) {
    std::int64_t leaf = 0, min_size = 0, max_levels = 0;
    xnGetOption(h_, a.leaf(is_double<T>()), &leaf);
    xnGetOption(h_, a.min_size(is_double<T>()), &min_size);
    xnGetOption(h_, XN_OPT_MAX_LEVELS, &max_levels);
    return xn::choose_levels(m, n, k, leaf, int(max_levels), min_size);
  }
  int last_levels() {
    int levels = -2;
    xnGetLastLevels(h_, &levels);
    return levels;
  }
  template <class T>
  size_t query(const FastAlgo &a, const Case &c, bool beta_is_zero) {
    size_t bytes = 12345;
    EXPECT_EQ(xnGetFastGemmWorkspaceSize(h_, a.id, is_double<T>() ? 'd' : 's', c.ta, c.tb,
                                         c.m, c.n, c.k, beta_is_zero, &bytes),
              CUBLAS_STATUS_SUCCESS);
    return bytes;
  }
  size_t held() {
    size_t bytes = 12345;
    EXPECT_EQ(xnGetWorkspaceHeld(h_, &bytes), CUBLAS_STATUS_SUCCESS);
    return bytes;
  }

  // One synchronous call: upload, run on e.stream in e's pointer mode,
  // download C.
  template <class T>
  void execute(const FastAlgo &a, const Problem<T> &p, const Exec &e, std::vector<T> *C) {
    DeviceProblem<T> d;
    d.upload(p);
    XN_CUBLAS_OK(cublasSetStream(h_, e.stream));
    XN_CUBLAS_OK(cublasSetPointerMode(
        h_, e.device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
    const cublasStatus_t st = d.launch(h_, a, p, e);
    const cudaError_t sync = cudaStreamSynchronize(e.stream);
    cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST);
    cublasSetStream(h_, nullptr);
    ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS) << a.name << " " << p.describe();
    ASSERT_EQ(sync, cudaSuccess) << cudaGetErrorString(sync);
    *C = d.result();
  }

  // One call checked entry by entry, against the oracle within the bound or
  // (exact) against the classical product of integer inputs; the depth it
  // ran against `levels` (-1: the planned depth; 0 for the quick returns).
  template <class T>
  void run_case(const FastAlgo &a, Problem<T> &p, bool exact, const Exec &e = kHost,
                int levels = -1) {
    std::vector<T> C;
    execute(a, p, e, &C);
    if (HasFatalFailure()) return;
    const Case &c = p.c;
    const bool empty = c.m == 0 || c.n == 0;  // returns before any state
    const bool quick = c.k == 0 || (!e.device_scalars && c.alpha == 0);
    if (levels < 0) levels = empty || quick ? 0 : planned<T>(a, c.m, c.n, c.k);
    const std::string what = std::string(a.name) + " " + p.describe() +
                             (e.device_scalars ? " device scalars" : "") +
                             " levels=" + std::to_string(levels);
    if (!empty) {
      EXPECT_EQ(last_levels(), levels) << what;
    }
    if (exact) {
      ASSERT_TRUE(exact_for<T>(a, levels, c)) << "values too large to be exact: " << what;
      check_exact(p, C, what);
    } else {
      check_oracle(a, levels, p, C, what);
    }
  }

  cublasHandle_t h_ = nullptr;
};

// Odd, prime and rectangular sizes (k far above and far below m and n), every
// transpose pair (C for T at times), padded leading dimensions, general
// scalars, both distributions: both routines on the same inputs, each entry
// within the bound of the oracle.
TEST_F(GpuFastGemm, EveryTransposePairOddPrimeAndRectangularSizesMatchTheOracle) {
  configure(16);
  // Depths at leaf 16 in the comments.
  const int sizes[][3] = {{0, 5, 5},       {5, 0, 5},       {5, 5, 0},
                          {1, 1, 1},       {3, 2, 5},       {17, 17, 17},  // 0
                          {31, 33, 32},                                    // 1
                          {64, 64, 64},    {65, 63, 64},                   // 2
                          {128, 128, 128}, {127, 129, 131},                // 3
                          {37, 101, 131},  {97, 89, 83},                   // 2, prime
                          {20, 300, 280},                                  // 1
                          {257, 263, 37},  {300, 260, 20},  // 2, 1: k small
                          {70, 66, 1031},  {33, 35, 2000},  // 2, 1: k large
                          {193, 191, 199}};                 // 3, prime
  const double scalars[][2] = {{1, 0}, {-1, 1},     {0.75, -1.5},
                               {1, 1}, {-2.5, 0.5}, {1.5, 0}};
  int turn = 0;
  for (const auto &s : sizes)
    for (cublasOperation_t ta : kOps)
      for (cublasOperation_t tb : kOps) {
        const double *ab = scalars[turn % 6];
        const Dist dist = turn % 3 == 0 ? Dist::Uniform01 : Dist::UniformPm1;
        const cublasOperation_t a_op =
            ta == CUBLAS_OP_T && turn % 5 == 1 ? CUBLAS_OP_C : ta;
        const cublasOperation_t b_op =
            tb == CUBLAS_OP_T && turn % 5 == 3 ? CUBLAS_OP_C : tb;
        const Case c = make_case(s[0], s[1], s[2], a_op, b_op, ab[0], ab[1], turn % 4,
                                 dist, turn % 7 == 6);
        ++turn;
        Problem<double> pd = make_problem<double>(c);
        Problem<float> pf = make_problem<float>(c);
        for (const FastAlgo *a : kAlgos) {
          run_case(*a, pd, false);
          run_case(*a, pf, false);
          if (HasFatalFailure()) return;
        }
      }
}

// alpha and beta of 0, 1, -1 and general values; alpha = 0 (host) must read
// neither A nor B (they are all NaN then) and only scale C.
TEST_F(GpuFastGemm, AlphaBetaIncludingZeroOneAndMinusOne) {
  configure(16);
  const double scalars[][2] = {{1, 0},    {1, 1},    {-1, 0},    {-1, -1},
                               {1, -1},   {-1, 1},   {0, 0},     {0, 1},
                               {0, -2.5}, {2.5, -1}, {0.3, 0.7}, {-0.6, 0}};
  int turn = 0;
  for (const auto &ab : scalars)
    for (cublasOperation_t ta : kOps) {
      const cublasOperation_t tb = kOps[turn % 2];
      const Case cd = make_case(70, 67, 69, ta, tb, ab[0], ab[1], 2, Dist::UniformPm1);
      const Case cf = make_case(69, 70, 67, tb, ta, ab[0], ab[1], 1, Dist::Uniform01);
      ++turn;
      Problem<double> pd = make_problem<double>(cd);
      Problem<float> pf = make_problem<float>(cf);
      if (ab[0] == 0) {  // BLAS: alpha = 0 reads neither A nor B
        std::fill(pd.A.begin(), pd.A.end(), std::nan(""));
        std::fill(pd.B.begin(), pd.B.end(), std::nan(""));
        std::fill(pf.A.begin(), pf.A.end(), std::nanf(""));
        std::fill(pf.B.begin(), pf.B.end(), std::nanf(""));
      }
      for (const FastAlgo *a : kAlgos) {
        run_case(*a, pd, false);
        run_case(*a, pf, false);
        if (HasFatalFailure()) return;
      }
    }
}

// Small integers: every value of the recursion is an exact integer, so the
// result must be the classical product exactly, at 1, 2 and 3 levels (leaves
// of 8), every transpose pair, beta 0, 1 and -3, odd and rectangular sizes,
// aligned (the combine kernel's 16-byte path) and misaligned (its scalar
// path) operands, XN_OPT_PACK_TRANS_B in turn automatic, off and on.
TEST_F(GpuFastGemm, SmallIntegersGiveTheClassicalProductExactly) {
  int turn = 0;
  for (int levels = 1; levels <= 3; ++levels) {
    const int s = 8 << levels;
    // Square; odd everywhere; odd and rectangular; k beyond m and n (C's
    // quadrants cannot hold the pre-additions: spares); thin k.
    const int shapes[][3] = {{s, s, s},
                             {s + 5, s + 3, s + 7},
                             {3 * s + 1, s + 7, 2 * s + 3},
                             {s, s + 2, 4 * s + 1},
                             {2 * s, 2 * s + 1, s}};
    int float_cases = 0;
    for (cublasOperation_t ta : kOps)
      for (cublasOperation_t tb : kOps)
        for (double beta : {0.0, 1.0, -3.0})
          for (int twice = 0; twice < 2; ++twice) {
            // Both sides' temporaries transposed, automatic, non-transposed.
            configure(8, 0, levels, turn % 3 - 1, (turn + levels) % 3 - 1);
            const int *sh = shapes[(turn + 2 * twice) % 5];
            const cublasOperation_t b_op =
                tb == CUBLAS_OP_T && turn % 4 == 1 ? CUBLAS_OP_C : tb;
            const int pad = turn % 3, offset = turn % 4 == 3;
            ++turn;
            for (bool dbl : {true, false}) {
              // A smaller alpha keeps more float cases exact.
              const double alpha = beta == 1 ? -1 : dbl ? 2 : 1;
              const Case c = make_case(sh[0], sh[1], sh[2], ta, b_op, alpha, beta, pad,
                                       Dist::SmallSignedInt, offset);
              for (const FastAlgo *a : kAlgos) {
                ASSERT_EQ(planned<double>(*a, c.m, c.n, c.k), levels);
                if (dbl) {
                  Problem<double> p = make_problem<double>(c);
                  run_case(*a, p, true);
                } else if (exact_for<float>(*a, levels, c)) {
                  Problem<float> p = make_problem<float>(c);
                  run_case(*a, p, true);
                  ++float_cases;
                }
                if (HasFatalFailure()) return;
              }
            }
          }
    EXPECT_GE(float_cases, 24) << "levels " << levels;
  }
}

// At equal depth the GPU and the CPU backend (the same schedules over
// OpenBLAS leaves) agree within the bound each has against the exact value,
// and exactly on small integers.
TEST_F(GpuFastGemm, AgreesWithTheCpuBackendAtEqualDepth) {
  const double scalars[][2] = {{0.5, 2}, {1, 0}, {-1.5, -0.5}};
  int turn = 0;
  for (int levels = 1; levels <= 3; ++levels) {
    configure(16, 0, levels);
    for (const FastAlgo *a : kAlgos)
      for (bool integers : {false, true}) {
        const double *ab = scalars[turn % 3];
        const Case c = make_case(161, 135, 199, kOps[turn % 2], kOps[(turn / 2) % 2],
                                 integers ? std::round(ab[0] + 1) : ab[0],
                                 integers ? std::round(ab[1]) : ab[1], turn % 3,
                                 integers ? Dist::SmallSignedInt : Dist::UniformPm1);
        ++turn;
        auto compare = [&](auto tag) {
          using T = decltype(tag);
          if (integers && !exact_for<T>(*a, levels, c)) return;
          Problem<T> p = make_problem<T>(c);
          std::vector<T> gpu, cpu = p.C0;
          execute(*a, p, kHost, &gpu);
          if (HasFatalFailure()) return;
          const std::string what = std::string(a->name) + " " + p.describe() +
                                   " levels=" + std::to_string(levels);
          EXPECT_EQ(last_levels(), levels) << what;
          xn::Options opt;
          opt.normal_b_temps = -1;  // as the handle
          int ran = -1;
          ASSERT_EQ(xn::cpu_recursive_gemm<T>(
                        a->algorithm(), p.ta, p.tb, c.m, c.n, c.k, T(c.alpha), p.A.data(),
                        p.lda, p.B.data(), p.ldb, T(c.beta), cpu.data(), p.ldc, opt,
                        levels, xn::CpuLeaf::OpenBlas, nullptr, nullptr, &ran),
                    xn::Status::Ok)
              << what;
          ASSERT_EQ(ran, levels) << what;
          for (int j = 0; j < c.n; ++j)
            for (int i = 0; i < p.ldc; ++i) {
              const std::size_t e = std::size_t(i + j * p.ldc);
              if (i >= c.m || integers) {
                ASSERT_EQ(gpu[e], cpu[e]) << "at " << i << "," << j << " " << what;
                continue;
              }
              ASSERT_LE(std::fabs(double(gpu[e]) - double(cpu[e])),
                        2 * allowed_error(*a, levels, p, i, j))
                  << "at " << i << "," << j << " GPU " << gpu[e] << " CPU " << cpu[e]
                  << " " << what;
            }
          if (integers) check_exact(p, gpu, what);
        };
        compare(double{});
        compare(float{});
        if (HasFatalFailure()) return;
      }
  }
}

// CUBLAS_POINTER_MODE_DEVICE: beta unknown on the host (the top level runs
// the accumulating table), device beta = 0 never reads C (NaN there), a
// device alpha = 0 gives beta C, and k = 0 scales C by the device beta.
TEST_F(GpuFastGemm, DevicePointerModeForAlphaAndBeta) {
  configure(16);
  const Exec dev{true, nullptr, false};
  for (const FastAlgo *a : kAlgos) {
    for (double beta : {0.0, 1.0, -0.5}) {
      Problem<double> pd = make_problem<double>(
          make_case(97, 66, 80, CUBLAS_OP_N, CUBLAS_OP_N, 1.25, beta, 1));
      Problem<float> pf = make_problem<float>(make_case(
          66, 97, 80, CUBLAS_OP_T, CUBLAS_OP_T, 1.25, beta, 0, Dist::Uniform01));
      run_case(*a, pd, false, dev);
      run_case(*a, pf, false, dev);
      if (HasFatalFailure()) return;
    }
    for (double beta : {0.0, 2.0}) {
      Problem<double> p = make_problem<double>(
          make_case(90, 70, 80, CUBLAS_OP_T, CUBLAS_OP_N, 0, beta, 2));
      run_case(*a, p, false, dev);  // alpha only known on the device: recurses
      Problem<float> q = make_problem<float>(
          make_case(33, 17, 0, CUBLAS_OP_N, CUBLAS_OP_T, 1, beta == 0 ? 0 : 0.5, 1));
      run_case(*a, q, false, dev);
      if (HasFatalFailure()) return;
    }
    // Integers: exact through the device-beta path of the combine kernel.
    for (double beta : {0.0, -3.0}) {
      Problem<double> p = make_problem<double>(make_case(
          131, 67, 99, CUBLAS_OP_N, CUBLAS_OP_C, 2, beta, 1, Dist::SmallSignedInt));
      run_case(*a, p, true, dev);
      if (HasFatalFailure()) return;
    }
  }
}

// Inputs copied on a non-blocking stream right before the call and the
// result copied back on it, only that stream synchronised: a call that ran
// anywhere else would race with the copies.
template <class T>
void stream_case(cublasHandle_t h, const FastAlgo &a, int n, cudaStream_t s) {
  Problem<T> p = make_problem<T>(
      make_case(n, n, n, CUBLAS_OP_N, CUBLAS_OP_N, 1, 0, 0, Dist::SmallSignedInt));
  const std::vector<double> &ref = p.integer_product();
  const std::size_t elems = std::size_t(n) * n, bytes = elems * sizeof(T);
  T *host = nullptr;
  XN_CUDA_OK(cudaMallocHost(&host, 3 * bytes));
  std::copy(p.A.begin(), p.A.end(), host);
  std::copy(p.B.begin(), p.B.end(), host + elems);
  DeviceBuffer<T> dA(elems), dB(elems), dC(elems);
  XN_CUBLAS_OK(cublasSetStream(h, s));
  const T one = 1, zero = 0;
  int bad = -1;
  for (int rep = 0; rep < 3 && bad < 0; ++rep) {
    XN_CUDA_OK(cudaMemsetAsync(dC.get(), 0xff, bytes, s));  // NaN
    XN_CUDA_OK(cudaMemcpyAsync(dA.get(), host, bytes, cudaMemcpyHostToDevice, s));
    XN_CUDA_OK(cudaMemcpyAsync(dB.get(), host + elems, bytes, cudaMemcpyHostToDevice, s));
    XN_CUBLAS_OK(fast_gemm(a, h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA.get(), n,
                           dB.get(), n, &zero, dC.get(), n));
    XN_CUDA_OK(
        cudaMemcpyAsync(host + 2 * elems, dC.get(), bytes, cudaMemcpyDeviceToHost, s));
    XN_CUDA_OK(cudaStreamSynchronize(s));
    for (std::size_t e = 0; e < elems && bad < 0; ++e)
      if (double(host[2 * elems + e]) != ref[e]) bad = int(e);
  }
  XN_CUBLAS_OK(cublasSetStream(h, nullptr));
  int levels = -1;
  xnGetLastLevels(h, &levels);
  cudaFreeHost(host);
  EXPECT_EQ(bad, -1) << a.name << " " << type_name<T>() << " first wrong entry; "
                     << p.describe();
  EXPECT_GT(levels, 0) << a.name;
}

TEST_F(GpuFastGemm, NonDefaultStreamIsUsedInOrder) {
  ScopedStream s(h_);
  ASSERT_NE(s.get(), nullptr);
  // Three levels in double; two in float keep the integers exact.
  configure(48, 0, 6);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_STRASSEN_LEAF_S, 96), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_WINOGRAD_LEAF_S, 96), CUBLAS_STATUS_SUCCESS);
  for (const FastAlgo *a : kAlgos) {
    stream_case<double>(h_, *a, 384, s.get());
    stream_case<float>(h_, *a, 384, s.get());
    if (HasFatalFailure()) return;
  }
}

// Calls alternate between two streams without synchronising, each one larger
// than the last so that the owned workspace grows (and the old one is freed)
// while the previous call may still run on the other stream: the handle
// must order every call after the last one. All results exact.
TEST_F(GpuFastGemm, SwitchingStreamsOnOneHandleKeepsTheWorkspaceOrdered) {
  ScopedStream s1(h_), s2(h_);
  ASSERT_TRUE(s1.get() && s2.get());
  const Case cases[] = {
      make_case(200, 180, 190, CUBLAS_OP_N, CUBLAS_OP_N, 1, 0, 0, Dist::SmallSignedInt),
      make_case(260, 250, 270, CUBLAS_OP_T, CUBLAS_OP_N, 2, -3, 1, Dist::SmallSignedInt),
      make_case(300, 280, 290, CUBLAS_OP_N, CUBLAS_OP_T, -1, 1, 0, Dist::SmallSignedInt),
      make_case(330, 310, 320, CUBLAS_OP_T, CUBLAS_OP_T, 1, 0, 2, Dist::SmallSignedInt),
      make_case(200, 180, 190, CUBLAS_OP_N, CUBLAS_OP_N, 2, -1, 0, Dist::SmallSignedInt)};
  constexpr int kCalls = 5;
  for (const FastAlgo *a : kAlgos)
    for (int round = 0; round < 2; ++round) {
      reset(32);  // no workspace yet: the calls grow it
      std::vector<Problem<double>> p;
      std::vector<DeviceProblem<double>> d(kCalls);
      for (int i = 0; i < kCalls; ++i) {
        p.push_back(make_problem<double>(cases[i]));
        d[i].upload(p[i]);
      }
      for (int i = 0; i < kCalls; ++i) {
        XN_CUBLAS_OK(cublasSetStream(h_, (i + round) % 2 ? s2.get() : s1.get()));
        XN_CUBLAS_OK(d[i].launch(h_, *a, p[i], kHost));
      }
      XN_CUBLAS_OK(cublasSetStream(h_, nullptr));
      XN_CUDA_OK(cudaStreamSynchronize(s1.get()));
      XN_CUDA_OK(cudaStreamSynchronize(s2.get()));
      for (int i = 0; i < kCalls; ++i) {
        check_exact(
            p[i], d[i].result(),
            std::string(a->name) + " call " + std::to_string(i) + " " + p[i].describe());
        if (HasFatalFailure()) return;
      }
    }
}

// The same cublasStatus_t as cublasSgemm/cublasDgemm for every bad argument
// (asked of cuBLAS itself on the device), C untouched.
TEST_F(GpuFastGemm, BadArgumentsGiveCublasStatusAndLeaveCUntouched) {
  const int m = 8, n = 6, k = 7;
  DeviceBuffer<double> dA(64 * 64), dB(64 * 64), dC(64 * 64);
  std::vector<double> pattern(64 * 64);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = double(i) * 0.5;
  pattern[3] = std::nan("");
  struct Bad {
    cublasOperation_t ta, tb;
    int m, n, k, lda, ldb, ldc;
  };
  const Bad cases[] = {
      {cublasOperation_t(7), CUBLAS_OP_N, m, n, k, m, k, m},
      {CUBLAS_OP_N, cublasOperation_t(-1), m, n, k, m, k, m},
      {CUBLAS_OP_CONJG, CUBLAS_OP_N, m, n, k, m, k, m},
      {CUBLAS_OP_N, CUBLAS_OP_CONJG, m, n, k, m, k, m},
      {CUBLAS_OP_N, CUBLAS_OP_N, -1, n, k, m, k, m},
      {CUBLAS_OP_N, CUBLAS_OP_N, m, -1, k, m, k, m},
      {CUBLAS_OP_N, CUBLAS_OP_N, m, n, -1, m, k, m},
      {CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, m - 1, k, m},
      {CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, k - 1, k, m},
      {CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, m, k - 1, m},
      {CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, m, n - 1, m},
      {CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, m, k, m - 1},
      {CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 0, k, m},
      {CUBLAS_OP_N, CUBLAS_OP_N, 0, n, k, 0, k, 0},
      {CUBLAS_OP_N, CUBLAS_OP_N, m, n, 0, m, 0, m},
      {CUBLAS_OP_C, CUBLAS_OP_C, m, n, k, k, n, m},  // valid: C means T
      {CUBLAS_OP_N, CUBLAS_OP_N, 0, 0, 0, 1, 1, 1},  // valid, empty
  };
  const double one = 1, zero = 0;
  const float fone = 1, fzero = 0;
  float *fA = reinterpret_cast<float *>(dA.get()),
        *fB = reinterpret_cast<float *>(dB.get()),
        *fC = reinterpret_cast<float *>(dC.get());
  for (const FastAlgo *a : kAlgos)
    for (const Bad &b : cases) {
      const std::string what =
          std::string(a->name) + " ta=" + std::to_string(b.ta) +
          " tb=" + std::to_string(b.tb) + " m=" + std::to_string(b.m) +
          " n=" + std::to_string(b.n) + " k=" + std::to_string(b.k) +
          " lda=" + std::to_string(b.lda) + " ldb=" + std::to_string(b.ldb) +
          " ldc=" + std::to_string(b.ldc);
      dC.upload(pattern);
      const cublasStatus_t want =
          cublasDgemm(h_, b.ta, b.tb, b.m, b.n, b.k, &one, dA.get(), b.lda, dB.get(),
                      b.ldb, &zero, dC.get(), b.ldc);
      XN_CUDA_OK(cudaDeviceSynchronize());
      dC.upload(pattern);
      const cublasStatus_t got =
          fast_gemm(*a, h_, b.ta, b.tb, b.m, b.n, b.k, &one, dA.get(), b.lda, dB.get(),
                    b.ldb, &zero, dC.get(), b.ldc);
      XN_CUDA_OK(cudaDeviceSynchronize());
      EXPECT_EQ(got, want) << "double " << what;
      if (got != CUBLAS_STATUS_SUCCESS) {
        EXPECT_TRUE(same_bits(dC.download(), pattern)) << "double " << what;
      }
      const cublasStatus_t fwant = cublasSgemm(h_, b.ta, b.tb, b.m, b.n, b.k, &fone, fA,
                                               b.lda, fB, b.ldb, &fzero, fC, b.ldc);
      XN_CUDA_OK(cudaDeviceSynchronize());
      dC.upload(pattern);
      const cublasStatus_t fgot = fast_gemm(*a, h_, b.ta, b.tb, b.m, b.n, b.k, &fone, fA,
                                            b.lda, fB, b.ldb, &fzero, fC, b.ldc);
      XN_CUDA_OK(cudaDeviceSynchronize());
      EXPECT_EQ(fgot, fwant) << "float " << what;
      if (fgot != CUBLAS_STATUS_SUCCESS) {
        EXPECT_TRUE(same_bits(dC.download(), pattern)) << "float " << what;
      }
    }
  for (const FastAlgo *a : kAlgos) {
    EXPECT_EQ(fast_gemm(*a, nullptr, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA.get(), m,
                        dB.get(), k, &zero, dC.get(), m),
              CUBLAS_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(fast_gemm(*a, nullptr, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &fone, fA, m, fB,
                        k, &fzero, fC, m),
              CUBLAS_STATUS_NOT_INITIALIZED);
  }
}

// The workspace query: the planned layout's bytes (op(B) transposed with T
// stored normal may add the packed quadrant); for square n within the
// header's 2n^2/3 with any beta (beta != 0 in halves); what an owned workspace holds
// after a call; a supplied one too small for the planned depth runs fewer
// levels; XN_OPT_WORKSPACE_LIMIT caps an owned one, 0 giving cuBLAS bit for
// bit. Every call exact on integers.
TEST_F(GpuFastGemm, WorkspaceQueryHeldSuppliedTooSmallAndLimited) {
  const int m = 193, n = 190, k = 200;  // three levels at leaf 24
  for (const FastAlgo *a : kAlgos) {
    const std::string name = a->name;
    reset(24);
    for (cublasOperation_t ta : kOps)
      for (cublasOperation_t tb : kOps) {
        const Case c = make_case(m, n, k, ta, tb, 1, 1);
        const bool at = ta != CUBLAS_OP_N, bt = tb != CUBLAS_OP_N;
        for (bool dbl : {true, false}) {
          const int levels =
              dbl ? planned<double>(*a, m, n, k) : planned<float>(*a, m, n, k);
          ASSERT_EQ(levels, 3) << name;
          const size_t zero =
              dbl ? query<double>(*a, c, true) : query<float>(*a, c, true);
          const size_t any =
              dbl ? query<double>(*a, c, false) : query<float>(*a, c, false);
          const xn::TempOrientation o = xn::temp_orientation(-1, -1, dbl, at, bt);
          const size_t size = dbl ? sizeof(double) : sizeof(float);
          EXPECT_EQ(zero, size * size_t(xn::call_workspace_elems(a->algorithm(), false, m,
                                                                 n, k, 3, o.a_layout, bt,
                                                                 o.t_normal)))
              << name << " " << op_name(ta) << op_name(tb) << " dbl=" << dbl;
          EXPECT_EQ(
              any, size * size_t(xn::call_workspace_elems(a->algorithm(), true, m, n, k,
                                                          3, o.a_layout, bt, o.t_normal)))
              << name << " " << op_name(ta) << op_name(tb) << " dbl=" << dbl;
        }
      }
    {  // The header's bounds, square NN at three levels.
      const int sq = 256;
      reset(32);
      const Case c = make_case(sq, sq, sq, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1);
      ASSERT_EQ(planned<double>(*a, sq, sq, sq), 3);
      // Square: beta = 0 within 2 n^2 / 3 (two temporaries a level); beta
      // != 0 too, as two column halves (three temporaries at each half's top
      // level, plan.h's choose_split), and never above beta = 0's.
      EXPECT_LE(query<double>(*a, c, false), query<double>(*a, c, true)) << name;
      EXPECT_LE(query<double>(*a, c, true), size_t(2) * sq * sq / 3 * sizeof(double))
          << name;
      EXPECT_GE(query<double>(*a, c, false), size_t(sq) * sq / 2 * sizeof(double))
          << name << ": a half's top level alone holds n^2 / 2";
      size_t bytes = 1;
      EXPECT_EQ(xnGetFastGemmWorkspaceSize(h_, a->id, 'd', CUBLAS_OP_N, CUBLAS_OP_N, 0,
                                           sq, sq, 1, &bytes),
                CUBLAS_STATUS_SUCCESS);
      EXPECT_EQ(bytes, 0u) << name << ": no recursion, no workspace";
    }
    // Bad query arguments.
    size_t bytes = 0;
    EXPECT_EQ(xnGetFastGemmWorkspaceSize(h_, a->id, 'z', CUBLAS_OP_N, CUBLAS_OP_N, m, n,
                                         k, 1, &bytes),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(xnGetFastGemmWorkspaceSize(h_, xnFastGemm_t(5), 'd', CUBLAS_OP_N,
                                         CUBLAS_OP_N, m, n, k, 1, &bytes),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(xnGetFastGemmWorkspaceSize(h_, a->id, 'd', CUBLAS_OP_N, CUBLAS_OP_N, -1, n,
                                         k, 1, &bytes),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(xnGetFastGemmWorkspaceSize(h_, a->id, 'd', cublasOperation_t(9),
                                         CUBLAS_OP_N, m, n, k, 1, &bytes),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(xnGetFastGemmWorkspaceSize(h_, a->id, 'd', CUBLAS_OP_N, CUBLAS_OP_N, m, n,
                                         k, 1, nullptr),
              CUBLAS_STATUS_INVALID_VALUE);

    // Owned: after one call from no workspace, the handle holds the query's
    // bytes for that beta (device scalars: beta unknown, as beta != 0); the
    // same call again allocates nothing more.
    struct Owned {
      double beta;
      bool dev;
      cublasOperation_t tb;
    };
    for (const Owned &o : {Owned{0, false, CUBLAS_OP_N}, Owned{-3, false, CUBLAS_OP_N},
                           Owned{0, true, CUBLAS_OP_N}, Owned{0, false, CUBLAS_OP_T},
                           Owned{1, false, CUBLAS_OP_T}}) {
      reset(24);
      const Case c =
          make_case(m, n, k, CUBLAS_OP_N, o.tb, 2, o.beta, 1, Dist::SmallSignedInt);
      const size_t want = query<double>(*a, c, !o.dev && o.beta == 0);
      Problem<double> p = make_problem<double>(c);
      const Exec e{o.dev, nullptr, false};
      run_case(*a, p, true, e);
      EXPECT_EQ(held(), want) << name << " " << p.describe() << " dev=" << o.dev;
      run_case(*a, p, true, e);
      EXPECT_EQ(held(), want) << name << " again";
      if (HasFatalFailure()) return;
    }

    // Supplied, poisoned with NaN: the queried size runs the planned depth;
    // two levels' worth runs two; less than one level's runs cuBLAS.
    reset(24);
    const Case c =
        make_case(m, n, k, CUBLAS_OP_N, CUBLAS_OP_N, 2, -3, 0, Dist::SmallSignedInt);
    const size_t any = query<double>(*a, c, false);
    const size_t two =
        sizeof(double) * size_t(xn::call_workspace_elems(a->algorithm(), true, m, n, k, 2,
                                                         false, false, false));
    ASSERT_LT(two, any);
    DeviceBuffer<char> ws(any);
    XN_CUDA_OK(cudaMemset(ws.get(), 0xff, any));
    for (const auto &sl : {std::make_pair(any, 3), std::make_pair(two, 2),
                           std::make_pair(size_t(256), 0)}) {
      XN_CUBLAS_OK(xnSetWorkspace(h_, ws.get(), sl.first));
      Problem<double> p = make_problem<double>(c);
      run_case(*a, p, true, kHost, sl.second);
      EXPECT_EQ(held(), sl.first) << name;
      if (HasFatalFailure()) break;
    }
    XN_CUBLAS_OK(xnSetWorkspace(h_, nullptr, 0));  // before `ws` is freed
    if (HasFatalFailure()) return;

    // Owned under a limit: two levels' worth runs two levels.
    reset(24);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_WORKSPACE_LIMIT, std::int64_t(two)),
              CUBLAS_STATUS_SUCCESS);
    {
      Problem<double> p = make_problem<double>(c);
      run_case(*a, p, true, kHost, 2);
      EXPECT_EQ(held(), two) << name;
    }
    // A limit of 0: no recursion, cuBLAS's own result bit for bit.
    reset(24);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_WORKSPACE_LIMIT, 0), CUBLAS_STATUS_SUCCESS);
    for (bool dbl : {true, false}) {
      const Case g = make_case(m, n, k, CUBLAS_OP_T, CUBLAS_OP_N, 0.75, 0.5, 1);
      auto bitwise = [&](auto tag) {
        using T = decltype(tag);
        Problem<T> p = make_problem<T>(g);
        std::vector<T> ours, ref;
        execute(*a, p, kHost, &ours);
        EXPECT_EQ(last_levels(), 0) << name;
        execute(*a, p, Exec{false, nullptr, true}, &ref);
        EXPECT_TRUE(same_bits(ours, ref)) << name << " " << p.describe();
      };
      if (dbl)
        bitwise(double{});
      else
        bitwise(float{});
      EXPECT_EQ(held(), 0u) << name;
    }
    if (HasFatalFailure()) return;
  }
}

// Below the crossover (m n k < min_size^3) the call is cublas?gemm itself,
// bit for bit, whatever the leaf; at the crossover it recurses.
TEST_F(GpuFastGemm, BelowTheCrossoverTheCallIsCublasBitForBit) {
  int turn = 0;
  for (const FastAlgo *a : kAlgos) {
    configure(8, 100000);
    for (cublasOperation_t ta : kOps)
      for (cublasOperation_t tb : kOps)
        for (bool dev : {false, true}) {
          const double beta = turn % 2 ? 0.0 : -0.5;
          const Case c = make_case(150, 141, 133, ta, tb, 1.5, beta, turn % 3);
          ++turn;
          auto bitwise = [&](auto tag) {
            using T = decltype(tag);
            Problem<T> p = make_problem<T>(c);
            std::vector<T> ours, ref;
            execute(*a, p, Exec{dev, nullptr, false}, &ours);
            EXPECT_EQ(last_levels(), 0) << a->name << " " << p.describe();
            execute(*a, p, Exec{dev, nullptr, true}, &ref);
            EXPECT_TRUE(same_bits(ours, ref)) << a->name << " " << p.describe();
          };
          bitwise(double{});
          bitwise(float{});
          if (HasFatalFailure()) return;
        }
    // The crossover itself: 64^3 recurses under 64, not under 65.
    for (std::int64_t min_size : {64, 65}) {
      configure(16, min_size);
      Problem<double> p = make_problem<double>(
          make_case(64, 64, 64, CUBLAS_OP_N, CUBLAS_OP_N, 1, 0, 0, Dist::SmallSignedInt));
      run_case(*a, p, true, kHost, min_size == 64 ? 2 : 0);
      if (HasFatalFailure()) return;
    }
  }
}

// XN_OPT_PACK_TRANS_B and XN_OPT_PACK_TRANS_A on, off and automatic with
// op(B) transposed (T or C; N now and then, for the A side alone) and op(A)
// N or T, both routines and precisions, odd sizes, padded leading dimensions, both
// pointer modes, on a non-default stream, in a workspace of exactly the
// queried size filled with NaN (a read of an unwritten temporary shows up):
// every entry within the bound of the oracle and within the two bounds
// together of cuBLAS's own product.
TEST_F(GpuFastGemm, PackTransOptionsOnAndOffAgreeWithCublasAndTheOracle) {
  ScopedStream stream(h_);
  ASSERT_NE(stream.get(), nullptr);
  struct Shape {
    int m, n, k;
  };
  const double scalars[][2] = {{1, 0}, {0.75, 1}, {1.25, -0.5}};
  int turn = 0;
  for (const Shape &sh : {Shape{131, 129, 133}, Shape{67, 70, 69}, Shape{200, 33, 150},
                          Shape{128, 128, 128}})
    for (cublasOperation_t ta : kOps) {
      const double *ab = scalars[turn % 3];
      const bool dev = turn % 2 == 1;
      const Case c = make_case(sh.m, sh.n, sh.k, ta,
                               turn % 4 == 3   ? CUBLAS_OP_C
                               : turn % 4 == 1 ? CUBLAS_OP_N
                                               : CUBLAS_OP_T,
                               ab[0], ab[1], 1 + turn % 3,
                               turn % 3 ? Dist::UniformPm1 : Dist::Uniform01);
      ++turn;
      auto check = [&](auto tag) {
        using T = decltype(tag);
        Problem<T> p = make_problem<T>(c);
        std::vector<T> ref;
        execute(kStrassen, p, Exec{dev, stream.get(), true}, &ref);  // cuBLAS
        if (HasFatalFailure()) return;
        for (const FastAlgo *a : kAlgos)
          for (std::int64_t option : {1, 0, -1}) {
            reset(16, 0, 6, option, option);
            const int levels = planned<T>(*a, c.m, c.n, c.k);
            ASSERT_GT(levels, 0);
            const bool beta_zero = !dev && c.beta == 0;
            const xn::TempOrientation o =
                xn::temp_orientation(option, option, is_double<T>(), p.ta, p.tb);
            const size_t need = sizeof(T) * size_t(xn::call_workspace_elems(
                                                a->algorithm(), !beta_zero, c.m, c.n, c.k,
                                                levels, o.a_layout, p.tb, o.t_normal));
            const std::string what = std::string(a->name) + " " + p.describe() +
                                     " option=" + std::to_string(option) +
                                     (dev ? " device scalars" : "");
            ASSERT_EQ(query<T>(*a, c, beta_zero), need) << what;
            DeviceBuffer<char> ws(need);
            XN_CUDA_OK(cudaMemset(ws.get(), 0xff, need));  // all-ones bytes: NaN
            XN_CUBLAS_OK(xnSetWorkspace(h_, ws.get(), need));
            std::vector<T> C;
            execute(*a, p, Exec{dev, stream.get(), false}, &C);
            const int ran = last_levels();
            XN_CUBLAS_OK(xnSetWorkspace(h_, nullptr, 0));  // before `ws` is freed
            if (HasFatalFailure()) return;
            EXPECT_EQ(ran, levels) << what;
            check_oracle(*a, levels, p, C, what);
            for (int j = 0; j < c.n; ++j)
              for (int i = 0; i < c.m; ++i) {
                const std::size_t e = std::size_t(i + j * p.ldc);
                ASSERT_LE(
                    std::fabs(double(C[e]) - double(ref[e])),
                    allowed_error(*a, levels, p, i, j) + allowed_error(*a, 0, p, i, j))
                    << "cuBLAS at " << i << "," << j << " got " << C[e] << " cuBLAS "
                    << ref[e] << " " << what;
              }
            if (HasFatalFailure()) return;
          }
      };
      check(double{});
      check(float{});
      if (HasFatalFailure()) return;
    }
}

// NaN and Inf in A, B (or C with beta != 0) reach every entry the classical
// product makes non-finite (the header allows them to spread further).
TEST_F(GpuFastGemm, NanAndInfInInputsReachEveryEntryTheClassicalProductMakesNonFinite) {
  configure(16);
  const int n = 96;  // two levels
  auto trials = [&](auto tag) {
    using T = decltype(tag);
    const T inf = std::numeric_limits<T>::infinity(),
            nan = std::numeric_limits<T>::quiet_NaN();
    const T values[] = {inf, -inf, nan};
    for (const FastAlgo *a : kAlgos)
      for (int trial = 0; trial < 8; ++trial) {
        const double beta = trial >= 6 ? 1.0 : 0.0;
        Problem<T> p = make_problem<T>(make_case(n, n - 2, n + 2, kOps[trial % 2],
                                                 kOps[(trial / 2) % 2], 1, beta, 1,
                                                 Dist::Uniform01));
        std::mt19937_64 rng(p.seed + 1);
        const int i = int(rng() % n), q = int(rng() % n), j = int(rng() % (n - 2));
        const T v = values[trial % 3];
        // The stored position of op(A)(i, q) or op(B)(q, j).
        if (trial % 2 == 0)
          p.A[std::size_t(p.ta ? q + i * p.lda : i + q * p.lda)] = v;
        else
          p.B[std::size_t(p.tb ? j + q * p.ldb : q + j * p.ldb)] = v;
        if (beta != 0) p.C0[std::size_t(i + j * p.ldc)] = values[(trial + 1) % 3];
        std::vector<T> C;
        execute(*a, p, kHost, &C);
        if (HasFatalFailure()) return;
        EXPECT_EQ(last_levels(), 2);
        int nonfinite = 0;
        for (int jj = 0; jj < p.c.n; ++jj)
          for (int ii = 0; ii < p.c.m; ++ii) {
            double s = beta == 0 ? 0.0 : beta * double(p.c0(ii, jj));
            for (int qq = 0; qq < p.c.k; ++qq)
              s += double(p.a(ii, qq)) * double(p.b(qq, jj));
            if (std::isfinite(s)) continue;
            ++nonfinite;
            ASSERT_FALSE(std::isfinite(double(C[std::size_t(ii + jj * p.ldc)])))
                << a->name << " lost a non-finite value at " << ii << "," << jj << " "
                << p.describe();
          }
        EXPECT_GT(nonfinite, 0) << a->name << " " << p.describe();
      }
  };
  trials(double{});
  trials(float{});
}

// Several host threads, each with its own handle and stream, run both
// routines in both precisions at once: every result exact.
template <class T>
bool thread_call(cublasHandle_t h, cudaStream_t s, const FastAlgo &a, int rep,
                 std::string *why) {
  Problem<T> p = make_problem<T>(make_case(288, 287, 289, kOps[rep % 2],
                                           kOps[(rep / 2) % 2], rep % 3 ? 1 : -1,
                                           rep % 2 ? -3 : 0, 1, Dist::SmallSignedInt));
  const std::vector<double> &ref = p.integer_product();
  T *d = nullptr;
  const std::size_t na = p.A.size(), nb = p.B.size(), nc = p.C0.size();
  if (cudaMalloc(&d, sizeof(T) * (na + nb + nc)) != cudaSuccess) {
    *why = "cudaMalloc failed";
    return false;
  }
  const T alpha = T(p.c.alpha), beta = T(p.c.beta);
  std::vector<T> C(nc);
  bool ok = cudaMemcpyAsync(d, p.A.data(), sizeof(T) * na, cudaMemcpyHostToDevice, s) ==
                cudaSuccess &&
            cudaMemcpyAsync(d + na, p.B.data(), sizeof(T) * nb, cudaMemcpyHostToDevice,
                            s) == cudaSuccess &&
            cudaMemcpyAsync(d + na + nb, p.C0.data(), sizeof(T) * nc,
                            cudaMemcpyHostToDevice, s) == cudaSuccess &&
            fast_gemm(a, h, p.c.ta, p.c.tb, p.c.m, p.c.n, p.c.k, &alpha, d, p.lda, d + na,
                      p.ldb, &beta, d + na + nb, p.ldc) == CUBLAS_STATUS_SUCCESS &&
            cudaMemcpyAsync(C.data(), d + na + nb, sizeof(T) * nc, cudaMemcpyDeviceToHost,
                            s) == cudaSuccess &&
            cudaStreamSynchronize(s) == cudaSuccess;
  cudaFree(d);
  int levels = -1;
  xnGetLastLevels(h, &levels);
  if (!ok || levels <= 0) {
    *why = std::string(a.name) + " call failed or did not recurse; " + p.describe();
    return false;
  }
  for (int j = 0; j < p.c.n; ++j)
    for (int i = 0; i < p.ldc; ++i) {
      const double want = i < p.c.m ? ref[std::size_t(i + j * p.c.m)] : kCSentinel;
      if (double(C[std::size_t(i + j * p.ldc)]) != want) {
        *why = std::string(a.name) + " wrong at " + std::to_string(i) + "," +
               std::to_string(j) + "; " + p.describe();
        return false;
      }
    }
  return true;
}

TEST(GpuFastGemmThreads, SeparateHandlesOnSeveralHostThreadsRunCorrectly) {
  XN_REQUIRE_GPU();
  constexpr int kThreads = 4;
  std::vector<int> failures(kThreads, 0);  // each thread writes its own slot
  std::vector<std::string> why(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([t, &failures, &why] {
      cublasHandle_t h = nullptr;
      cudaStream_t s = nullptr;
      if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
          cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
          cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS) {
        failures[t] = -1;
        why[t] = "no handle or stream";
      } else {
        // Three levels in double, two in float (integers stay exact).
        for (const FastAlgo *a : kAlgos) {
          xnSetOption(h, a->leaf(true), 32);
          xnSetOption(h, a->leaf(false), 64);
          xnSetOption(h, a->min_size(true), 0);
          xnSetOption(h, a->min_size(false), 0);
        }
        for (int rep = 0; rep < 4; ++rep) {
          const FastAlgo &a = *kAlgos[(t + rep) % 2];
          const bool ok = (t + rep / 2) % 2 ? thread_call<float>(h, s, a, rep, &why[t])
                                            : thread_call<double>(h, s, a, rep, &why[t]);
          if (!ok) ++failures[t];
        }
      }
      if (h) {
        xnRelease(h);
        cublasDestroy(h);
      }
      if (s) cudaStreamDestroy(s);
    });
  for (std::thread &th : pool) th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t << ": " << why[t];
}

// Sets process-wide options (and XN_DEVICE) for one test and puts them back.
class DefaultsGuard {
 public:
  ~DefaultsGuard() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
      xnSetOption(nullptr, it->first, it->second);
    if (had_device_)
      setenv("XN_DEVICE", device_.c_str(), 1);
    else
      unsetenv("XN_DEVICE");
  }
  bool set(xnOption_t o, std::int64_t v) {
    std::int64_t old = 0;
    if (xnGetOption(nullptr, o, &old) != CUBLAS_STATUS_SUCCESS) return false;
    saved_.emplace_back(o, old);
    return xnSetOption(nullptr, o, v) == CUBLAS_STATUS_SUCCESS;
  }
  void device(const char *v) {  // nullptr: unset (automatic)
    if (v)
      setenv("XN_DEVICE", v, 1);
    else
      unsetenv("XN_DEVICE");
  }

 private:
  std::vector<std::pair<xnOption_t, std::int64_t>> saved_;
  const char *env_ = std::getenv("XN_DEVICE");
  bool had_device_ = env_ != nullptr;
  std::string device_ = env_ ? env_ : "";
};

// The host names on the GPU: the Fortran ones under XN_DEVICE=gpu, the CBLAS
// ones (both layouts) with XN_DEVICE unset and a product of at least
// 2 * 256^3 flops (host_api.cpp's kGpuMinFlops); host memory with padded
// leading dimensions, every entry within the bound of the oracle at the
// depth the process-wide options plan.
template <class T>
void check_host(const FastAlgo &a, Problem<T> &p, const std::string &what,
                const std::vector<T> &C) {
  const int levels = xn::planned_levels(
      a.algorithm(), xn::default_options(), xn::device_depth_model(true).get(),
      is_double<T>(), p.c.beta != 0, p.c.m, p.c.n, p.c.k);
  ASSERT_GT(levels, 0) << what;
  check_oracle(a, levels, p, C, what + " " + p.describe());
}

TEST(GpuFastGemmHostApi, FortranAndCblasNamesOnTheGpuMatchTheOracle) {
  XN_REQUIRE_GPU();
  DefaultsGuard guard;
  for (const FastAlgo *a : kAlgos)
    for (bool d : {false, true}) {
      ASSERT_TRUE(guard.set(a->leaf(d), 32));
      ASSERT_TRUE(guard.set(a->min_size(d), 0));
    }
  guard.device("gpu");
  {
    Problem<double> p = make_problem<double>(
        make_case(150, 130, 140, CUBLAS_OP_N, CUBLAS_OP_T, 1.5, 0.25, 2));
    std::vector<double> C = p.C0;
    const int m = 150, n = 130, k = 140;
    const double alpha = 1.5, beta = 0.25;
    dstgemm_("N", "T", &m, &n, &k, &alpha, p.A.data(), &p.lda, p.B.data(), &p.ldb, &beta,
             C.data(), &p.ldc);
    check_host(kStrassen, p, "dstgemm_", C);
  }
  {
    Problem<float> p = make_problem<float>(
        make_case(140, 150, 130, CUBLAS_OP_T, CUBLAS_OP_N, -1, 0, 1, Dist::Uniform01));
    std::vector<float> C = p.C0;
    const int m = 140, n = 150, k = 130;
    const float alpha = -1, beta = 0;
    swigemm_("T", "N", &m, &n, &k, &alpha, p.A.data(), &p.lda, p.B.data(), &p.ldb, &beta,
             C.data(), &p.ldc);
    check_host(kWinograd, p, "swigemm_", C);
  }
  guard.device(nullptr);  // automatic: large enough for the GPU
  {
    // Row-major C (m x n) = op(A) op(B) is column-major C^T = op(B)^T op(A)^T:
    // the problem is built column-major with m and n, A and B swapped.
    const int m = 260, n = 258, k = 256;
    Problem<double> p =
        make_problem<double>(make_case(n, m, k, CUBLAS_OP_T, CUBLAS_OP_N, 0.5, -1, 1));
    std::vector<double> C = p.C0;
    cblas_dwigemm(XnRowMajor, XnNoTrans, XnTrans, m, n, k, 0.5, p.B.data(), p.ldb,
                  p.A.data(), p.lda, -1, C.data(), p.ldc);
    check_host(kWinograd, p, "cblas_dwigemm row-major", C);
  }
  {
    const int m = 258, n = 260, k = 257;
    Problem<float> p =
        make_problem<float>(make_case(m, n, k, CUBLAS_OP_T, CUBLAS_OP_T, 1, 1, 1));
    std::vector<float> C = p.C0;
    cblas_sstgemm(XnColMajor, XnTrans, XnTrans, m, n, k, 1, p.A.data(), p.lda, p.B.data(),
                  p.ldb, 1, C.data(), p.ldc);
    check_host(kStrassen, p, "cblas_sstgemm", C);
  }
}

// One small case of every path, for the compute-sanitizer runs (memcheck on
// all of them, racecheck on the first two): both routines and precisions,
// two levels at leaf 8, exact on integers.
class GpuFastGemmSanitized : public GpuFastGemm {};

// The 16-byte path (aligned, sizes multiples of 8) and the scalar path
// (padding, an offset), the beta = 0 and accumulating tables, T stored
// normal with the packed quadrant, spares (k beyond m and n), thin k.
TEST_F(GpuFastGemmSanitized, ExactEveryStepKindSmall) {
  const Case cases[] = {
      make_case(32, 32, 32, CUBLAS_OP_N, CUBLAS_OP_N, 2, 0, 0, Dist::SmallSignedInt),
      make_case(37, 35, 33, CUBLAS_OP_T, CUBLAS_OP_T, -1, -3, 0, Dist::SmallSignedInt),
      make_case(33, 34, 70, CUBLAS_OP_T, CUBLAS_OP_N, 1, 1, 1, Dist::SmallSignedInt),
      make_case(40, 36, 24, CUBLAS_OP_N, CUBLAS_OP_C, 2, 0, 1, Dist::SmallSignedInt, 1)};
  int turn = 0;
  for (const Case &c : cases) {
    configure(8, 0, 2, turn++ % 2);  // T stored normal and packed, or not
    for (const FastAlgo *a : kAlgos) {
      Problem<double> pd = make_problem<double>(c);
      Problem<float> pf = make_problem<float>(c);
      run_case(*a, pd, true, kHost, 2);
      run_case(*a, pf, true, kHost, 2);
      if (HasFatalFailure()) return;
    }
  }
}

// Device scalars (device beta 0 with NaN in C, device beta != 0, device
// alpha 0), the scaling kernel (k = 0 with a device beta, host alpha = 0), a
// non-default stream, and two streams in turn without synchronising.
TEST_F(GpuFastGemmSanitized, DeviceScalarsAndStreamsSmall) {
  ScopedStream s1(h_), s2(h_);
  ASSERT_TRUE(s1.get() && s2.get());
  configure(8, 0, 2);
  const Exec dev{true, s1.get(), false};
  for (const FastAlgo *a : kAlgos) {
    for (double beta : {0.0, -3.0}) {
      Problem<double> pd = make_problem<double>(make_case(
          35, 37, 33, CUBLAS_OP_N, CUBLAS_OP_T, 2, beta, 1, Dist::SmallSignedInt));
      Problem<float> pf = make_problem<float>(make_case(
          37, 33, 35, CUBLAS_OP_T, CUBLAS_OP_N, 1, beta, 0, Dist::SmallSignedInt));
      run_case(*a, pd, true, dev);
      run_case(*a, pf, true, dev);
      if (HasFatalFailure()) return;
    }
    Problem<double> zero_alpha = make_problem<double>(
        make_case(33, 34, 35, CUBLAS_OP_N, CUBLAS_OP_N, 0, -3, 0, Dist::SmallSignedInt));
    run_case(*a, zero_alpha, true, dev);
    Problem<float> no_k = make_problem<float>(
        make_case(33, 20, 0, CUBLAS_OP_N, CUBLAS_OP_N, 1, -3, 1, Dist::SmallSignedInt));
    run_case(*a, no_k, true, dev);
    Problem<double> host_zero_alpha = make_problem<double>(
        make_case(33, 20, 35, CUBLAS_OP_N, CUBLAS_OP_N, 0, 0, 1, Dist::SmallSignedInt));
    run_case(*a, host_zero_alpha, true, Exec{false, s2.get(), false});
    if (HasFatalFailure()) return;
    // Two streams, no synchronisation between the calls; the second one
    // grows the workspace.
    reset(8, 0, 2);
    Problem<double> p[2] = {
        make_problem<double>(make_case(32, 33, 34, CUBLAS_OP_N, CUBLAS_OP_N, 1, 0, 0,
                                       Dist::SmallSignedInt)),
        make_problem<double>(make_case(48, 47, 49, CUBLAS_OP_T, CUBLAS_OP_N, 2, 1, 1,
                                       Dist::SmallSignedInt))};
    DeviceProblem<double> d[2];
    for (int i = 0; i < 2; ++i) {
      d[i].upload(p[i]);
      XN_CUBLAS_OK(cublasSetStream(h_, i ? s2.get() : s1.get()));
      XN_CUBLAS_OK(d[i].launch(h_, *a, p[i], kHost));
    }
    XN_CUBLAS_OK(cublasSetStream(h_, nullptr));
    XN_CUDA_OK(cudaStreamSynchronize(s1.get()));
    XN_CUDA_OK(cudaStreamSynchronize(s2.get()));
    for (int i = 0; i < 2; ++i)
      check_exact(p[i], d[i].result(), std::string(a->name) + " " + p[i].describe());
    if (HasFatalFailure()) return;
  }
}

// A supplied workspace for one level when two are planned (poisoned with
// NaN): one level, exact.
TEST_F(GpuFastGemmSanitized, SuppliedWorkspaceTooSmallSmall) {
  const Case c =
      make_case(37, 36, 35, CUBLAS_OP_N, CUBLAS_OP_T, 2, -3, 1, Dist::SmallSignedInt);
  for (const FastAlgo *a : kAlgos) {
    reset(8, 0, 2, 1);
    const size_t one = sizeof(double) *
                       size_t(xn::call_workspace_elems(a->algorithm(), true, c.m, c.n,
                                                       c.k, 1, false, true, true, false));
    DeviceBuffer<char> ws(one);
    XN_CUDA_OK(cudaMemset(ws.get(), 0xff, one));
    XN_CUBLAS_OK(xnSetWorkspace(h_, ws.get(), one));
    Problem<double> p = make_problem<double>(c);
    run_case(*a, p, true, kHost, 1);
    XN_CUBLAS_OK(xnSetWorkspace(h_, nullptr, 0));  // before `ws` is freed
    if (HasFatalFailure()) return;
  }
}

}  // namespace
