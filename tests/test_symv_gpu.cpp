// test_symv_gpu.cpp - xnSsymv/xnDsymv on the GPU (label gpu, skipped without a
// device).
//
// Every call reads A from a buffer with lda > n (mostly) whose unused
// triangle and padding rows are NaN, x and y with their gaps (|inc| > 1) set
// to NaN and to a marker, and y NaN where beta = 0; alpha = 0 makes A and x
// entirely NaN. A single NaN in the result is therefore a forbidden read, and
// a changed gap a forbidden write. Small integer inputs make every partial
// sum exact, so results are compared exactly with a naive SYMV on the host;
// random inputs are compared with a double-double reference within a stated
// componentwise bound, which cublas?symv meets as well. Also: both triangles,
// every increment sign, alpha/beta with 0 and 1, device pointer mode, a
// non-default stream, a supplied NaN-filled workspace (with a guard zone past
// its end), bitwise reproducibility, every compiled kernel variant, cuBLAS's
// statuses for bad arguments and allocation failure.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cuda/handle_state.h"
#include "core/symv_variants.h"
#include "support/dd_reference.h"
#include "support/gpu_support.h"
#include "support/test_support.h"
#include "xngemm.h"

namespace {

using xn_test::DeviceBuffer;
using xn_test::fresh_seed;

// ------------------------------------------------------------ typed calls

template <class T>
struct Symv;
template <>
struct Symv<float> {
  static constexpr char kPrec = 's';
  static cublasStatus_t xn(cublasHandle_t h, cublasFillMode_t uplo, int n,
                           const float *alpha, const float *A, int lda, const float *x,
                           int incx, const float *beta, float *y, int incy) {
    return xnSsymv(h, uplo, n, alpha, A, lda, x, incx, beta, y, incy);
  }
  static cublasStatus_t cublas(cublasHandle_t h, cublasFillMode_t uplo, int n,
                               const float *alpha, const float *A, int lda,
                               const float *x, int incx, const float *beta, float *y,
                               int incy) {
    return cublasSsymv(h, uplo, n, alpha, A, lda, x, incx, beta, y, incy);
  }
};
template <>
struct Symv<double> {
  static constexpr char kPrec = 'd';
  static cublasStatus_t xn(cublasHandle_t h, cublasFillMode_t uplo, int n,
                           const double *alpha, const double *A, int lda, const double *x,
                           int incx, const double *beta, double *y, int incy) {
    return xnDsymv(h, uplo, n, alpha, A, lda, x, incx, beta, y, incy);
  }
  static cublasStatus_t cublas(cublasHandle_t h, cublasFillMode_t uplo, int n,
                               const double *alpha, const double *A, int lda,
                               const double *x, int incx, const double *beta, double *y,
                               int incy) {
    return cublasDsymv(h, uplo, n, alpha, A, lda, x, incx, beta, y, incy);
  }
};

// ------------------------------------------------------------ problems

enum class Inputs { SmallInt, Random };
// Workspace: the library's own, or one supplied through xnSetSymvWorkspace of
// exactly the size xnGetSymvWorkspaceSize reports, filled with a byte
// pattern before the call (0xff: NaN in float and double).
enum class Ws { Owned, Supplied };

struct Spec {
  int n = 0, lda = 1;
  bool lower = true;
  int incx = 1, incy = 1;
  double alpha = 1, beta = 0;
  bool device_scalars = false;
  Ws ws = Ws::Owned;
  unsigned char ws_fill = 0xff;
};

std::string describe(const Spec &s) {
  std::ostringstream o;
  o << "n=" << s.n << " lda=" << s.lda << (s.lower ? " lower" : " upper")
    << " incx=" << s.incx << " incy=" << s.incy << " alpha=" << s.alpha
    << " beta=" << s.beta << (s.device_scalars ? " device scalars" : " host scalars")
    << (s.ws == Ws::Supplied ? " supplied workspace" : " own workspace");
  return o.str();
}

std::size_t vec_len(int n, int inc) {
  return n > 0 ? std::size_t(n - 1) * std::size_t(std::abs(inc)) + 1 : 1;
}
// Element i of a BLAS vector (reference BLAS: counted from the last element
// in memory for inc < 0), independent of the library's own indexing.
std::size_t vpos(int i, int n, int inc) {
  return inc > 0 ? std::size_t(i) * std::size_t(inc)
                 : std::size_t(n - 1 - i) * std::size_t(-inc);
}
bool stored(bool lower, int i, int j) { return lower ? i >= j : i <= j; }

template <class T>
T nan_v() {
  return std::numeric_limits<T>::quiet_NaN();
}
// y's gaps hold this; they must come back unchanged.
template <class T>
T gap_marker() {
  return T(-1234.5);
}

template <class T>
struct Problem {
  Spec s;
  std::vector<T> a, x, y;  // host images of the device buffers
};

template <class T>
T draw(Inputs kind, std::mt19937_64 &rng) {
  if (kind == Inputs::SmallInt) return T(int(rng() % 9) - 4);
  return T(2 * xn_test::uniform01<T>(rng) - 1);  // exact in T, in [-1, 1)
}

template <class T>
Problem<T> make_problem(const Spec &s, Inputs kind, std::mt19937_64 &rng) {
  Problem<T> p;
  p.s = s;
  const bool alpha_zero = s.alpha == 0;
  p.a.assign(std::size_t(s.lda) * std::size_t(std::max(s.n, 1)), nan_v<T>());
  if (!alpha_zero)
    for (int j = 0; j < s.n; ++j)
      for (int i = 0; i < s.n; ++i)
        if (stored(s.lower, i, j))
          p.a[std::size_t(i) + std::size_t(j) * s.lda] = draw<T>(kind, rng);
  p.x.assign(vec_len(s.n, s.incx), nan_v<T>());
  if (!alpha_zero)
    for (int i = 0; i < s.n; ++i) p.x[vpos(i, s.n, s.incx)] = draw<T>(kind, rng);
  p.y.assign(vec_len(s.n, s.incy), gap_marker<T>());
  for (int i = 0; i < s.n; ++i)
    p.y[vpos(i, s.n, s.incy)] = s.beta == 0 ? nan_v<T>() : draw<T>(kind, rng);
  return p;
}

template <class T>
T sym(const Problem<T> &p, int i, int j) {
  return stored(p.s.lower, i, j) ? p.a[std::size_t(i) + std::size_t(j) * p.s.lda]
                                 : p.a[std::size_t(j) + std::size_t(i) * p.s.lda];
}

// Naive SYMV in double, BLAS semantics (alpha = 0 references neither A nor x;
// beta = 0 does not reference y; alpha = 0 and beta = 1 returns at once).
// Exact for the small-integer inputs, then exactly representable in T.
template <class T>
std::vector<T> naive(const Problem<T> &p) {
  const Spec &s = p.s;
  std::vector<T> y = p.y;
  if (s.n == 0 || (s.alpha == 0 && s.beta == 1)) return y;
  for (int i = 0; i < s.n; ++i) {
    double acc = 0;
    if (s.alpha != 0)
      for (int j = 0; j < s.n; ++j)
        acc += double(sym(p, i, j)) * double(p.x[vpos(j, s.n, s.incx)]);
    T &yi = y[vpos(i, s.n, s.incy)];
    const double r = s.beta == 0 ? s.alpha * acc : s.alpha * acc + s.beta * double(yi);
    yi = T(r);
  }
  return y;
}

// Double-double reference y_ref and the scale of the componentwise bound,
// |alpha| sum_j |A_ij| |x_j| + |beta| |y_i|.
template <class T>
void dd_reference(const Problem<T> &p, std::vector<double> &ref,
                  std::vector<double> &scale) {
  const Spec &s = p.s;
  ref.assign(std::size_t(s.n), 0);
  scale.assign(std::size_t(s.n), 0);
  for (int i = 0; i < s.n; ++i) {
    xn::DD acc{0, 0};
    double mag = 0;
    for (int j = 0; j < s.n; ++j) {
      const double aij = sym(p, i, j), xj = p.x[vpos(j, s.n, s.incx)];
      acc = xn::dd_add(acc, xn::two_prod(aij, xj));
      mag += std::fabs(aij) * std::fabs(xj);
    }
    // alpha * acc + beta * y in double-double.
    xn::DD r = xn::two_prod(s.alpha, acc.hi);
    r = xn::dd_add(r, xn::DD{s.alpha * acc.lo, 0});
    const double yi = double(p.y[vpos(i, s.n, s.incy)]);
    if (s.beta != 0) r = xn::dd_add(r, xn::two_prod(s.beta, yi));
    ref[std::size_t(i)] = xn::dd_to_double(r);
    scale[std::size_t(i)] =
        std::fabs(s.alpha) * mag + (s.beta != 0 ? std::fabs(s.beta * yi) : 0);
  }
}

// ------------------------------------------------------------ fixture

class GpuSymv : public xn_test::CublasHandleFixture<> {
 protected:
  // Runs xn?symv (or cublas?symv) on the problem on `stream`; returns y's
  // memory (gaps included). With a supplied workspace, checks that the guard
  // zone past its end is unchanged.
  template <class T>
  std::vector<T> run(const Problem<T> &p, bool use_cublas = false,
                     cudaStream_t stream = nullptr) {
    const Spec &s = p.s;
    DeviceBuffer<T> dA, dx, dy, dS(2);
    dA.upload(p.a);
    dx.upload(p.x);
    dy.upload(p.y);
    dS.upload({T(s.alpha), T(s.beta)});
    EXPECT_EQ(cublasSetStream(h_, stream), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasSetPointerMode(h_, s.device_scalars ? CUBLAS_POINTER_MODE_DEVICE
                                                        : CUBLAS_POINTER_MODE_HOST),
              CUBLAS_STATUS_SUCCESS);
    const cublasFillMode_t uplo =
        s.lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const T ha = T(s.alpha), hb = T(s.beta);
    const T *al = s.device_scalars ? dS.get() : &ha;
    const T *be = s.device_scalars ? dS.get() + 1 : &hb;

    const std::size_t kGuard = 256;
    std::size_t ws_bytes = 0;
    DeviceBuffer<unsigned char> dW;
    const bool supplied = s.ws == Ws::Supplied && !use_cublas;
    if (supplied) {
      EXPECT_EQ(xnGetSymvWorkspaceSize(h_, Symv<T>::kPrec, uplo, s.n, &ws_bytes),
                CUBLAS_STATUS_SUCCESS);
      dW.resize(ws_bytes + kGuard);
      EXPECT_EQ(cudaMemset(dW.get(), s.ws_fill, ws_bytes + kGuard), cudaSuccess);
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(xnSetSymvWorkspace(h_, ws_bytes ? dW.get() : nullptr, ws_bytes),
                CUBLAS_STATUS_SUCCESS);
    }
    const cublasStatus_t st =
        use_cublas ? Symv<T>::cublas(h_, uplo, s.n, al, dA.get(), s.lda, dx.get(), s.incx,
                                     be, dy.get(), s.incy)
                   : Symv<T>::xn(h_, uplo, s.n, al, dA.get(), s.lda, dx.get(), s.incx, be,
                                 dy.get(), s.incy);
    EXPECT_EQ(st, CUBLAS_STATUS_SUCCESS) << describe(s);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    if (supplied) {
      EXPECT_EQ(xnSetSymvWorkspace(h_, nullptr, 0), CUBLAS_STATUS_SUCCESS);
      const std::vector<unsigned char> w = dW.download();
      for (std::size_t i = ws_bytes; i < w.size(); ++i)
        if (w[i] != s.ws_fill) {
          ADD_FAILURE() << describe(s) << ": written past the reported workspace size ("
                        << ws_bytes << " bytes) at byte " << i;
          break;
        }
    }
    cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST);
    cublasSetStream(h_, nullptr);
    return dy.download();
  }

  // Exact comparison with the naive SYMV: elements equal (NaN where the
  // naive result is NaN, nowhere else), gaps unchanged bit for bit.
  template <class T>
  bool check_exact(const Problem<T> &p, const std::vector<T> &got,
                   const std::string &what) {
    const std::vector<T> want = naive(p);
    const Spec &s = p.s;
    std::vector<bool> element(got.size(), false);
    for (int i = 0; i < s.n; ++i) element[vpos(i, s.n, s.incy)] = true;
    int bad = 0;
    for (std::size_t m = 0; m < got.size() && m < want.size(); ++m) {
      const bool ok =
          element[m] ? (got[m] == want[m] || (std::isnan(got[m]) && std::isnan(want[m])))
                     : std::memcmp(&got[m], &want[m], sizeof(T)) == 0;
      if (!ok && bad++ < 5)
        ADD_FAILURE() << what << " " << describe(s) << ": y memory " << m
                      << (element[m] ? " (element)" : " (gap)") << " got " << got[m]
                      << " want " << want[m];
    }
    EXPECT_EQ(got.size(), want.size());
    return bad == 0 && got.size() == want.size();
  }

  template <class T>
  bool run_exact(const Spec &s, std::mt19937_64 &rng, const std::string &what = "") {
    const Problem<T> p = make_problem<T>(s, Inputs::SmallInt, rng);
    const std::vector<T> got = run(p);
    return check_exact(p, got, what + (sizeof(T) == 8 ? " double" : " float"));
  }

  // Random inputs in [-1, 1): |y - y_ref| <= 2 (n + 2) u (|alpha| |A| |x| +
  // |beta| |y|) componentwise - the classical bound gamma_{n+2} for any
  // order of summation, with a factor 2 of slack - with y_ref in
  // double-double. cublas?symv is held to the same bound.
  template <class T>
  bool check_accuracy(const Spec &s, std::mt19937_64 &rng) {
    const Problem<T> p = make_problem<T>(s, Inputs::Random, rng);
    std::vector<double> ref, scale;
    dd_reference(p, ref, scale);
    const double u = std::ldexp(1.0, -std::numeric_limits<T>::digits);
    int bad = 0;
    for (bool use_cublas : {false, true}) {
      const std::vector<T> got = run(p, use_cublas);
      for (int i = 0; i < s.n; ++i) {
        const double g = double(got[vpos(i, s.n, s.incy)]);
        const double bound = 2.0 * (s.n + 2) * u * scale[std::size_t(i)];
        const double err = std::fabs(g - ref[std::size_t(i)]);
        if (!(err <= bound) && bad++ < 5)
          ADD_FAILURE() << (use_cublas ? "cublas" : "xn")
                        << (sizeof(T) == 8 ? "Dsymv " : "Ssymv ") << describe(s) << ": y["
                        << i << "] = " << g << ", reference " << ref[std::size_t(i)]
                        << ", error " << err << " > bound " << bound;
      }
    }
    return bad == 0;
  }

};

const int kIncs[] = {1, -1, 3, -2};
const double kAlphas[] = {1, -1, 0.5, 3, 0};
const double kBetas[] = {0, 1, -1, 2, 0.5};

// A spec cycling through increments, scalars, pointer modes, padding and
// workspace kinds with k.
Spec cycled(int n, bool lower, int k) {
  Spec s;
  s.n = n;
  s.lda = std::max(1, n) + (k % 4 == 0 ? 0 : 1 + 2 * (k % 3));
  s.lower = lower;
  s.incx = kIncs[k % 4];
  s.incy = kIncs[(k / 4) % 4];
  s.alpha = kAlphas[k % 5];
  s.beta = kBetas[(k / 5) % 5];
  s.device_scalars = k % 2 == 1;
  s.ws = k % 3 == 0 ? Ws::Supplied : Ws::Owned;
  return s;
}

// ------------------------------------------------------------ exact results

TEST_F(GpuSymv, SmallSizesExact) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  int k = 0;
  for (int n : {0, 1, 2, 3, 5, 9, 31, 32, 33, 63, 64, 65, 127, 128, 129})
    for (bool lower : {true, false})
      for (int rep = 0; rep < 3; ++rep, ++k) {
        Spec s = cycled(n, lower, k);
        if (rep == 0) {  // the plain call: unit increments, alpha 1, beta 0
          s.incx = s.incy = 1;
          s.alpha = 1;
          s.beta = 0;
        }
        if (!run_exact<double>(s, rng) || !run_exact<float>(s, rng)) return;
      }
}

TEST_F(GpuSymv, MediumSizesExact) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  int k = 7;
  for (int n : {255, 256, 257, 500, 511, 512, 513, 1000, 4097})
    for (bool lower : {true, false}) {
      Spec s = cycled(n, lower, k++);
      if (s.alpha == 0) s.alpha = 2;  // zero alpha has its own tests
      if (!run_exact<double>(s, rng) || !run_exact<float>(s, rng)) return;
    }
}

TEST_F(GpuSymv, ConsecutiveSizeSweep) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  for (int n = 60; n <= 200; ++n)
    for (bool lower : {true, false}) {
      Spec s;
      s.n = n;
      s.lda = n + n % 3;
      s.lower = lower;
      s.alpha = 1;
      s.beta = n % 2 ? 0.0 : -1.0;
      if (!run_exact<double>(s, rng)) return;
      s.incx = -1;
      s.incy = 2;
      if (!run_exact<float>(s, rng)) return;
    }
}

TEST_F(GpuSymv, EveryIncrementSignCombination) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  for (int incx : kIncs)
    for (int incy : kIncs)
      for (bool lower : {true, false}) {
        Spec s;
        s.n = 130;  // two full 64-blocks and a partial one
        s.lda = 133;
        s.lower = lower;
        s.incx = incx;
        s.incy = incy;
        s.alpha = -1;
        s.beta = incx > 0 ? 2.0 : 0.0;
        if (!run_exact<double>(s, rng) || !run_exact<float>(s, rng)) return;
      }
}

// alpha and beta from {1, -1, 0.5, 3, 0} x {0, 1, -1, 2, 0.5} in both pointer
// modes. alpha = 0: A and x are all NaN (not to be read); beta = 0: y is NaN.
TEST_F(GpuSymv, AlphaBetaIncludingZeroAndOne) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  int k = 0;
  for (double alpha : kAlphas)
    for (double beta : kBetas)
      for (bool dev : {false, true}) {
        Spec s;
        s.n = 97;
        s.lda = 100;
        s.lower = k % 2 == 0;
        s.incx = kIncs[k % 4];
        s.incy = kIncs[(k / 4) % 4];
        s.alpha = alpha;
        s.beta = beta;
        s.device_scalars = dev;
        s.ws = k % 3 == 0 ? Ws::Supplied : Ws::Owned;
        ++k;
        if (!run_exact<double>(s, rng) || !run_exact<float>(s, rng)) return;
      }
}

// BLAS quick return: host alpha = 0 and beta = 1 leave y exactly as it is
// (NaN and -0 included); alpha = 0, beta = 0 writes zeros over NaN.
TEST_F(GpuSymv, ZeroAlphaQuickReturnAndZeroFill) {
  const int n = 70;
  std::vector<double> y(n);
  for (int i = 0; i < n; ++i) y[std::size_t(i)] = i % 3 == 0 ? nan_v<double>() : -0.0;
  DeviceBuffer<double> dA(std::size_t(n) * n), dx(n), dy;
  XN_CUDA_OK(cudaMemset(dA.get(), 0xff, sizeof(double) * n * n));
  XN_CUDA_OK(cudaMemset(dx.get(), 0xff, sizeof(double) * n));
  dy.upload(y);
  const double zero = 0, one = 1;
  XN_CUBLAS_OK(xnDsymv(h_, CUBLAS_FILL_MODE_UPPER, n, &zero, dA.get(), n, dx.get(), 1,
                       &one, dy.get(), 1));
  EXPECT_TRUE(xn_test::same_bits(dy.download(), y));
  XN_CUBLAS_OK(xnDsymv(h_, CUBLAS_FILL_MODE_LOWER, n, &zero, dA.get(), n, dx.get(), 1,
                       &zero, dy.get(), 1));
  for (double v : dy.download()) EXPECT_EQ(v, 0.0);
}

// An Inf stored where the edge threads' loads are redirected to (the last
// row for lower storage, the last column for upper; also the last diagonal
// element), with x[n-1] != 0, or x[n-1] = Inf: the results must be the naive
// product's (+-Inf where it has +-Inf, NaN only where it has NaN). A
// redirected copy that were multiplied by a zero x instead of being replaced
// by zero would turn Inf * 0 into NaN where the naive product has +-Inf.
// Also x[j] = Inf at a random j: a diagonal tile that multiplied its
// unstored (zero) half, or its diagonal in the column sums, by x would give
// NaN there (n = 128, 256: inner diagonal tiles in double, clipped ones in
// single, whose lda = n + 2 leaves the columns unaligned).
TEST_F(GpuSymv, InfAtRedirectTargetsMatchesNaive) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const double inf = std::numeric_limits<double>::infinity();
  for (int n : {33, 65, 100, 128, 130, 256, 1000})
    for (bool lower : {true, false})
      for (int which = 0; which < 5; ++which) {
        Spec s;
        s.n = n;
        s.lda = n + 2;
        s.lower = lower;
        s.incx = which >= 3 ? -1 : 1;
        s.alpha = 1;
        s.beta = 1;
        Problem<double> p = make_problem<double>(s, Inputs::SmallInt, rng);
        const std::size_t xlast = vpos(n - 1, n, s.incx);
        if (which < 3) {
          // which 0: a random column; 1: the last one before the last block
          // of 64; 2: the diagonal corner.
          const int j0 = which == 0   ? int(rng() % std::uint64_t(n - 1))
                         : which == 1 ? std::max(0, (n - 1) / 64 * 64 - 1)
                                      : n - 1;
          const std::size_t at = lower ? std::size_t(n - 1) + std::size_t(j0) * s.lda
                                       : std::size_t(j0) + std::size_t(n - 1) * s.lda;
          p.a[at] = inf;
          p.x[xlast] = 3;
        } else if (which == 3) {
          p.x[xlast] = inf;
        } else {
          p.x[vpos(int(rng() % std::uint64_t(n)), n, s.incx)] = inf;
        }
        if (!check_exact(p, run(p), "Inf at a redirect target")) return;
        Problem<float> pf;
        pf.s = p.s;
        pf.a.assign(p.a.begin(), p.a.end());
        pf.x.assign(p.x.begin(), p.x.end());
        pf.y.assign(p.y.begin(), p.y.end());
        if (!check_exact(pf, run(pf), "Inf at a redirect target, float")) return;
      }
}

// A, x and y one element past a 16-byte boundary, with leading dimensions
// that keep or break 16-byte aligned columns: the tiles then go through the
// element-by-element copies and x is packed even with incx = 1.
TEST_F(GpuSymv, MisalignedPointersAndLeadingDimensions) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  for (int n : {64, 200, 700})
    for (bool lower : {true, false})
      for (int shift = 0; shift < 4; ++shift) {
        Spec s;
        s.n = n;
        s.lda = n + (shift & 1 ? 1 : 0);
        s.lower = lower;
        s.alpha = -1;
        s.beta = 2;
        const Problem<double> p = make_problem<double>(s, Inputs::SmallInt, rng);
        Problem<float> pf;
        pf.s = s;
        pf.a.assign(p.a.begin(), p.a.end());
        pf.x.assign(p.x.begin(), p.x.end());
        pf.y.assign(p.y.begin(), p.y.end());
        // shift & 2: every pointer one element off its allocation's start.
        const std::size_t off = shift & 2 ? 1 : 0;
        auto go = [&](auto &prob, auto tag) {
          using T = decltype(tag);
          std::vector<T> a(prob.a.size() + off), x(prob.x.size() + off),
              y(prob.y.size() + off);
          std::copy(prob.a.begin(), prob.a.end(), a.begin() + off);
          std::copy(prob.x.begin(), prob.x.end(), x.begin() + off);
          std::copy(prob.y.begin(), prob.y.end(), y.begin() + off);
          DeviceBuffer<T> dA, dx, dy;
          dA.upload(a);
          dx.upload(x);
          dy.upload(y);
          const T al = T(s.alpha), be = T(s.beta);
          EXPECT_EQ(
              Symv<T>::xn(h_, lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER, n,
                          &al, dA.get() + off, s.lda, dx.get() + off, 1, &be,
                          dy.get() + off, 1),
              CUBLAS_STATUS_SUCCESS);
          EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          const std::vector<T> all = dy.download();
          return std::vector<T>(all.begin() + std::ptrdiff_t(off), all.end());
        };
        const std::string what = "offset " + std::to_string(off);
        if (!check_exact(p, go(p, 0.0), what)) return;
        if (!check_exact(pf, go(pf, 0.0f), what + " float")) return;
      }
}

// ------------------------------------------------------------ accuracy

TEST_F(GpuSymv, RandomInputsWithinTheBoundLikeCublas) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> scalar(-2, 2);
  int k = 0;
  for (int n : {1, 33, 100, 257, 1000, 2049})
    for (bool lower : {true, false}) {
      Spec s;
      s.n = n;
      s.lda = n + 5;
      s.lower = lower;
      s.incx = kIncs[k % 4];
      s.incy = kIncs[(k + 1) % 4];
      s.device_scalars = k % 2 == 1;
      ++k;
      // Scalars exact in float, so both precisions see the same problem.
      s.alpha = double(float(scalar(rng)));
      s.beta = k % 3 == 0 ? 0.0 : double(float(scalar(rng)));
      if (!check_accuracy<double>(s, rng) || !check_accuracy<float>(s, rng)) return;
    }
}

// ------------------------------------------------------------ reproducibility

// The default path three times on the same inputs with different poison (own
// workspace, supplied workspace full of NaN, supplied workspace full of
// 0x5a bytes; for beta = 0 also a different y poison: NaN, Inf, 7): the
// same bits every time.
TEST_F(GpuSymv, DefaultPathIsBitwiseReproducible) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  for (int n : {257, 1000})
    for (bool lower : {true, false})
      for (double beta : {0.0, 0.75}) {
        Spec s;
        s.n = n;
        s.lda = n + 3;
        s.lower = lower;
        s.incx = lower ? 1 : -2;
        s.incy = lower ? -1 : 1;
        s.alpha = 1.5;
        s.beta = beta;
        Problem<double> p = make_problem<double>(s, Inputs::Random, rng);
        Problem<float> pf;
        pf.s = s;
        pf.a.assign(p.a.begin(), p.a.end());
        pf.x.assign(p.x.begin(), p.x.end());
        pf.y.assign(p.y.begin(), p.y.end());
        std::vector<double> first;
        std::vector<float> first_f;
        const double poison[] = {nan_v<double>(), std::numeric_limits<double>::infinity(),
                                 7};
        for (int rep = 0; rep < 3; ++rep) {
          p.s.ws = pf.s.ws = rep == 0 ? Ws::Owned : Ws::Supplied;
          p.s.ws_fill = pf.s.ws_fill = rep == 1 ? 0xff : 0x5a;
          if (beta == 0)
            for (int i = 0; i < n; ++i) {
              p.y[vpos(i, n, s.incy)] = poison[rep];
              pf.y[vpos(i, n, s.incy)] = float(poison[rep]);
            }
          const std::vector<double> got = run(p);
          const std::vector<float> got_f = run(pf);
          if (rep == 0) {
            first = got;
            first_f = got_f;
            continue;
          }
          EXPECT_TRUE(xn_test::same_bits(got, first)) << describe(p.s) << " rep " << rep;
          EXPECT_TRUE(xn_test::same_bits(got_f, first_f))
              << "float " << describe(p.s) << " rep " << rep;
        }
        if (HasFailure()) return;
      }
}

// ------------------------------------------------------------ variants

// Every compiled variant (the tuned defaults, and the tuning variants in a
// build with XN_BUILD_TUNING; core/symv_variants.h):
// the handle's workspace query follows the variant; exact results with the
// library's workspace and with a supplied one of exactly the reported size
// (NaN-filled, guard zone checked), bit-identical between the two.
class GpuSymvVariants : public GpuSymv {
 protected:
  template <class T>
  bool variant_case(int id, const Spec &base, std::mt19937_64 &rng) {
    const xn::Fill fill = base.lower ? xn::Fill::Lower : xn::Fill::Upper;
    const xn::SymvVariant &v = xn::symv_variant(id, sizeof(T) == 8, base.n, fill);
    std::size_t bytes = 0;
    const cublasFillMode_t uplo =
        base.lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    EXPECT_EQ(xnGetSymvWorkspaceSize(h_, Symv<T>::kPrec, uplo, base.n, &bytes),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(bytes, xn::symv_workspace_elems(v, base.n, fill) * sizeof(T))
        << "variant " << id;
    Spec s = base;
    s.ws = Ws::Owned;
    Problem<T> p = make_problem<T>(s, Inputs::SmallInt, rng);
    const std::vector<T> own = run(p);
    const std::string what =
        "variant " + std::to_string(id) + (sizeof(T) == 8 ? " double" : " float");
    if (!check_exact(p, own, what)) return false;
    p.s.ws = Ws::Supplied;
    const std::vector<T> sup = run(p);
    EXPECT_TRUE(xn_test::same_bits(own, sup)) << what << " " << describe(s);
    return !HasFailure();
  }

  void sweep(std::initializer_list<int> sizes) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(xn_test::describe_seed(seed));
    std::mt19937_64 rng(seed);
    const std::size_t count = xn::symv_compiled_count();
    ASSERT_GE(count, 1u);
    int k = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const int id = xn::symv_compiled_variant(i).id;
      ASSERT_EQ(xnSetOption(h_, XN_OPT_SYMV_VARIANT, id), CUBLAS_STATUS_SUCCESS);
      for (int n : sizes)
        for (bool lower : {true, false}) {
          Spec s;
          s.n = n;
          s.lda = n + 1 + k % 3;
          s.lower = lower;
          s.incx = kIncs[k % 4];
          s.incy = kIncs[(k / 4) % 4];
          s.alpha = k % 2 ? -1.0 : 2.0;
          s.beta = k % 3 ? 0.0 : 0.5;
          s.device_scalars = k % 5 == 0;
          ++k;
          if (!variant_case<double>(id, s, rng) || !variant_case<float>(id, s, rng))
            return;
        }
    }
  }
};

TEST_F(GpuSymvVariants, EveryVariantSmallSizes) { sweep({1, 33, 97, 200, 600}); }

// Orders where every variant's rows split into several chunks (nb = 32 with
// 32-tile chunks needs more than 32 block rows).
TEST_F(GpuSymvVariants, EveryVariantMediumSizes) { sweep({1100, 2100}); }

// Variant 0 is the tuned default: the same bits as naming that variant.
TEST_F(GpuSymv, VariantZeroIsTheDefaultEntry) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  Spec s;
  s.n = 777;
  s.lda = 780;
  s.alpha = 1.25;
  s.beta = -0.5;
  const Problem<double> p = make_problem<double>(s, Inputs::Random, rng);
  Problem<float> pf;
  pf.s = s;
  pf.a.assign(p.a.begin(), p.a.end());
  pf.x.assign(p.x.begin(), p.x.end());
  pf.y.assign(p.y.begin(), p.y.end());
  ASSERT_EQ(xnSetOption(h_, XN_OPT_SYMV_VARIANT, 0), CUBLAS_STATUS_SUCCESS);
  const std::vector<double> d0 = run(p);
  const std::vector<float> f0 = run(pf);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_SYMV_VARIANT,
                        xn::symv_default_variant(
                            true, s.n, s.lower ? xn::Fill::Lower : xn::Fill::Upper)
                            .id),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_TRUE(xn_test::same_bits(run(p), d0));
  ASSERT_EQ(xnSetOption(h_, XN_OPT_SYMV_VARIANT,
                        xn::symv_default_variant(
                            false, s.n, s.lower ? xn::Fill::Lower : xn::Fill::Upper)
                            .id),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_TRUE(xn_test::same_bits(run(pf), f0));
}

// ------------------------------------------------------------ streams

// Inputs copied on a non-blocking stream right before the call (device
// scalars included), the result copied back on it, only that stream
// synchronised: a library working on any other stream would race the copies.
// The sizes grow, so the library's workspace grows on that stream too.
TEST_F(GpuSymv, NonDefaultStreamIsUsedInOrder) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  cudaStream_t st;
  XN_CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  XN_CUBLAS_OK(cublasSetStream(h_, st));
  XN_CUBLAS_OK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_DEVICE));
  int k = 0;
  for (int n : {300, 1000, 2000})
    for (bool lower : {true, false}) {
      Spec s;
      s.n = n;
      s.lda = n + 1;
      s.lower = lower;
      s.incx = k % 2 ? -1 : 1;
      s.incy = k % 2 ? 3 : 1;
      s.alpha = -2;
      s.beta = k % 3 ? 1.0 : 0.0;
      s.device_scalars = true;
      ++k;
      const Problem<double> p = make_problem<double>(s, Inputs::SmallInt, rng);
      const std::size_t na = p.a.size(), nx = p.x.size(), ny = p.y.size();
      double *host = nullptr;
      XN_CUDA_OK(cudaMallocHost(&host, sizeof(double) * (na + nx + ny + 2)));
      std::copy(p.a.begin(), p.a.end(), host);
      std::copy(p.x.begin(), p.x.end(), host + na);
      std::copy(p.y.begin(), p.y.end(), host + na + nx);
      host[na + nx + ny] = s.alpha;
      host[na + nx + ny + 1] = s.beta;
      DeviceBuffer<double> dA(na), dx(nx), dy(ny), dS(2);
      for (int rep = 0; rep < 2; ++rep) {
        XN_CUDA_OK(cudaMemsetAsync(dy.get(), 0xff, sizeof(double) * ny, st));
        XN_CUDA_OK(cudaMemsetAsync(dS.get(), 0xff, sizeof(double) * 2, st));
        XN_CUDA_OK(cudaMemcpyAsync(dA.get(), host, sizeof(double) * na,
                                   cudaMemcpyHostToDevice, st));
        XN_CUDA_OK(cudaMemcpyAsync(dx.get(), host + na, sizeof(double) * nx,
                                   cudaMemcpyHostToDevice, st));
        XN_CUDA_OK(cudaMemcpyAsync(dy.get(), host + na + nx, sizeof(double) * ny,
                                   cudaMemcpyHostToDevice, st));
        XN_CUDA_OK(cudaMemcpyAsync(dS.get(), host + na + nx + ny, sizeof(double) * 2,
                                   cudaMemcpyHostToDevice, st));
        XN_CUBLAS_OK(xnDsymv(h_, lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER,
                             n, dS.get(), dA.get(), s.lda, dx.get(), s.incx, dS.get() + 1,
                             dy.get(), s.incy));
        std::vector<double> got(ny);
        XN_CUDA_OK(cudaMemcpyAsync(host + na + nx, dy.get(), sizeof(double) * ny,
                                   cudaMemcpyDeviceToHost, st));
        XN_CUDA_OK(cudaStreamSynchronize(st));
        std::copy(host + na + nx, host + na + nx + ny, got.begin());
        std::copy(p.y.begin(), p.y.end(), host + na + nx);  // restore the input
        if (!check_exact(p, got, "non-default stream")) break;
      }
      cudaFreeHost(host);
      if (HasFailure()) break;
    }
  cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST);
  cublasSetStream(h_, nullptr);
  cudaStreamDestroy(st);
}

// Calls on two streams of one handle with no synchronisation between them,
// the second needing a larger workspace than the first (the library's
// workspace is replaced while the first call may still run).
TEST_F(GpuSymv, SwitchingStreamsKeepsTheWorkspaceOrdered) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  cudaStream_t s1, s2;
  XN_CUDA_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  XN_CUDA_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  for (int rep = 0; rep < 3; ++rep) {
    xnRelease(h_);  // start from no workspace each time
    Spec a, b;
    a.n = 1500 + rep;
    a.lda = a.n;
    a.alpha = 1;
    b.n = 2500 + rep;
    b.lda = b.n;
    b.lower = false;
    b.alpha = -1;
    b.beta = 1;
    const Problem<double> pa = make_problem<double>(a, Inputs::SmallInt, rng);
    const Problem<double> pb = make_problem<double>(b, Inputs::SmallInt, rng);
    DeviceBuffer<double> dA1, dx1, dy1, dA2, dx2, dy2;
    dA1.upload(pa.a);
    dx1.upload(pa.x);
    dy1.upload(pa.y);
    dA2.upload(pb.a);
    dx2.upload(pb.x);
    dy2.upload(pb.y);
    const double a1 = a.alpha, b1 = a.beta, a2 = b.alpha, b2 = b.beta;
    XN_CUBLAS_OK(cublasSetStream(h_, s1));
    XN_CUBLAS_OK(xnDsymv(h_, CUBLAS_FILL_MODE_LOWER, a.n, &a1, dA1.get(), a.lda,
                         dx1.get(), 1, &b1, dy1.get(), 1));
    XN_CUBLAS_OK(cublasSetStream(h_, s2));
    XN_CUBLAS_OK(xnDsymv(h_, CUBLAS_FILL_MODE_UPPER, b.n, &a2, dA2.get(), b.lda,
                         dx2.get(), 1, &b2, dy2.get(), 1));
    XN_CUDA_OK(cudaStreamSynchronize(s1));
    XN_CUDA_OK(cudaStreamSynchronize(s2));
    XN_CUBLAS_OK(cublasSetStream(h_, nullptr));
    if (!check_exact(pa, dy1.download(), "stream 1") ||
        !check_exact(pb, dy2.download(), "stream 2"))
      break;
  }
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

// ------------------------------------------------------------ errors

// Each bad argument gives cublas?symv's status on the same handle, and y
// (NaN and -0 included) is left as it was.
template <class T>
void bad_arguments_case(cublasHandle_t h) {
  DeviceBuffer<T> dA(64 * 64), dx(64), dy(64);
  std::vector<T> pattern(64);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = T(i) * T(0.5);
  pattern[3] = nan_v<T>();
  pattern[5] = T(-0.0);
  const T one = 1, zero = 0;
  const cublasFillMode_t L = CUBLAS_FILL_MODE_LOWER, U = CUBLAS_FILL_MODE_UPPER;
  struct Bad {
    cublasFillMode_t uplo;
    int n, lda, incx, incy;
  };
  const Bad cases[] = {
      {CUBLAS_FILL_MODE_FULL, 8, 8, 1, 1},
      {cublasFillMode_t(7), 8, 8, 1, 1},
      {cublasFillMode_t(-1), 8, 8, 1, 1},
      {L, -1, 8, 1, 1},
      {U, 8, 7, 1, 1},
      {L, 1, 0, 1, 1},
      {U, 0, 0, 1, 1},
      {L, 8, 8, 0, 1},
      {U, 8, 8, 1, 0},
      {L, 0, 1, 0, 1},
      {U, 0, 1, 1, 0},
      {CUBLAS_FILL_MODE_FULL, -1, 0, 0, 0},
      {L, 0, 1, 1, 1},   // valid, empty
      {U, 0, 1, -1, -2}  // valid, empty
  };
  for (const Bad &b : cases) {
    dy.upload(pattern);
    const cublasStatus_t want = Symv<T>::cublas(
        h, b.uplo, b.n, &one, dA.get(), b.lda, dx.get(), b.incx, &zero, dy.get(), b.incy);
    XN_CUDA_OK(cudaDeviceSynchronize());
    dy.upload(pattern);
    const cublasStatus_t got = Symv<T>::xn(h, b.uplo, b.n, &one, dA.get(), b.lda,
                                           dx.get(), b.incx, &zero, dy.get(), b.incy);
    XN_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_EQ(got, want) << (sizeof(T) == 8 ? "double" : "float")
                         << " uplo=" << int(b.uplo) << " n=" << b.n << " lda=" << b.lda
                         << " incx=" << b.incx << " incy=" << b.incy;
    EXPECT_TRUE(xn_test::same_bits(dy.download(), pattern))
        << "y changed: uplo=" << int(b.uplo) << " n=" << b.n << " lda=" << b.lda;
  }
  EXPECT_EQ(
      Symv<T>::xn(nullptr, L, 8, &one, dA.get(), 8, dx.get(), 1, &zero, dy.get(), 1),
      CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_TRUE(xn_test::same_bits(dy.download(), pattern));
}

TEST_F(GpuSymv, BadArgumentsGiveCublasStatusAndLeaveYUntouched) {
  bad_arguments_case<double>(h_);
  bad_arguments_case<float>(h_);
}

struct FailAllocations {
  FailAllocations() { xn::testing::set_fail_workspace_allocations(true); }
  ~FailAllocations() { xn::testing::set_fail_workspace_allocations(false); }
};

// No workspace to be had (on a handle that has none yet), or a supplied one
// too small: CUBLAS_STATUS_ALLOC_FAILED and y untouched; a host alpha = 0
// needs no workspace and still works; after restoring, the call succeeds.
TEST_F(GpuSymv, AllocationFailureAndTooSmallWorkspaceLeaveYUntouched) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  Spec s;
  s.n = 300;
  s.lda = 301;
  s.alpha = 1;
  s.beta = 0.5;
  const Problem<double> p = make_problem<double>(s, Inputs::SmallInt, rng);
  Problem<float> pf;
  pf.s = s;
  pf.a.assign(p.a.begin(), p.a.end());
  pf.x.assign(p.x.begin(), p.x.end());
  pf.y.assign(p.y.begin(), p.y.end());
  DeviceBuffer<double> dA, dx, dy;
  DeviceBuffer<float> fA, fx, fy;
  dA.upload(p.a);
  dx.upload(p.x);
  dy.upload(p.y);
  fA.upload(pf.a);
  fx.upload(pf.x);
  fy.upload(pf.y);
  const double one = 1, half = 0.5, zero = 0, two = 2;
  const float fone = 1, fhalf = 0.5;
  const cublasFillMode_t L = CUBLAS_FILL_MODE_LOWER;
  {
    FailAllocations fail;
    EXPECT_EQ(xnDsymv(h_, L, s.n, &one, dA.get(), s.lda, dx.get(), 1, &half, dy.get(), 1),
              CUBLAS_STATUS_ALLOC_FAILED);
    EXPECT_EQ(
        xnSsymv(h_, L, s.n, &fone, fA.get(), s.lda, fx.get(), 1, &fhalf, fy.get(), 1),
        CUBLAS_STATUS_ALLOC_FAILED);
    XN_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(xn_test::same_bits(dy.download(), p.y));
    EXPECT_TRUE(xn_test::same_bits(fy.download(), pf.y));
    // alpha = 0 on the host: y = beta y with no workspace at all.
    EXPECT_EQ(xnDsymv(h_, L, s.n, &zero, dA.get(), s.lda, dx.get(), 1, &two, dy.get(), 1),
              CUBLAS_STATUS_SUCCESS);
    const std::vector<double> scaled = dy.download();
    for (std::size_t i = 0; i < scaled.size(); ++i) ASSERT_EQ(scaled[i], 2 * p.y[i]) << i;
    dy.upload(p.y);
  }
  // Restored: the same call succeeds and is right.
  EXPECT_EQ(xnDsymv(h_, L, s.n, &one, dA.get(), s.lda, dx.get(), 1, &half, dy.get(), 1),
            CUBLAS_STATUS_SUCCESS);
  XN_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(check_exact(p, dy.download(), "after restoring allocations"));
  dy.upload(p.y);

  // A supplied workspace 16 bytes short of the query: ALLOC_FAILED, y
  // untouched (its contents, NaN, untouched as well); exactly the query: OK.
  std::size_t bytes = 0;
  ASSERT_EQ(xnGetSymvWorkspaceSize(h_, 'd', L, s.n, &bytes), CUBLAS_STATUS_SUCCESS);
  ASSERT_GE(bytes, 32u);
  DeviceBuffer<unsigned char> dW(bytes);
  XN_CUDA_OK(cudaMemset(dW.get(), 0xff, bytes));
  ASSERT_EQ(xnSetSymvWorkspace(h_, dW.get(), bytes - 16), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(xnDsymv(h_, L, s.n, &one, dA.get(), s.lda, dx.get(), 1, &half, dy.get(), 1),
            CUBLAS_STATUS_ALLOC_FAILED);
  XN_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(xn_test::same_bits(dy.download(), p.y));
  for (unsigned char c : dW.download()) ASSERT_EQ(c, 0xff);
  ASSERT_EQ(xnSetSymvWorkspace(h_, dW.get(), bytes), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(xnDsymv(h_, L, s.n, &one, dA.get(), s.lda, dx.get(), 1, &half, dy.get(), 1),
            CUBLAS_STATUS_SUCCESS);
  XN_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(check_exact(p, dy.download(), "supplied workspace of the queried size"));
  // Back to the library's own workspace.
  ASSERT_EQ(xnSetSymvWorkspace(h_, nullptr, 0), CUBLAS_STATUS_SUCCESS);
  dy.upload(p.y);
  EXPECT_EQ(xnDsymv(h_, L, s.n, &one, dA.get(), s.lda, dx.get(), 1, &half, dy.get(), 1),
            CUBLAS_STATUS_SUCCESS);
  XN_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(check_exact(p, dy.download(), "own workspace again"));
}

// The handle's workspace query: the NULL-handle (process default) answer for
// a new handle, then the handle's variant.
TEST_F(GpuSymv, WorkspaceQueryFollowsTheHandleVariant) {
  for (char prec : {'s', 'd'})
    for (int n : {0, 1, 100, 4097}) {
      std::size_t with_handle = 1, without = 2;
      ASSERT_EQ(xnGetSymvWorkspaceSize(h_, prec, CUBLAS_FILL_MODE_UPPER, n, &with_handle),
                CUBLAS_STATUS_SUCCESS);
      ASSERT_EQ(
          xnGetSymvWorkspaceSize(nullptr, prec, CUBLAS_FILL_MODE_UPPER, n, &without),
          CUBLAS_STATUS_SUCCESS);
      EXPECT_EQ(with_handle, without) << prec << " " << n;
    }
  for (std::size_t i = 0; i < xn::symv_compiled_count(); ++i) {
    const int id = xn::symv_compiled_variant(i).id;
    ASSERT_EQ(xnSetOption(h_, XN_OPT_SYMV_VARIANT, id), CUBLAS_STATUS_SUCCESS);
    std::size_t bytes = 0;
    ASSERT_EQ(xnGetSymvWorkspaceSize(h_, 'd', CUBLAS_FILL_MODE_LOWER, 1000, &bytes),
              CUBLAS_STATUS_SUCCESS);
    const xn::Fill lower = xn::Fill::Lower;
    EXPECT_EQ(bytes, xn::symv_workspace_elems(xn::symv_variant(id, true, 1000, lower),
                                              1000, lower) *
                         8);
  }
}

}  // namespace
