// test_ngemm_gpu.cpp - the CUDA backend through the public device API
// (label gpu; every test skips cleanly without a device).
//
// Outputs are poisoned (NaN) before every run, inputs are fresh random draws,
// padding between rows and leading dimensions is NaN in A and B (a read of it
// shows up) and a sentinel in C (a write to it shows up).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "api/interposer_support.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/handle_state.h"
#include "core/plan.h"
#include "support/gpu_support.h"
#include "support/mpfr_oracle.h"
#include "support/test_support.h"

namespace {

using namespace xn_test;

constexpr double kCSentinel = -777.25;  // C padding must keep this value

// Allowed |C - C_exact| / (gamma_k * (|alpha||A||B| + |beta||C|)) for a
// recursion of `levels` levels on non-negative inputs. Each level's pre- and
// post-additions at most double the magnitude of the operands of a product
// (|S| <= |A_i1| + |A_i2|, at most three terms), and add O(1) roundings
// relative to that magnitude; 2 * 4^L is a generous envelope that still
// catches any wrong entry (whose error is O(1), not O(k u)).
double allowance(int levels) { return 2.0 * std::pow(4.0, levels); }

struct Case {
  int m, n, k;
  cublasOperation_t ta, tb;
  double alpha, beta;
  int pad;  // extra rows in lda, ldb, ldc
};

const char *op_name(cublasOperation_t o) { return o == CUBLAS_OP_N ? "N" : "T"; }

class GpuNgemm : public ::testing::Test {
 protected:
  void SetUp() override {
    XN_REQUIRE_GPU();
    ASSERT_EQ(cublasCreate(&h_), CUBLAS_STATUS_SUCCESS);
    // Tests choose small leaves to recurse at test sizes: no crossover on top.
    ASSERT_EQ(xnSetOption(h_, XN_OPT_MIN_SIZE_S, 0), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_MIN_SIZE_D, 0), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (h_) {
      xnRelease(h_);
      cublasDestroy(h_);
    }
  }

  // Runs one case on the handle and checks every entry against the MPFR
  // oracle; `device_scalars` puts alpha and beta in device memory.
  template <class T>
  void run(const Case &c, bool device_scalars = false, cudaStream_t stream = nullptr,
           int expected_levels = -1) {
    const std::uint64_t seed = fresh_seed();
    std::mt19937_64 rng(seed);
    const bool ta = c.ta != CUBLAS_OP_N, tb = c.tb != CUBLAS_OP_N;
    const int ra = ta ? c.k : c.m, ca = ta ? c.m : c.k;
    const int rb = tb ? c.n : c.k, cb = tb ? c.k : c.n;
    const int lda = std::max(1, ra) + c.pad, ldb = std::max(1, rb) + c.pad,
              ldc = std::max(1, c.m) + c.pad;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    std::vector<T> A, B, C0;
    fill<T>(A, ra, ca, lda, Dist::Uniform01, rng, nan);
    fill<T>(B, rb, cb, ldb, Dist::Uniform01, rng, nan);
    fill<T>(C0, c.m, c.n, ldc, Dist::Uniform01, rng, T(kCSentinel));
    const T alpha = T(c.alpha), beta = T(c.beta);
    if (beta == T(0))  // beta = 0 must not read C: poison its live part
      for (int j = 0; j < c.n; ++j)
        for (int i = 0; i < c.m; ++i) C0[std::size_t(i + j * ldc)] = nan;

    DeviceBuffer<T> dA, dB, dC, dScalars(2);
    dA.upload(A);
    dB.upload(B);
    dC.upload(C0);
    const T host_scalars[2] = {alpha, beta};
    XN_CUDA_OK(cudaMemcpy(dScalars.get(), host_scalars, sizeof(host_scalars),
                          cudaMemcpyHostToDevice));
    XN_CUBLAS_OK(cublasSetStream(h_, stream));
    XN_CUBLAS_OK(cublasSetPointerMode(
        h_, device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
    const T *pa = device_scalars ? dScalars.get() : &alpha;
    const T *pb = device_scalars ? dScalars.get() + 1 : &beta;
    XN_CUBLAS_OK(xn_gemm(h_, c.ta, c.tb, c.m, c.n, c.k, pa, dA.get(), lda, dB.get(), ldb,
                         pb, dC.get(), ldc));
    XN_CUDA_OK(cudaStreamSynchronize(stream));
    XN_CUBLAS_OK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST));
    XN_CUBLAS_OK(cublasSetStream(h_, nullptr));
    const std::vector<T> C = dC.download();

    std::int64_t leaf = 0, max_levels = 0;
    xnGetOption(h_, sizeof(T) == 8 ? XN_OPT_LEAF_SIZE_D : XN_OPT_LEAF_SIZE_S, &leaf);
    xnGetOption(h_, XN_OPT_MAX_LEVELS, &max_levels);
    int ran = -2;
    XN_CUBLAS_OK(xnGetLastLevels(h_, &ran));
    const int levels = expected_levels >= 0
                           ? expected_levels
                           : xn::choose_levels(c.m, c.n, c.k, leaf, int(max_levels));

    std::vector<ExactEntry> exact;
    exact_gemm<T>(ta, tb, c.m, c.n, c.k, alpha, A.data(), lda, B.data(), ldb, beta,
                  C0.data(), ldc, exact);
    // The depth the call ran: the planned one, or the one the test expects
    // when the workspace is limited (0 for the quick returns).
    const bool quick = c.k == 0 || c.alpha == 0 || c.m == 0 || c.n == 0;
    if (!quick) {
      EXPECT_EQ(ran, levels) << "levels run";
    }
    const double gamma = c.k * unit_roundoff<T>() / (1 - c.k * unit_roundoff<T>());
    const double allowed = allowance(levels) * gamma;
    const std::string what =
        "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
        " k=" + std::to_string(c.k) + " " + op_name(c.ta) + op_name(c.tb) +
        " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta) +
        " levels=" + std::to_string(levels) + "; " + describe_seed(seed);
    for (int j = 0; j < c.n; ++j) {
      for (int i = 0; i < ldc; ++i) {
        const T got = C[std::size_t(i + j * ldc)];
        if (i >= c.m) {  // padding of C: never written
          ASSERT_EQ(got, T(kCSentinel))
              << "wrote C padding at " << i << "," << j << " " << what;
          continue;
        }
        const ExactEntry &e = exact[std::size_t(i + j * c.m)];
        ASSERT_TRUE(std::isfinite(double(got))) << i << "," << j << " " << what;
        ASSERT_LE(abs_error(double(got), e), allowed * e.magnitude + 1e-300)
            << "entry " << i << "," << j << " got " << got << " exact " << e.hi << " "
            << what;
      }
    }
  }

  // Frees the handle's state (workspace included) and sets the options the
  // tests start from again: no crossover, leaf `leaf` for both precisions,
  // XN_OPT_PACK_TRANS_B = normal_b_temps.
  void reset_handle(std::int64_t leaf, std::int64_t normal_b_temps) {
    xnRelease(h_);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_MIN_SIZE_S, 0), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_MIN_SIZE_D, 0), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_S, leaf), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, leaf), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_PACK_TRANS_B, normal_b_temps),
              CUBLAS_STATUS_SUCCESS);
  }

  // One call with leaf 16 and XN_OPT_PACK_TRANS_B = option in a workspace of
  // exactly the queried size filled with NaN, C NaN where beta = 0; checked
  // against the oracle (allowance(levels)) and cuBLAS (allowance(levels) +
  // allowance(0)), C's padding untouched.
  template <class T>
  void check_normal_t(const Case &c, std::int64_t option, bool dev, cudaStream_t stream) {
    const std::uint64_t seed = fresh_seed();
    std::mt19937_64 rng(seed);
    const bool ta = c.ta != CUBLAS_OP_N, tb = c.tb != CUBLAS_OP_N;
    const bool is_double = sizeof(T) == sizeof(double);
    const int ra = ta ? c.k : c.m, ca = ta ? c.m : c.k;
    const int rb = tb ? c.n : c.k, cb = tb ? c.k : c.n;
    const int lda = ra + c.pad, ldb = rb + c.pad + 1, ldc = c.m + c.pad + 2;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    std::vector<T> A, B, C0;
    fill<T>(A, ra, ca, lda, Dist::Uniform01, rng, nan);
    fill<T>(B, rb, cb, ldb, Dist::Uniform01, rng, nan);
    fill<T>(C0, c.m, c.n, ldc, Dist::Uniform01, rng, T(kCSentinel));
    const T alpha = T(c.alpha), beta = T(c.beta);
    if (beta == T(0))
      for (int j = 0; j < c.n; ++j)
        for (int i = 0; i < c.m; ++i) C0[std::size_t(i + j * ldc)] = nan;
    const std::string what =
        std::string(is_double ? "double" : "float") + " m=" + std::to_string(c.m) +
        " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " " + op_name(c.ta) +
        op_name(c.tb) + " option=" + std::to_string(option) +
        " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta) +
        (dev ? " device" : " host") + " scalars; " + describe_seed(seed);

    reset_handle(16, option);
    const int levels = xn::choose_levels(c.m, c.n, c.k, 16, 6);
    ASSERT_GT(levels, 0) << what;
    // The A side at its default (XN_OPT_PACK_TRANS_A = -1).
    const xn::TempOrientation o = xn::temp_orientation(-1, option, is_double, ta, tb);
    const bool t_normal = o.t_normal;
    const size_t need = size_t(xn::call_workspace_elems(c.m, c.n, c.k, levels, o.a_layout,
                                                        tb, t_normal)) *
                        sizeof(T);
    size_t query = 0;
    XN_CUBLAS_OK(
        xnGetWorkspaceSize(h_, is_double ? 'd' : 's', c.ta, c.tb, c.m, c.n, c.k, &query));
    EXPECT_EQ(query, need) << what;
    if (t_normal) {  // the workspace of NN, plus the packed quadrant of op(B)
      EXPECT_EQ(need,
                size_t(xn::call_workspace_elems(c.m, c.n, c.k, levels, o.a_layout, false,
                                                false) +
                       xn::packed_b_elems(c.m, c.n, c.k, levels, o.a_layout, tb, true)) *
                    sizeof(T))
          << what;
    }
    DeviceBuffer<char> ws(need);
    XN_CUDA_OK(cudaMemset(ws.get(), 0xff, need));  // all-ones bytes: NaN
    XN_CUBLAS_OK(xnSetWorkspace(h_, ws.get(), need));

    DeviceBuffer<T> dA, dB, dC, dRef, dScalars;
    dA.upload(A);
    dB.upload(B);
    dC.upload(C0);
    dRef.upload(C0);
    dScalars.upload({alpha, beta});
    XN_CUBLAS_OK(cublasSetStream(h_, stream));
    XN_CUBLAS_OK(cublasSetPointerMode(
        h_, dev ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
    const T *pa = dev ? dScalars.get() : &alpha;
    const T *pb = dev ? dScalars.get() + 1 : &beta;
    XN_CUBLAS_OK(xn_gemm(h_, c.ta, c.tb, c.m, c.n, c.k, pa, dA.get(), lda, dB.get(), ldb,
                         pb, dC.get(), ldc));
    XN_CUBLAS_OK(xn::cublas_gemm(h_, c.ta, c.tb, c.m, c.n, c.k, pa, dA.get(), lda,
                                 dB.get(), ldb, pb, dRef.get(), ldc));
    XN_CUDA_OK(cudaStreamSynchronize(stream));
    XN_CUBLAS_OK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST));
    XN_CUBLAS_OK(cublasSetStream(h_, nullptr));
    int ran = -1;
    XN_CUBLAS_OK(xnGetLastLevels(h_, &ran));
    XN_CUBLAS_OK(xnSetWorkspace(h_, nullptr, 0));  // before `ws` is freed
    EXPECT_EQ(ran, levels) << what;
    const std::vector<T> C = dC.download(), Ref = dRef.download();

    std::vector<ExactEntry> exact;
    exact_gemm<T>(ta, tb, c.m, c.n, c.k, alpha, A.data(), lda, B.data(), ldb, beta,
                  C0.data(), ldc, exact);
    const double gamma = c.k * unit_roundoff<T>() / (1 - c.k * unit_roundoff<T>());
    const double ours = allowance(levels) * gamma, base = allowance(0) * gamma;
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < ldc; ++i) {
        const std::size_t e = std::size_t(i + j * ldc);
        if (i >= c.m) {
          ASSERT_EQ(C[e], T(kCSentinel))
              << "wrote C padding at " << i << "," << j << " " << what;
          continue;
        }
        const ExactEntry &x = exact[std::size_t(i + j * c.m)];
        ASSERT_TRUE(std::isfinite(double(C[e]))) << i << "," << j << " " << what;
        ASSERT_LE(abs_error(double(C[e]), x), ours * x.magnitude + 1e-300)
            << "oracle at " << i << "," << j << " " << what;
        ASSERT_LE(std::fabs(double(C[e]) - double(Ref[e])),
                  (ours + base) * x.magnitude + 1e-300)
            << "cuBLAS at " << i << "," << j << " got " << C[e] << " cuBLAS " << Ref[e]
            << " " << what;
      }
  }

  cublasHandle_t h_ = nullptr;
};

const cublasOperation_t kOps[] = {CUBLAS_OP_N, CUBLAS_OP_T};

TEST_F(GpuNgemm, SizeTransposeAndScalarSweepMatchesOracle) {
  // A small leaf so that CI-sized problems run 1-3 levels on the device.
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 16), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_S, 16), CUBLAS_STATUS_SUCCESS);
  const int sizes[][3] = {{0, 5, 5},       {5, 0, 5},      {5, 5, 0},     {1, 1, 1},
                          {2, 2, 2},       {3, 3, 3},      {5, 5, 5},     {9, 9, 9},
                          {15, 15, 15},    {16, 16, 16},   {17, 17, 17},  {31, 33, 32},
                          {63, 64, 65},    {64, 64, 64},   {65, 63, 64},  {37, 101, 131},
                          {131, 37, 101},  {1, 200, 3},    {200, 1, 150}, {7, 130, 260},
                          {128, 128, 128}, {129, 127, 131}};
  for (const auto &s : sizes)
    for (cublasOperation_t ta : kOps)
      for (cublasOperation_t tb : kOps) {
        run<double>({s[0], s[1], s[2], ta, tb, 1.0, 0.0, 3});
        run<float>({s[0], s[1], s[2], ta, tb, 1.0, 0.0, 0});
        if (HasFatalFailure()) return;
      }
}

TEST_F(GpuNgemm, AlphaBetaIncludingZeroAndOne) {
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 16), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_S, 16), CUBLAS_STATUS_SUCCESS);
  // Leaves split along k as well: the first chunk takes beta, the rest add.
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_KCHAIN_D, 12), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_KCHAIN_S, 16), CUBLAS_STATUS_SUCCESS);
  const double scalars[][2] = {{1, 0},   {1, 1},      {0.75, 0}, {0.75, 1},
                               {1, 0.5}, {2.5, -1.5}, {0, 0},    {0, 2}};
  for (const auto &ab : scalars)
    for (cublasOperation_t ta : kOps) {
      run<double>({70, 67, 69, ta, CUBLAS_OP_T, ab[0], ab[1], 2});
      run<float>({70, 67, 69, ta, CUBLAS_OP_N, ab[0], ab[1], 1});
      if (HasFatalFailure()) return;
    }
}

TEST_F(GpuNgemm, DevicePointerModeForAlphaAndBeta) {
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 16), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_S, 16), CUBLAS_STATUS_SUCCESS);
  for (double beta : {0.0, 1.0, 0.5}) {
    run<double>({97, 66, 80, CUBLAS_OP_N, CUBLAS_OP_N, 1.25, beta, 1}, true);
    run<float>({66, 97, 80, CUBLAS_OP_T, CUBLAS_OP_T, 1.25, beta, 0}, true);
    if (HasFatalFailure()) return;
  }
  // k == 0 with device scalars: C = beta * C via the scale kernel.
  run<double>({33, 17, 0, CUBLAS_OP_N, CUBLAS_OP_N, 1.0, 0.5, 1}, true);
}

TEST_F(GpuNgemm, NonDefaultStreamIsUsedInOrder) {
  // Inputs are copied on a non-blocking stream right before the call, and the
  // result copied back on it; only that stream is synchronised. A library
  // that ran anywhere else would race with the copies.
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 64), CUBLAS_STATUS_SUCCESS);
  cudaStream_t s;
  XN_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int n = 512;
  std::mt19937_64 rng(fresh_seed());
  std::vector<double> A, B;
  fill<double>(A, n, n, n, Dist::Uniform01, rng, 0.0);
  fill<double>(B, n, n, n, Dist::Uniform01, rng, 0.0);
  double *hA, *hB, *hC;
  XN_CUDA_OK(cudaMallocHost(&hA, sizeof(double) * n * n));
  XN_CUDA_OK(cudaMallocHost(&hB, sizeof(double) * n * n));
  XN_CUDA_OK(cudaMallocHost(&hC, sizeof(double) * n * n));
  std::copy(A.begin(), A.end(), hA);
  std::copy(B.begin(), B.end(), hB);
  DeviceBuffer<double> dA(n * n), dB(n * n), dC(n * n);
  XN_CUBLAS_OK(cublasSetStream(h_, s));
  for (int rep = 0; rep < 3; ++rep) {
    XN_CUDA_OK(cudaMemsetAsync(dC.get(), 0xff, sizeof(double) * n * n, s));  // NaN
    XN_CUDA_OK(
        cudaMemcpyAsync(dA.get(), hA, sizeof(double) * n * n, cudaMemcpyHostToDevice, s));
    XN_CUDA_OK(
        cudaMemcpyAsync(dB.get(), hB, sizeof(double) * n * n, cudaMemcpyHostToDevice, s));
    const double one = 1, zero = 0;
    XN_CUBLAS_OK(xnDngemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA.get(), n,
                          dB.get(), n, &zero, dC.get(), n));
    XN_CUDA_OK(
        cudaMemcpyAsync(hC, dC.get(), sizeof(double) * n * n, cudaMemcpyDeviceToHost, s));
    XN_CUDA_OK(cudaStreamSynchronize(s));
    std::vector<double> ref(std::size_t(n) * n);
    xn::Options opt;
    ASSERT_EQ(xn::cpu_ngemm<double>(false, false, n, n, n, 1.0, A.data(), n, B.data(), n,
                                    0.0, ref.data(), n, opt, 0),
              xn::Status::Ok);
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_NEAR(hC[i], ref[i], 1e-11 * ref[i]) << i;
  }
  XN_CUBLAS_OK(cublasSetStream(h_, nullptr));
  cudaFreeHost(hA);
  cudaFreeHost(hB);
  cudaFreeHost(hC);
  cudaStreamDestroy(s);
}

TEST_F(GpuNgemm, SwitchingStreamsOnOneHandleKeepsTheWorkspaceOrdered) {
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 32), CUBLAS_STATUS_SUCCESS);
  cudaStream_t s1, s2;
  XN_CUDA_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  XN_CUDA_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  for (int rep = 0; rep < 2; ++rep) {
    run<double>({200, 180, 190, CUBLAS_OP_N, CUBLAS_OP_N, 1, 0, 0}, false, s1);
    run<double>({200, 180, 190, CUBLAS_OP_T, CUBLAS_OP_N, 1, 1, 0}, false, s2);
  }
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

TEST_F(GpuNgemm, BadArgumentsGiveCublasStatusAndLeaveCUntouched) {
  const int m = 8, n = 6, k = 7;
  DeviceBuffer<double> dA(64 * 64), dB(64 * 64), dC(64 * 64);
  std::vector<double> pattern(64 * 64);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = double(i) * 0.5;
  pattern[3] = std::nan("");
  const double one = 1, zero = 0;
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
      {CUBLAS_OP_N, CUBLAS_OP_N, 0, n, k, 0, k, 0},
      {CUBLAS_OP_N, CUBLAS_OP_N, m, n, 0, m, 0, m},
      {CUBLAS_OP_C, CUBLAS_OP_C, m, n, k, k, n, m},  // valid: C means T
      {CUBLAS_OP_N, CUBLAS_OP_N, 0, 0, 0, 1, 1, 1},  // valid, empty
  };
  for (const Bad &b : cases) {
    dC.upload(pattern);
    const cublasStatus_t want =
        cublasDgemm(h_, b.ta, b.tb, b.m, b.n, b.k, &one, dA.get(), b.lda, dB.get(), b.ldb,
                    &zero, dC.get(), b.ldc);
    XN_CUDA_OK(cudaDeviceSynchronize());
    dC.upload(pattern);
    const cublasStatus_t got = xnDngemm(h_, b.ta, b.tb, b.m, b.n, b.k, &one, dA.get(),
                                        b.lda, dB.get(), b.ldb, &zero, dC.get(), b.ldc);
    XN_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_EQ(got, want) << "ta=" << b.ta << " tb=" << b.tb << " m=" << b.m
                         << " n=" << b.n << " k=" << b.k << " lda=" << b.lda
                         << " ldb=" << b.ldb << " ldc=" << b.ldc;
    if (got != CUBLAS_STATUS_SUCCESS) {
      EXPECT_TRUE(same_bits(dC.download(), pattern));
    }
    float fone = 1, fzero = 0;
    const cublasStatus_t fwant = cublasSgemm(
        h_, b.ta, b.tb, b.m, b.n, b.k, &fone, reinterpret_cast<float *>(dA.get()), b.lda,
        reinterpret_cast<float *>(dB.get()), b.ldb, &fzero,
        reinterpret_cast<float *>(dC.get()), b.ldc);
    XN_CUDA_OK(cudaDeviceSynchronize());
    dC.upload(pattern);
    const cublasStatus_t fgot = xnSngemm(
        h_, b.ta, b.tb, b.m, b.n, b.k, &fone, reinterpret_cast<float *>(dA.get()), b.lda,
        reinterpret_cast<float *>(dB.get()), b.ldb, &fzero,
        reinterpret_cast<float *>(dC.get()), b.ldc);
    XN_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_EQ(fgot, fwant) << "float, ta=" << b.ta << " m=" << b.m;
    if (fgot != CUBLAS_STATUS_SUCCESS) {
      EXPECT_TRUE(same_bits(dC.download(), pattern));
    }
  }
  EXPECT_EQ(xnDngemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA.get(), m,
                     dB.get(), k, &zero, dC.get(), m),
            CUBLAS_STATUS_NOT_INITIALIZED);
}

TEST_F(GpuNgemm, WorkspaceSizeQueryHeldAndUserSupplied) {
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 64), CUBLAS_STATUS_SUCCESS);
  const int n = 512;  // 3 levels with leaf 64
  size_t query = 0, nn = 0, held = 0;
  // Double NT stores T non-transposed by default (XN_OPT_PACK_TRANS_B = -1):
  // the workspace of NN (about a third of A, B and C together) plus the
  // packed quarter of op(B) (5/12 in all).
  XN_CUBLAS_OK(xnGetWorkspaceSize(h_, 'd', CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &query));
  XN_CUBLAS_OK(xnGetWorkspaceSize(h_, 'd', CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &nn));
  EXPECT_EQ(query, nn + size_t(n / 2) * size_t(n / 2) * sizeof(double));
  EXPECT_EQ(query, size_t(xn::call_workspace_elems(n, n, n, 3, false, true, true)) *
                       sizeof(double));
  EXPECT_LE(query, 3u * n * n * sizeof(double) / 2);  // the budget
  size_t transposed_t = 0;
  ASSERT_EQ(xnSetOption(h_, XN_OPT_PACK_TRANS_B, 0), CUBLAS_STATUS_SUCCESS);
  XN_CUBLAS_OK(
      xnGetWorkspaceSize(h_, 'd', CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &transposed_t));
  EXPECT_EQ(transposed_t,
            size_t(xn::workspace_elems(n, n, n, 3, false, true)) * sizeof(double));
  EXPECT_LE(transposed_t, 3u * n * n * sizeof(double) / 2);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_PACK_TRANS_B, -1), CUBLAS_STATUS_SUCCESS);
  run<double>({n, n, n, CUBLAS_OP_N, CUBLAS_OP_T, 1, 0, 0}, false, nullptr, 3);
  XN_CUBLAS_OK(xnGetWorkspaceHeld(h_, &held));
  EXPECT_EQ(held, query);
  // Same shape again: nothing new is allocated.
  run<double>({n, n, n, CUBLAS_OP_N, CUBLAS_OP_T, 1, 0, 0}, false, nullptr, 3);
  size_t held2 = 0;
  XN_CUBLAS_OK(xnGetWorkspaceHeld(h_, &held2));
  EXPECT_EQ(held2, held);

  // A user-supplied workspace is used as is; one too small for 3 levels
  // (even without the packed quadrant, which goes first) makes the call run
  // with fewer.
  DeviceBuffer<char> user(query);
  XN_CUBLAS_OK(xnSetWorkspace(h_, user.get(), query));
  run<double>({n, n, n, CUBLAS_OP_N, CUBLAS_OP_T, 1, 0.5, 0}, false, nullptr, 3);
  const size_t two_levels =
      size_t(xn::call_workspace_elems(n, n, n, 2, false, true, true, false)) * 8;
  XN_CUBLAS_OK(xnSetWorkspace(h_, user.get(), two_levels));
  run<double>({n, n, n, CUBLAS_OP_N, CUBLAS_OP_T, 1, 0.5, 0}, false, nullptr, 2);
  XN_CUBLAS_OK(xnGetWorkspaceHeld(h_, &held));
  EXPECT_EQ(held, two_levels);
  XN_CUBLAS_OK(xnSetWorkspace(h_, nullptr, 0));
  EXPECT_EQ(xnSetWorkspace(h_, user.get() + 1, 64), CUBLAS_STATUS_INVALID_VALUE);
}

// XN_OPT_PACK_TRANS_B: with op(B) transposed, the B-side temporaries stored
// non-transposed (formed by the transposing add/sub kernel) or transposed.
// NT and TT (transb = T or C), both precisions, the option on, off and
// automatic, odd sizes with padded leading dimensions, both pointer modes,
// on a non-default stream, in a workspace of exactly the queried size
// poisoned with NaN (a read of an unwritten temporary shows up) and with C
// poisoned with NaN where beta = 0: every entry within the stated bound of
// the oracle and within the two bounds together of cuBLAS's own product.
TEST_F(GpuNgemm, NonTransposedBTempsOnAndOffAgreeWithCublasAndTheOracle) {
  cudaStream_t stream;
  XN_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct Shape {
    int m, n, k;
  };
  const double scalars[][2] = {{1, 0}, {0.75, 1}, {1.25, -0.5}};
  int turn = 0;
  for (const Shape &sh : {Shape{131, 129, 133}, Shape{67, 70, 69}, Shape{200, 33, 150},
                          Shape{128, 128, 128}})
    for (cublasOperation_t ta : kOps)
      for (std::int64_t option : {1, 0, -1}) {
        const double *ab = scalars[turn % 3];
        const bool dev = turn % 2 == 1;
        const cublasOperation_t tb = turn % 4 == 3 ? CUBLAS_OP_C : CUBLAS_OP_T;
        const int pad = 1 + turn % 3;
        ++turn;
        check_normal_t<double>({sh.m, sh.n, sh.k, ta, tb, ab[0], ab[1], pad}, option, dev,
                               stream);
        check_normal_t<float>({sh.m, sh.n, sh.k, ta, tb, ab[0], ab[1], pad}, option, dev,
                              stream);
        if (HasFatalFailure()) break;
      }
  cudaStreamDestroy(stream);
}

// The transposing add/sub kernel alone, through the CUDA backend: every shape
// class (a partial tile on either side, thin, more column tiles than the
// grid's y dimension holds), each orientation pair, + and -, in place on the
// non-transposed operand (T = B22 - T of Badin et al., ICS'13, Table 1), both precisions:
// bit for bit the host's ew_add/ew_sub, D's padding untouched. With `copy`,
// the same kernel's transposing copy D = op(X) (the packed quadrant of op(B),
// plan.h): bit for bit X, -0 and all. A transposed operand's leading
// dimension is cols + `trans_pad`: odd pads force the kernel's element-wise
// loads, even ones allow its 2-element vector loads.
template <class T>
void transpose_add_sub_case(std::int64_t rows, std::int64_t cols, bool x_trans,
                            bool y_trans, bool subtract, bool in_place,
                            cudaStream_t stream, bool copy = false,
                            std::int64_t trans_pad = 5) {
  // An operand stored transposed is cols x rows, otherwise rows x cols like
  // D; its padding holds the sentinel.
  struct Operand {
    bool trans;
    std::int64_t ld;
    std::vector<T> h;
    T at(std::int64_t i, std::int64_t j) const {
      return h[std::size_t(trans ? j + i * ld : i + j * ld)];
    }
  };
  auto make = [&](bool trans, std::int64_t salt) {
    Operand o{trans, trans ? cols + trans_pad : rows + 2, {}};
    const std::int64_t r = trans ? cols : rows, c = trans ? rows : cols;
    o.h.assign(std::size_t(o.ld * c), T(kCSentinel));
    for (std::int64_t j = 0; j < c; ++j)
      for (std::int64_t i = 0; i < r; ++i)
        o.h[std::size_t(i + j * o.ld)] =
            (i * 31 + j * 17 + salt) % 7 == 3
                ? T(-0.0)  // a copy must keep the sign of zero
                : T(double((i * 31 + j * 17 + salt) % 1000003) * 0.25);
    return o;
  };
  const Operand x = make(x_trans, 1), y = make(y_trans, 7);
  DeviceBuffer<T> dX, dY, dD;
  dX.upload(x.h);
  dY.upload(y.h);
  // D: its own array (ld rows + 3, sentinel), or in place the non-transposed
  // operand's.
  const bool d_is_y = in_place && !y_trans, d_is_x = in_place && !d_is_y && !x_trans;
  const std::int64_t ldd = d_is_y ? y.ld : d_is_x ? x.ld : rows + 3;
  if (!d_is_x && !d_is_y)
    dD.upload(std::vector<T>(std::size_t(ldd * cols), T(kCSentinel)));
  T *const d = d_is_y ? dY.get() : d_is_x ? dX.get() : dD.get();
  xn::CudaBackend<T> be(nullptr, stream, false, nullptr, nullptr, nullptr);
  const xn::MatView<const T> Xv{dX.get(), rows, cols, x.ld, x_trans};
  const xn::MatView<const T> Yv{dY.get(), rows, cols, y.ld, y_trans};
  const xn::MatView<T> Dv{d, rows, cols, ldd, false};
  const std::string what =
      std::to_string(rows) + "x" + std::to_string(cols) +
      " x_trans=" + std::to_string(x_trans) + " y_trans=" + std::to_string(y_trans) +
      " subtract=" + std::to_string(subtract) + " in_place=" + std::to_string(in_place) +
      " trans_pad=" + std::to_string(trans_pad);
  if (copy) {
    ASSERT_EQ(be.transpose_copy(Dv, Xv), xn::Status::Ok) << what << " copy";
  } else {
    ASSERT_EQ(be.transpose_add_sub(Dv, Xv, Yv, subtract), xn::Status::Ok) << what;
  }
  XN_CUDA_OK(cudaStreamSynchronize(stream));
  const std::vector<T> D = d_is_y   ? dY.download()
                           : d_is_x ? dX.download()
                                    : dD.download();
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < ldd; ++i) {
      const T want = i >= rows  ? T(kCSentinel)
                     : copy     ? x.at(i, j)
                     : subtract ? xn::ew_sub(x.at(i, j), y.at(i, j))
                                : xn::ew_add(x.at(i, j), y.at(i, j));
      ASSERT_EQ(D[std::size_t(i + j * ldd)], want) << what << " at " << i << "," << j;
      if (copy && i < rows) {
        ASSERT_EQ(std::signbit(D[std::size_t(i + j * ldd)]), std::signbit(want)) << what;
      }
    }
}

TEST_F(GpuNgemm, TransposeAddSubKernelEveryShapeAndOrientation) {
  cudaStream_t stream;
  XN_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // Partial tiles on either side (the kernel's tiles are 64 x 64), whole
  // tiles, thin, and more column tiles than the grid's y dimension holds.
  const std::int64_t shapes[][2] = {{1, 1},   {31, 33},   {63, 65},    {64, 64},
                                    {64, 96}, {128, 192}, {200, 130},  {1, 257},
                                    {257, 1}, {100, 999}, {3, 2100000}};
  const bool pairs[][2] = {{true, true}, {true, false}, {false, true}};
  for (std::int64_t pad : {5, 4})
    for (const auto &s : shapes)
      for (const auto &xy : pairs)
        for (bool subtract : {false, true})
          for (bool in_place : {false, true}) {
            if (in_place && xy[0] && xy[1]) continue;  // nothing to alias
            transpose_add_sub_case<double>(s[0], s[1], xy[0], xy[1], subtract, in_place,
                                           stream, false, pad);
            transpose_add_sub_case<float>(s[0], s[1], xy[0], xy[1], subtract, in_place,
                                          stream, false, pad);
            if (HasFatalFailure()) {
              cudaStreamDestroy(stream);
              return;
            }
          }
  for (std::int64_t pad : {5, 4})
    for (const auto &s : shapes) {
      transpose_add_sub_case<double>(s[0], s[1], true, false, false, false, stream, true,
                                     pad);
      transpose_add_sub_case<float>(s[0], s[1], true, false, false, false, stream, true,
                                    pad);
      if (HasFatalFailure()) break;
    }
  cudaStreamDestroy(stream);
}

TEST_F(GpuNgemm, FailedOrForbiddenWorkspaceStillGivesTheProduct) {
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 32), CUBLAS_STATUS_SUCCESS);
  xn::testing::set_fail_workspace_allocations(true);
  run<double>({300, 260, 280, CUBLAS_OP_T, CUBLAS_OP_N, 1, 0, 0}, false, nullptr, 0);
  xn::testing::set_fail_workspace_allocations(false);
  size_t held = 1;
  XN_CUBLAS_OK(xnGetWorkspaceHeld(h_, &held));
  EXPECT_EQ(held, 0u);
  // A tiny budget: the same.
  ASSERT_EQ(xnSetOption(h_, XN_OPT_WORKSPACE_LIMIT, 1024), CUBLAS_STATUS_SUCCESS);
  run<double>({300, 260, 280, CUBLAS_OP_T, CUBLAS_OP_N, 1, 1, 0}, false, nullptr, 0);
  // A budget for exactly one level (double TN stores the A side
  // non-transposed by default: XN_OPT_PACK_TRANS_A).
  const bool a_layout = xn::temp_orientation(-1, -1, true, true, false).a_layout;
  const size_t one_level =
      size_t(xn::workspace_elems(300, 260, 280, 1, a_layout, false)) * 8;
  ASSERT_EQ(xnSetOption(h_, XN_OPT_WORKSPACE_LIMIT, int64_t(one_level)),
            CUBLAS_STATUS_SUCCESS);
  run<double>({300, 260, 280, CUBLAS_OP_T, CUBLAS_OP_N, 1, 1, 0}, false, nullptr, 1);
  // NT with T non-transposed needs NN's workspace (plus the packed quadrant
  // of op(B) if it has room): a budget of one NN level runs one level.
  const size_t nn_one_level =
      size_t(xn::call_workspace_elems(300, 260, 280, 1, false, false, false)) * 8;
  EXPECT_EQ(
      nn_one_level,
      size_t(xn::call_workspace_elems(300, 260, 280, 1, false, true, true, false)) * 8);
  reset_handle(32, 1);  // no workspace held from the calls above
  ASSERT_EQ(xnSetOption(h_, XN_OPT_WORKSPACE_LIMIT, int64_t(nn_one_level)),
            CUBLAS_STATUS_SUCCESS);
  run<double>({300, 260, 280, CUBLAS_OP_N, CUBLAS_OP_T, 1, 0, 0}, false, nullptr, 1);
  size_t held_nt = 0;
  XN_CUBLAS_OK(xnGetWorkspaceHeld(h_, &held_nt));
  EXPECT_EQ(held_nt, nn_one_level);
  // Failed allocations with T non-transposed: the classical product.
  reset_handle(32, 1);
  xn::testing::set_fail_workspace_allocations(true);
  run<double>({300, 260, 280, CUBLAS_OP_N, CUBLAS_OP_T, 1, 0.5, 0}, false, nullptr, 0);
  xn::testing::set_fail_workspace_allocations(false);
}

TEST_F(GpuNgemm, NonNegativeCheckFallsBackAndCounts) {
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 16), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_CHECK_NONNEG, 1), CUBLAS_STATUS_SUCCESS);
  const int n = 100;
  std::mt19937_64 rng(fresh_seed());
  std::vector<double> A, B;
  fill<double>(A, n, n, n, Dist::Uniform01, rng, 0.0);
  fill<double>(B, n, n, n, Dist::Uniform01, rng, 0.0);
  DeviceBuffer<double> dA, dB, dC(n * n);
  dA.upload(A);
  dB.upload(B);
  const double one = 1, zero = 0;
  uint64_t count = 99;
  XN_CUBLAS_OK(xnDngemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA.get(), n,
                        dB.get(), n, &zero, dC.get(), n));
  XN_CUBLAS_OK(xnGetNonNegFallbackCount(h_, &count));
  EXPECT_EQ(count, 0u);
  A[5 + 7 * n] = -0.5;  // one negative entry
  dA.upload(A);
  XN_CUBLAS_OK(xnDngemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA.get(), n,
                        dB.get(), n, &zero, dC.get(), n));
  XN_CUBLAS_OK(xnGetNonNegFallbackCount(h_, &count));
  EXPECT_EQ(count, 1u);
  // The fallback is cuBLAS's own product: bitwise equal to cublasDgemm.
  DeviceBuffer<double> dRef(n * n);
  XN_CUBLAS_OK(cublasDgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA.get(), n,
                           dB.get(), n, &zero, dRef.get(), n));
  EXPECT_TRUE(same_bits(dC.download(), dRef.download()));
}

TEST_F(GpuNgemm, NanAndInfInInputsAreNeverLost) {
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 16), CUBLAS_STATUS_SUCCESS);
  const int n = 96;
  const double inf = std::numeric_limits<double>::infinity();
  for (int trial = 0; trial < 4; ++trial) {
    std::mt19937_64 rng(fresh_seed());
    std::vector<double> A, B;
    fill<double>(A, n, n, n, Dist::Uniform01, rng, 0.0);
    fill<double>(B, n, n, n, Dist::Uniform01, rng, 0.0);
    const int i = int(rng() % n), p = int(rng() % n);
    (trial % 2 ? B : A)[std::size_t(i + p * n)] = trial < 2 ? inf : std::nan("");
    DeviceBuffer<double> dA, dB, dC(n * n);
    dA.upload(A);
    dB.upload(B);
    const double one = 1, zero = 0;
    XN_CUBLAS_OK(xnDngemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA.get(), n,
                          dB.get(), n, &zero, dC.get(), n));
    const std::vector<double> C = dC.download();
    std::vector<double> ref(std::size_t(n) * n);
    xn::Options opt;
    ASSERT_EQ(xn::cpu_ngemm<double>(false, false, n, n, n, 1.0, A.data(), n, B.data(), n,
                                    0.0, ref.data(), n, opt, 0, xn::CpuLeaf::PreloadLoop),
              xn::Status::Ok);
    int nonfinite = 0;
    for (std::size_t e = 0; e < ref.size(); ++e)
      if (!std::isfinite(ref[e])) {
        ++nonfinite;
        ASSERT_FALSE(std::isfinite(C[e])) << "lost a non-finite value at " << e;
      }
    EXPECT_GT(nonfinite, 0);
  }
}

// Data of unequal scales (core/scale_depth.h): with XN_OPT_CHECK_NONNEG the
// scan's block maxima lower the depth, and every entry meets the classical
// product's componentwise bound; without the check the planned depth mixes
// the scales and does not. The example (top-left quadrants of A and
// B x1e6) at 384 with leaf 32 (3 levels planned), in each orientation.
template <class T>
void badly_scaled_case(cublasHandle_t h, bool ta, bool tb) {
  const int m = 384 + (ta ? 6 : 0), n = 384 - (tb ? 5 : 0), k = 384 + 3;
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const int ra = ta ? k : m, ca = ta ? m : k, rb = tb ? n : k, cb = tb ? k : n;
  std::vector<T> A, B;
  fill<T>(A, ra, ca, ra, Dist::Uniform01, rng, T(0));
  fill<T>(B, rb, cb, rb, Dist::Uniform01, rng, T(0));
  for (int p = 0; p < k; ++p)
    for (int i = 0; i < m / 2; ++i)
      if (p < k / 2) A[std::size_t(ta ? p + i * ra : i + p * ra)] *= T(1e6);
  for (int j = 0; j < n / 2; ++j)
    for (int p = 0; p < k / 2; ++p)
      B[std::size_t(tb ? j + p * rb : p + j * rb)] *= T(1e6);
  DeviceBuffer<T> dA, dB, dC(std::size_t(m) * n);
  dA.upload(A);
  dB.upload(B);
  std::vector<ExactEntry> exact;
  const T one = 1, zero = 0;
  const std::vector<T> unread(std::size_t(m) * n, T(0));  // beta = 0
  exact_gemm<T>(ta, tb, m, n, k, one, A.data(), ra, B.data(), rb, zero, unread.data(), m,
                exact);
  const int planned = xn::choose_levels(m, n, k, 32, 6);
  ASSERT_GE(planned, 2);
  const double gamma = (k + 2) * unit_roundoff<T>() / (1 - (k + 2) * unit_roundoff<T>());
  const std::string what = std::string(ta ? "T" : "N") + (tb ? "T" : "N") + " " +
                           (sizeof(T) == 8 ? "double" : "float") + "; " +
                           describe_seed(seed);
  for (int check = 1; check >= 0; --check) {
    ASSERT_EQ(xnSetOption(h, XN_OPT_CHECK_NONNEG, check), CUBLAS_STATUS_SUCCESS);
    DeviceBuffer<T> fresh(std::size_t(m) * n);
    XN_CUBLAS_OK(xn_gemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                         tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &one, dA.get(), ra,
                         dB.get(), rb, &zero, fresh.get(), m));
    const std::vector<T> C = fresh.download();
    int ran = -2;
    XN_CUBLAS_OK(xnGetLastLevels(h, &ran));
    double worst = 0;
    for (std::size_t e = 0; e < C.size(); ++e) {
      const double err = abs_error(double(C[e]), exact[e]);
      const double r = err == 0 ? 0 : err / (gamma * exact[e].magnitude);
      worst = std::max(worst, std::isnan(r) ? INFINITY : r);
    }
    if (check) {
      EXPECT_EQ(ran, 0) << what;
      EXPECT_LE(worst, 1.0) << "checked: " << what;
    } else {
      EXPECT_EQ(ran, planned) << what;
      EXPECT_GT(worst, 1e3) << "unchecked: " << what;
    }
  }
}

TEST_F(GpuNgemm, NonNegativeCheckKeepsTheClassicalBoundOnBadlyScaledData) {
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 32), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_S, 32), CUBLAS_STATUS_SUCCESS);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      badly_scaled_case<double>(h_, ta, tb);
      badly_scaled_case<float>(h_, ta, tb);
    }
}

// The device scan's block maxima (entry_flags_max_kernel) decide as the
// CPU's loops do: for random blocks scaled up at random (sizes off the
// grid, every orientation, both precisions), xnDngemm under the check runs
// the depth the CPU driver chooses from the same data; well-scaled data
// keeps the planned depth. The interposer's scan (xn_internal_operand_scan)
// reports that depth too, and flags a negative entry.
TEST_F(GpuNgemm, DeviceBlockMaximaChooseTheCpuDepth) {
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 16), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_CHECK_NONNEG, 1), CUBLAS_STATUS_SUCCESS);
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  xn::Options opt;
  opt.leaf_d = 16;
  opt.min_size_d = 0;
  opt.check_nonneg = 1;
  int limited = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const bool ta = trial % 2, tb = (trial / 2) % 2;
    const int m = 200 + int(rng() % 150), n = 200 + int(rng() % 150),
              k = 200 + int(rng() % 150);
    const int ra = ta ? k : m, ca = ta ? m : k, rb = tb ? n : k, cb = tb ? k : n;
    std::vector<double> A, B;
    fill<double>(A, ra, ca, ra, Dist::Uniform01, rng, 0.0);
    fill<double>(B, rb, cb, rb, Dist::Uniform01, rng, 0.0);
    if (trial % 3 != 0) {  // a random rectangle of one operand, x 10^(1..6)
      std::vector<double> &X = trial % 2 ? A : B;
      const int rows = trial % 2 ? ra : rb, cols = trial % 2 ? ca : cb;
      const int r0 = int(rng() % rows), c0 = int(rng() % cols);
      const int r1 = std::min(rows, r0 + 1 + int(rng() % 64)),
                c1 = std::min(cols, c0 + 1 + int(rng() % 64));
      const double f = std::pow(10.0, 1 + int(rng() % 6));
      for (int c = c0; c < c1; ++c)
        for (int r = r0; r < r1; ++r) X[std::size_t(r + c * rows)] *= f;
    }
    DeviceBuffer<double> dA, dB, dC(std::size_t(m) * n);
    dA.upload(A);
    dB.upload(B);
    const double one = 1, zero = 0;
    const cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                            ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    XN_CUBLAS_OK(xnDngemm(h_, oa, ob, m, n, k, &one, dA.get(), ra, dB.get(), rb, &zero,
                          dC.get(), m));
    int gpu_levels = -2, cpu_levels = -3;
    XN_CUBLAS_OK(xnGetLastLevels(h_, &gpu_levels));
    std::vector<double> C(std::size_t(m) * n);
    ASSERT_EQ(xn::cpu_recursive_gemm<double>(xn::nonneg_winograd_algorithm(), ta, tb, m,
                                             n, k, 1.0, A.data(), ra, B.data(), rb, 0.0,
                                             C.data(), m, opt, -1, xn::CpuLeaf::OpenBlas,
                                             nullptr, nullptr, &cpu_levels),
              xn::Status::Ok);
    EXPECT_EQ(gpu_levels, cpu_levels) << "trial " << trial << "; " << describe_seed(seed);
    const int planned = xn::choose_levels(m, n, k, 16, 6);
    if (trial % 3 == 0) {
      EXPECT_EQ(gpu_levels, planned) << "well scaled, trial " << trial;
    }
    limited += gpu_levels < planned;
    int flags = -1, max_levels = -1;
    XN_CUBLAS_OK(xn_internal_operand_scan(h_, 'd', oa, ob, m, n, k, dA.get(), ra,
                                          dB.get(), rb, &flags, &max_levels));
    EXPECT_EQ(flags, 0);
    EXPECT_EQ(max_levels, gpu_levels) << "trial " << trial;
    if (trial == 0) {
      A[3] = -1;
      dA.upload(A);
      XN_CUBLAS_OK(xn_internal_operand_scan(h_, 'd', oa, ob, m, n, k, dA.get(), ra,
                                            dB.get(), rb, &flags, &max_levels));
      EXPECT_EQ(flags & 1, 1);
    }
  }
  EXPECT_GT(limited, 4);  // the scaled trials mostly lose depth
}

TEST_F(GpuNgemm, AgreesWithTheCpuBackendAtEqualDepth) {
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 64), CUBLAS_STATUS_SUCCESS);
  const int m = 515, n = 389, k = 777;  // odd: peeling at the top
  std::mt19937_64 rng(fresh_seed());
  std::vector<double> A, B, C0;
  fill<double>(A, k, m, k, Dist::Uniform01, rng, 0.0);  // transposed A
  fill<double>(B, k, n, k, Dist::Uniform01, rng, 0.0);
  fill<double>(C0, m, n, m, Dist::Uniform01, rng, 0.0);
  DeviceBuffer<double> dA, dB, dC;
  dA.upload(A);
  dB.upload(B);
  dC.upload(C0);
  const double alpha = 0.5, beta = 2;
  XN_CUBLAS_OK(xnDngemm(h_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, dA.get(), k,
                        dB.get(), k, &beta, dC.get(), m));
  const std::vector<double> C = dC.download();
  std::vector<double> ref = C0;
  xn::Options opt;
  opt.leaf_d = 64;
  ASSERT_EQ(xn::cpu_ngemm<double>(true, false, m, n, k, alpha, A.data(), k, B.data(), k,
                                  beta, ref.data(), m, opt),
            xn::Status::Ok);
  for (std::size_t e = 0; e < ref.size(); ++e)
    ASSERT_NEAR(C[e], ref[e], 64 * k * 0x1p-53 * std::fabs(ref[e])) << e;
}

TEST(GpuNgemmThreads, SeparateHandlesOnSeveralHostThreadsRunCorrectly) {
  XN_REQUIRE_GPU();
  const int threads = 4, n = 384;
  std::vector<std::thread> pool;
  std::vector<int> failures(threads, 0);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([t, n, &failures] {
      cublasHandle_t h;
      cudaStream_t s;
      if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
          cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        failures[t] = -1;
        return;
      }
      cublasSetStream(h, s);
      xnSetOption(h, XN_OPT_LEAF_SIZE_D, 48);
      std::mt19937_64 rng(fresh_seed());
      for (int rep = 0; rep < 3; ++rep) {
        std::vector<double> A, B;
        fill<double>(A, n, n, n, Dist::Uniform01, rng, 0.0);
        fill<double>(B, n, n, n, Dist::Uniform01, rng, 0.0);
        double *d;
        if (cudaMalloc(&d, sizeof(double) * 3 * n * n) != cudaSuccess) {
          failures[t] = -2;
          break;
        }
        cudaMemcpyAsync(d, A.data(), sizeof(double) * n * n, cudaMemcpyHostToDevice, s);
        cudaMemcpyAsync(d + n * n, B.data(), sizeof(double) * n * n,
                        cudaMemcpyHostToDevice, s);
        const double one = 1, zero = 0;
        if (xnDngemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, d, n, d + n * n, n,
                     &zero, d + 2 * n * n, n) != CUBLAS_STATUS_SUCCESS)
          ++failures[t];
        std::vector<double> C(std::size_t(n) * n), ref(std::size_t(n) * n);
        cudaMemcpyAsync(C.data(), d + 2 * n * n, sizeof(double) * n * n,
                        cudaMemcpyDeviceToHost, s);
        cudaStreamSynchronize(s);
        cudaFree(d);
        xn::Options opt;
        xn::cpu_ngemm<double>(false, false, n, n, n, 1.0, A.data(), n, B.data(), n, 0.0,
                              ref.data(), n, opt, 0);
        for (std::size_t e = 0; e < C.size(); ++e)
          if (!(std::fabs(C[e] - ref[e]) <= 1e-11 * ref[e])) {
            ++failures[t];
            break;
          }
      }
      xnRelease(h);
      cublasDestroy(h);
      cudaStreamDestroy(s);
    });
  for (auto &th : pool) th.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(GpuHostApi, DngemmUsesTheGpuAndMatchesTheOracle) {
  XN_REQUIRE_GPU();
  setenv("XN_DEVICE", "gpu", 1);
  std::int64_t old_leaf = 0;
  xnGetOption(nullptr, XN_OPT_LEAF_SIZE_D, &old_leaf);
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_LEAF_SIZE_D, 32), CUBLAS_STATUS_SUCCESS);
  const int m = 150, n = 130, k = 140, lda = 152, ldb = 141, ldc = 155;
  std::mt19937_64 rng(fresh_seed());
  std::vector<double> A, B, C;
  fill<double>(A, m, k, lda, Dist::Uniform01, rng, std::nan(""));
  fill<double>(B, k, n, ldb, Dist::Uniform01, rng, std::nan(""));
  fill<double>(C, m, n, ldc, Dist::Uniform01, rng, kCSentinel);
  const std::vector<double> C0 = C;
  const double alpha = 1.5, beta = 0.25;
  dngemm_("N", "N", &m, &n, &k, &alpha, A.data(), &lda, B.data(), &ldb, &beta, C.data(),
          &ldc);
  std::vector<ExactEntry> exact;
  exact_gemm<double>(false, false, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta,
                     C0.data(), ldc, exact);
  const double gamma = k * 0x1p-53;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldc; ++i) {
      const double got = C[std::size_t(i + j * ldc)];
      if (i >= m) {
        ASSERT_EQ(got, kCSentinel);
        continue;
      }
      const ExactEntry &e = exact[std::size_t(i + j * m)];
      ASSERT_LE(abs_error(got, e), allowance(2) * gamma * e.magnitude) << i << "," << j;
    }
  xnSetOption(nullptr, XN_OPT_LEAF_SIZE_D, old_leaf);
  unsetenv("XN_DEVICE");
}

}  // namespace
