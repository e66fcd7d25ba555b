// test_exblas_gpu.cpp - xnExdgemv and xnExddot on the GPU (label gpu, skipped
// without a device): every value bit for bit the exact IEEE one (the oracle
// of xnExdgemm's contract, signed zeros included) over all transposes,
// positive, negative and (dot) zero increments, padded lda, alpha and beta
// including 0 (y poisoned with NaN, never read), both pointer modes and a
// non-default stream; long products in several chunks whose outputs take
// every path of the finish (zeros, Inf, NaN, the exact fallback); the
// elements of y between its increments untouched; and bad arguments (INVALID_VALUE, y untouched).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/exdgemm_inputs.h"
#include "support/gpu_support.h"
#include "support/ieee_oracle.h"
#include "xngemm.h"

namespace {

using xn_test::DeviceBuffer;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr auto &same_bits = xn_test::ex_same_bits;

// Element i of a BLAS vector of n elements with increment inc.
std::size_t at(int i, int n, int inc) {
  return std::size_t(inc >= 0 ? std::int64_t(i) * inc : std::int64_t(n - 1 - i) * -inc);
}
std::size_t storage(int n, int inc) {
  return n <= 0 ? 1 : std::size_t(std::int64_t(n - 1) * std::abs(inc) + 1);
}

// (u - 0.5) exp(phi randn), with every 13th entry rescaled by 2^+-60 so
// that plain double sums lose digits (the exact value must still come out).
std::vector<double> draw(std::size_t count, double phi, std::mt19937_64 &rng) {
  std::normal_distribution<double> randn(0.0, 1.0);
  std::vector<double> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = (xn_test::u53(rng) - 0.5) * std::exp(phi * randn(rng));
    if (i % 13 == 5) v[i] = std::ldexp(v[i], (rng() & 1) ? 60 : -60);
  }
  return v;
}

// The expected y storage after y = alpha op(A) x + beta y: the oracle's
// m x 1 product on the logical vectors; the gaps keep their values.
std::vector<double> expected_gemv(bool trans, int m, int n, double alpha,
                                  const std::vector<double> &A, int lda,
                                  const std::vector<double> &x, int incx, double beta,
                                  const std::vector<double> &y, int incy) {
  const int lx = trans ? m : n, ly = trans ? n : m;
  std::vector<double> xs(static_cast<std::size_t>(lx)), ys(static_cast<std::size_t>(ly), kNaN);
  for (int i = 0; i < lx; ++i) xs[std::size_t(i)] = x[at(i, lx, incx)];
  if (beta != 0.0)
    for (int i = 0; i < ly; ++i) ys[std::size_t(i)] = y[at(i, ly, incy)];
  std::vector<double> out;
  xn_test::exact_gemm_ieee(trans, false, ly, 1, lx, alpha, A.data(), lda, xs.data(), lx,
                           beta, beta != 0.0 ? ys.data() : nullptr, ly, out);
  std::vector<double> want = y;
  for (int i = 0; i < ly; ++i) want[at(i, ly, incy)] = out[std::size_t(i)];
  return want;
}

double expected_dot(int n, const std::vector<double> &x, int incx,
                    const std::vector<double> &y, int incy) {
  if (n <= 0) return 0.0;
  std::vector<double> xs(static_cast<std::size_t>(n)), ys(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    xs[std::size_t(i)] = x[at(i, n, incx)];
    ys[std::size_t(i)] = y[at(i, n, incy)];
  }
  std::vector<double> out;
  xn_test::exact_gemm_ieee(false, false, 1, 1, n, 1.0, xs.data(), 1, ys.data(), n, 0.0,
                           nullptr, 1, out);
  return out[0];
}

class GpuExblas : public xn_test::CublasHandleFixture<> {};

struct GemvShape {
  int m, n;
};

// Every combination below against the oracle, in one pointer mode and
// stream; returns the cases checked.
int check_gemv_grid(cublasHandle_t h, cudaStream_t s, bool device_scalars,
                    std::mt19937_64 &rng) {
  const GemvShape shapes[] = {{1, 1}, {7, 5}, {2, 97}, {131, 3}, {257, 200}};
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  const int incs[][2] = {{1, 1}, {2, 3}, {-1, 1}, {1, -2}, {-3, -1}};
  const double scalars[][2] = {{1.0, 0.0}, {-0.75, 1.0}, {3e-5, -2.5}, {0.0, 0.5}};
  DeviceBuffer<double> dA, dx, dy, dscal(2);
  int checked = 0;
  for (const GemvShape &sh : shapes)
    for (cublasOperation_t op : ops)
      for (const auto &inc : incs)
        for (const auto &sc : scalars) {
          const bool t = op != CUBLAS_OP_N;
          const int lx = t ? sh.m : sh.n, ly = t ? sh.n : sh.m;
          const int lda = sh.m + int(rng() % 3) * 4;
          const double phi = (checked % 2) ? 3.0 : 0.0;
          const std::vector<double> A = draw(std::size_t(lda) * sh.n, phi, rng);
          const std::vector<double> x = draw(storage(lx, inc[0]), phi, rng);
          // y: random where read, NaN in the gaps and everywhere when
          // beta == 0 (never read).
          std::vector<double> y(storage(ly, inc[1]), kNaN);
          if (sc[1] != 0.0)
            for (int i = 0; i < ly; ++i) y[at(i, ly, inc[1])] = xn_test::u53(rng) - 0.5;
          const std::vector<double> want =
              expected_gemv(t, sh.m, sh.n, sc[0], A, lda, x, inc[0], sc[1], y, inc[1]);
          dA.upload(A, s);
          dx.upload(x, s);
          dy.upload(y, s);
          cublasStatus_t st;
          if (device_scalars) {
            dscal.upload({sc[0], sc[1]}, s);
            st = xnExdgemv(h, op, sh.m, sh.n, dscal.get(), dA.get(), lda, dx.get(), inc[0],
                           dscal.get() + 1, dy.get(), inc[1]);
          } else {
            st = xnExdgemv(h, op, sh.m, sh.n, &sc[0], dA.get(), lda, dx.get(), inc[0],
                           &sc[1], dy.get(), inc[1]);
          }
          EXPECT_EQ(st, CUBLAS_STATUS_SUCCESS);
          const std::vector<double> got = dy.download(s);
          for (std::size_t i = 0; i < got.size(); ++i)
            if (!same_bits(got[i], want[i])) {
              ADD_FAILURE() << "op " << int(op) << " m " << sh.m << " n " << sh.n
                            << " incx " << inc[0] << " incy " << inc[1] << " alpha "
                            << sc[0] << " beta " << sc[1] << ": y storage [" << i
                            << "] = " << got[i] << ", want " << want[i];
              return checked;
            }
          ++checked;
        }
  return checked;
}

TEST_F(GpuExblas, GemvIsTheExactValueRoundedOnceBitwise) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  EXPECT_EQ(check_gemv_grid(h_, nullptr, false, rng), 5 * 3 * 5 * 4);
}

TEST_F(GpuExblas, GemvDeviceScalarsAndANonDefaultStream) {
  cudaStream_t s = nullptr;
  XN_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  XN_CUBLAS_OK(cublasSetStream(h_, s));
  XN_CUBLAS_OK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_DEVICE));
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  EXPECT_EQ(check_gemv_grid(h_, s, true, rng), 5 * 3 * 5 * 4);
  XN_CUBLAS_OK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST));
  XN_CUBLAS_OK(cublasSetStream(h_, nullptr));
  XN_CUDA_OK(cudaStreamDestroy(s));
}

// Long dot products in several chunks (N: x staged in pieces of 4096; T:
// blocks per column and chunk), with rows (N) or columns (T) that take every
// path of the finish: an exact zero, Inf, Inf - Inf, NaN, a zero x (all
// outputs exact zeros of mixed signs), and the values the bound leaves to
// the exact fallback on the device (products below 2^-968 or above 2^1000,
// an exact tie).
TEST_F(GpuExblas, LongGemvsReachEveryPathOfTheFinish) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const double inf = std::numeric_limits<double>::infinity();
  struct Shape {
    cublasOperation_t op;
    int m, n;
  };
  const Shape shapes[] = {{CUBLAS_OP_N, 300, 9001}, {CUBLAS_OP_T, 5003, 70}};
  DeviceBuffer<double> dA, dx, dy;
  for (const Shape &sh : shapes)
    for (int zero_x = 0; zero_x < 2; ++zero_x) {
      const bool t = sh.op != CUBLAS_OP_N;
      const int lx = t ? sh.m : sh.n, ly = t ? sh.n : sh.m, lda = sh.m + 3;
      std::vector<double> A = draw(std::size_t(lda) * sh.n, 0.0, rng);
      std::vector<double> x = draw(std::size_t(lx), 0.0, rng);
      // Element (output o, term k) of A.
      auto a = [&](int o, int k) -> double & {
        return A[t ? std::size_t(o) * lda + k : std::size_t(k) * lda + o];
      };
      for (int k = 0; k < lx; ++k) a(0, k) = (k % 2) ? 0.0 : -0.0;  // X exactly zero
      a(1, lx / 2) = inf;
      a(2, 7) = inf, a(2, lx - 2) = -inf;  // NaN
      a(3, lx / 3) = kNaN;
      for (int k = 0; k < lx; k += 97) a(4, k) = 1e-300;  // products below 2^-968
      a(5, lx - 1) = 1e305;                               // above 2^1000
      for (int k = 0; k < lx; ++k) a(6, k) = 0.0;         // 1 + 2^-53: a tie
      a(6, 0) = 1.0, a(6, 1) = 0x1p-53, x[0] = x[1] = 1.0;
      for (int k = 0; k < lx; ++k) a(7, k) = std::fabs(a(7, k));
      // x = -0: output 7's products are all -0 (X = -0), the others mixed.
      if (zero_x) std::fill(x.begin(), x.end(), -0.0);
      for (double beta : {0.0, -0.5}) {
        std::vector<double> y(std::size_t(ly), kNaN);
        if (beta != 0.0)
          for (int i = 0; i < ly; ++i) y[std::size_t(i)] = (i % 5 == 0) ? -0.0 : xn_test::u53(rng);
        const double alpha = 1.5;
        const std::vector<double> want =
            expected_gemv(t, sh.m, sh.n, alpha, A, lda, x, 1, beta, y, 1);
        dA.upload(A);
        dx.upload(x);
        dy.upload(y);
        ASSERT_EQ(xnExdgemv(h_, sh.op, sh.m, sh.n, &alpha, dA.get(), lda, dx.get(), 1, &beta,
                            dy.get(), 1),
                  CUBLAS_STATUS_SUCCESS);
        const std::vector<double> got = dy.download();
        int negative_zeros = 0;
        for (int i = 0; i < ly; ++i) {
          ASSERT_TRUE(same_bits(got[std::size_t(i)], want[std::size_t(i)]))
              << "op " << int(sh.op) << " zero x " << zero_x << " beta " << beta
              << ": y[" << i << "] = " << got[std::size_t(i)] << ", want "
              << want[std::size_t(i)];
          negative_zeros += want[std::size_t(i)] == 0.0 && std::signbit(want[std::size_t(i)]);
        }
        if (zero_x && beta == 0.0) {
          EXPECT_GT(negative_zeros, 0);  // the sign rule ran
        }
      }
    }
}

TEST_F(GpuExblas, DotIsTheExactValueRoundedOnceInBothPointerModes) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  // 300007 has enough chunks for the block-per-output finish.
  const int sizes[] = {1, 2, 17, 1000, 100003, 300007};
  const int incs[][2] = {{1, 1}, {2, -1}, {-1, -1}, {-2, 3}, {0, 1}, {3, 0}};
  DeviceBuffer<double> dx, dy, dres(1);
  int checked = 0, naive_wrong = 0;
  for (int n : sizes)
    for (const auto &inc : incs)
      for (int device_result = 0; device_result < 2; ++device_result) {
        const std::vector<double> x = draw(storage(n, inc[0]), 2.0, rng);
        const std::vector<double> y = draw(storage(n, inc[1]), 2.0, rng);
        const double want = expected_dot(n, x, inc[0], y, inc[1]);
        double naive = 0;
        for (int i = 0; i < n; ++i) naive += x[at(i, n, inc[0])] * y[at(i, n, inc[1])];
        naive_wrong += !same_bits(naive, want);
        dx.upload(x);
        dy.upload(y);
        double got = kNaN;
        if (device_result) {
          dres.upload({kNaN});
          XN_CUBLAS_OK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_DEVICE));
          const cublasStatus_t st =
              xnExddot(h_, n, dx.get(), inc[0], dy.get(), inc[1], dres.get());
          XN_CUBLAS_OK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST));
          ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS);
          got = dres.download()[0];
        } else {
          ASSERT_EQ(xnExddot(h_, n, dx.get(), inc[0], dy.get(), inc[1], &got),
                    CUBLAS_STATUS_SUCCESS);
        }
        ASSERT_TRUE(same_bits(got, want))
            << "n " << n << " incx " << inc[0] << " incy " << inc[1] << " device "
            << device_result << ": " << got << ", want " << want;
        ++checked;
      }
  EXPECT_EQ(checked, 6 * 6 * 2);
  // The data is hard enough that plain summation misses somewhere.
  EXPECT_GT(naive_wrong, 0);
}

// Bad arguments: CUBLAS_STATUS_INVALID_VALUE with y untouched, for every
// argument cublasDgemv's documentation calls invalid. cuBLAS 13.1's own
// cublasDgemv rejects only lda < max(1, m) among them (measured on an H100:
// an unknown trans, m < 0, n < 0, incx = 0 and incy = 0 return SUCCESS, an
// unknown trans and incx = 0 even compute); where it rejects, the statuses
// must agree.
TEST_F(GpuExblas, BadArgumentsGiveInvalidValueAndLeaveTheOutputUntouched) {
  struct Bad {
    cublasOperation_t op;
    int m, n, lda, incx, incy;
    bool valid;
  };
  const Bad cases[] = {
      {cublasOperation_t(7), 4, 4, 4, 1, 1, false}, {CUBLAS_OP_N, -1, 4, 4, 1, 1, false},
      {CUBLAS_OP_N, 4, -1, 4, 1, 1, false},         {CUBLAS_OP_N, 4, 4, 3, 1, 1, false},
      {CUBLAS_OP_T, 0, 4, 0, 1, 1, true},           {CUBLAS_OP_N, 4, 4, 4, 0, 1, false},
      {CUBLAS_OP_N, 4, 4, 4, 1, 0, false},          {CUBLAS_OP_N, 0, 0, 1, 1, 1, true},
      {CUBLAS_OP_T, 4, 0, 4, 1, 1, true},
  };
  DeviceBuffer<double> dA(64), dx(16), dy(16);
  std::vector<double> y0(16, 7.0);
  y0[0] = kNaN;
  const double alpha = 1.5, beta = 0.25;
  for (const Bad &c : cases) {
    dy.upload(y0);
    const cublasStatus_t base = cublasDgemv(h_, c.op, c.m, c.n, &alpha, dA.get(), c.lda,
                                            dx.get(), c.incx, &beta, dy.get(), c.incy);
    dy.upload(y0);
    const cublasStatus_t got = xnExdgemv(h_, c.op, c.m, c.n, &alpha, dA.get(), c.lda,
                                         dx.get(), c.incx, &beta, dy.get(), c.incy);
    const auto what = [&] {
      return "op " + std::to_string(int(c.op)) + " m " + std::to_string(c.m) + " n " +
             std::to_string(c.n) + " lda " + std::to_string(c.lda) + " incx " +
             std::to_string(c.incx) + " incy " + std::to_string(c.incy);
    };
    EXPECT_EQ(got, c.valid ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE) << what();
    if (base != CUBLAS_STATUS_SUCCESS) {
      EXPECT_EQ(got, base) << what();
    }
    const std::vector<double> y = dy.download();
    EXPECT_EQ(std::memcmp(y.data(), y0.data(), y.size() * sizeof(double)), 0)
        << "y changed: " << what();
  }
  EXPECT_EQ(xnExdgemv(nullptr, CUBLAS_OP_N, 4, 4, &alpha, dA.get(), 4, dx.get(), 1, &beta,
                      dy.get(), 1),
            CUBLAS_STATUS_NOT_INITIALIZED);
  // Dot: n <= 0 gives 0 with cuBLAS's status, in both pointer modes.
  for (int n : {0, -3}) {
    double want = kNaN, got = kNaN;
    const cublasStatus_t ws = cublasDdot(h_, n, dx.get(), 1, dx.get(), 1, &want);
    EXPECT_EQ(xnExddot(h_, n, dx.get(), 1, dx.get(), 1, &got), ws) << "n " << n;
    EXPECT_TRUE(same_bits(got, want)) << "n " << n << ": " << got << ", cuBLAS " << want;
  }
  // A zero increment: the status cuBLAS gives (BLAS repeats the element).
  double r = 0;
  dx.upload(std::vector<double>(16, 0.5));
  const cublasStatus_t zs = cublasDdot(h_, 4, dx.get(), 0, dx.get(), 1, &r);
  EXPECT_EQ(xnExddot(h_, 4, dx.get(), 0, dx.get(), 1, &r), zs);
  if (zs == CUBLAS_STATUS_SUCCESS) {
    EXPECT_EQ(r, 1.0);
  }
  EXPECT_EQ(xnExddot(h_, 4, dx.get(), 1, dx.get(), 1, nullptr), CUBLAS_STATUS_MAPPING_ERROR);
  EXPECT_EQ(xnExddot(nullptr, 4, dx.get(), 1, dx.get(), 1, &r),
            CUBLAS_STATUS_NOT_INITIALIZED);
}

}  // namespace
