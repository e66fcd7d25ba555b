// test_api_graphs.cpp - every device routine inside a CUDA graph (labels api
// and gpu; skipped without a device): captured after a warm-up call of the
// same shape or on a fresh handle with a supplied workspace, replayed many
// times, on new data too, both pointer modes, giving the bits of direct
// calls; a call that cannot be captured returns CUBLAS_STATUS_NOT_SUPPORTED
// and leaves the capture valid; a failed capture, a failed allocation or
// another thread's capture leave the library usable (docs/design.md, "CUDA
// graphs").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_exdgemm.h"
#include "backend/cuda/handle_state.h"
#include "support/exdgemm_inputs.h"
#include "support/gpu_support.h"
#include "support/test_support.h"
#include "xngemm.h"

namespace {

using xn_test::DeviceBuffer;

template <class T>
using GemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                  int, int, int, const T *, const T *, int, const T *, int,
                                  const T *, T *, int);
template <class T>
using SymvFn = cublasStatus_t (*)(cublasHandle_t, cublasFillMode_t, int, const T *,
                                  const T *, int, const T *, int, const T *, T *, int);

template <class T>
struct Routine {
  const char *name;
  GemmFn<T> fn;
};

// Small leaves so that products of 1024-2048 recurse (two levels).
void small_leaves(cublasHandle_t h) {
  for (xnOption_t o : {XN_OPT_LEAF_SIZE_S, XN_OPT_LEAF_SIZE_D, XN_OPT_STRASSEN_LEAF_S,
                       XN_OPT_STRASSEN_LEAF_D, XN_OPT_WINOGRAD_LEAF_S,
                       XN_OPT_WINOGRAD_LEAF_D})
    ASSERT_EQ(xnSetOption(h, o, 256), CUBLAS_STATUS_SUCCESS);
  for (xnOption_t o : {XN_OPT_MIN_SIZE_S, XN_OPT_MIN_SIZE_D, XN_OPT_STRASSEN_MIN_SIZE_S,
                       XN_OPT_STRASSEN_MIN_SIZE_D, XN_OPT_WINOGRAD_MIN_SIZE_S,
                       XN_OPT_WINOGRAD_MIN_SIZE_D})
    ASSERT_EQ(xnSetOption(h, o, 0), CUBLAS_STATUS_SUCCESS);
}

template <class T>
std::vector<T> random_matrix(std::size_t n, std::mt19937_64 &rng, bool nonneg) {
  std::uniform_real_distribution<double> u(nonneg ? 0.0 : -1.0, 1.0);
  std::vector<T> v(n);
  for (T &x : v) x = T(u(rng));
  return v;
}

// One GEMM problem on the device: A, B, C0 (C's value before each call),
// C, and alpha/beta in device memory.
template <class T>
struct GemmProblem {
  GemmProblem(int m_, int n_, int k_, cublasOperation_t ta_, cublasOperation_t tb_,
              T alpha_, T beta_)
      : m(m_), n(n_), k(k_), ta(ta_), tb(tb_), alpha(alpha_), beta(beta_) {}
  int m, n, k;
  cublasOperation_t ta, tb;
  T alpha, beta;
  DeviceBuffer<T> A, B, C0, C, scalars;
  int lda() const { return ta == CUBLAS_OP_N ? m : k; }
  int ldb() const { return tb == CUBLAS_OP_N ? k : n; }
  void fill(std::mt19937_64 &rng, bool nonneg) {
    A.upload(random_matrix<T>(std::size_t(m) * k, rng, nonneg));
    B.upload(random_matrix<T>(std::size_t(k) * n, rng, nonneg));
    C0.upload(random_matrix<T>(std::size_t(m) * n, rng, nonneg));
    C.upload(std::vector<T>(std::size_t(m) * n, T(NAN)));
    scalars.upload({alpha, beta});
  }
  // C := C0, then the routine, enqueued on `s` (captured when s captures).
  cublasStatus_t enqueue(cublasHandle_t h, GemmFn<T> fn, cudaStream_t s, bool dev) {
    if (cudaMemcpyAsync(C.get(), C0.get(), sizeof(T) * m * n, cudaMemcpyDeviceToDevice,
                        s) != cudaSuccess)
      return CUBLAS_STATUS_EXECUTION_FAILED;
    cublasSetPointerMode(h, dev ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);
    const T *al = dev ? scalars.get() : &alpha;
    const T *be = dev ? scalars.get() + 1 : &beta;
    const cublasStatus_t st =
        fn(h, ta, tb, m, n, k, al, A.get(), lda(), B.get(), ldb(), be, C.get(), m);
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
    return st;
  }
};

class GpuGraphs : public ::testing::Test {
 protected:
  void SetUp() override {
    XN_REQUIRE_GPU();
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }

  // Captures `body` on stream_ (global mode) into an executable graph; the
  // status `body` returned; exec is null if the capture failed.
  cublasStatus_t capture(const std::function<cublasStatus_t()> &body,
                         cudaGraphExec_t *exec) {
    *exec = nullptr;
    EXPECT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
    const cublasStatus_t st = body();
    cudaGraph_t g = nullptr;
    const cudaError_t e = cudaStreamEndCapture(stream_, &g);
    EXPECT_EQ(e, cudaSuccess) << "the capture was invalidated: " << cudaGetErrorString(e);
    if (e == cudaSuccess && g) {
      EXPECT_EQ(cudaGraphInstantiate(exec, g, 0), cudaSuccess);
      cudaGraphDestroy(g);
    }
    cudaGetLastError();
    return st;
  }
  cudaStream_t stream_ = nullptr;
};

// Direct call, then capture and replays, on the same and on new data, each
// compared bit for bit with a direct call.
template <class T>
void check_replays(cudaStream_t s, cublasHandle_t h, const Routine<T> &r,
                   GemmProblem<T> &p, bool dev, std::mt19937_64 &rng, bool nonneg,
                   bool warm_up, const std::function<cublasStatus_t(
                                     const std::function<cublasStatus_t()> &,
                                     cudaGraphExec_t *)> &capture) {
  SCOPED_TRACE(std::string(r.name) + (dev ? " device scalars" : " host scalars") +
               (warm_up ? ", after a warm-up call" : ", first call on the handle"));
  XN_CUBLAS_OK(cublasSetStream(h, s));
  std::vector<T> direct;
  if (warm_up) {
    XN_CUBLAS_OK(p.enqueue(h, r.fn, s, dev));
    direct = p.C.download(s);
  }
  int direct_levels = -1;
  xnGetLastLevels(h, &direct_levels);
  cudaGraphExec_t exec = nullptr;
  const cublasStatus_t st = capture([&] { return p.enqueue(h, r.fn, s, dev); }, &exec);
  ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS);
  ASSERT_NE(exec, nullptr);
  int captured_levels = -2;
  xnGetLastLevels(h, &captured_levels);
  if (warm_up) {
    EXPECT_EQ(captured_levels, direct_levels);
  }
  for (int round = 0; round < 2; ++round) {
    if (round == 1) p.fill(rng, nonneg);  // new data in the same buffers
    for (int rep = 0; rep < 3; ++rep) {
      XN_CUDA_OK(cudaGraphLaunch(exec, s));
      XN_CUDA_OK(cudaStreamSynchronize(s));
      const std::vector<T> replayed = p.C.download(s);
      if (rep == 0) {
        XN_CUBLAS_OK(p.enqueue(h, r.fn, s, dev));
        direct = p.C.download(s);
      }
      EXPECT_TRUE(xn_test::same_bits(replayed, direct))
          << "replay " << rep << " of round " << round << " differs from a direct call";
    }
  }
  cudaGraphExecDestroy(exec);
}

template <class T>
std::vector<Routine<T>> gemm_routines();
template <>
std::vector<Routine<double>> gemm_routines<double>() {
  return {{"xnDngemm", xnDngemm},
          {"xnDgemmStrassen", xnDgemmStrassen},
          {"xnDgemmWinograd", xnDgemmWinograd},
          {"xnExdgemm", xnExdgemm}};
}
template <>
std::vector<Routine<float>> gemm_routines<float>() {
  return {{"xnSngemm", xnSngemm},
          {"xnSgemmStrassen", xnSgemmStrassen},
          {"xnSgemmWinograd", xnSgemmWinograd}};
}

template <class T>
void every_gemm_replays(GpuGraphs &t, cudaStream_t s,
                        const std::function<cublasStatus_t(
                            const std::function<cublasStatus_t()> &, cudaGraphExec_t *)>
                            &capture) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  for (const Routine<T> &r : gemm_routines<T>()) {
    const bool nonneg = std::string(r.name).find("ngemm") != std::string::npos;
    for (bool dev : {false, true}) {
      cublasHandle_t h = nullptr;
      ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
      small_leaves(h);
      GemmProblem<T> p{1024, 1100, 1030, dev ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N,
                       T(0.75), dev ? T(-1.25) : T(0)};
      p.fill(rng, nonneg);
      check_replays<T>(s, h, r, p, dev, rng, nonneg, true, capture);
      xnRelease(h);
      cublasDestroy(h);
    }
  }
  (void)t;
}

TEST_F(GpuGraphs, EveryGemmReplaysTheBitsOfDirectCalls) {
  auto cap = [this](const std::function<cublasStatus_t()> &b, cudaGraphExec_t *e) {
    return capture(b, e);
  };
  every_gemm_replays<double>(*this, stream_, cap);
  every_gemm_replays<float>(*this, stream_, cap);
}

// The defaults at the size: xnDngemm (one Winograd level at 8192)
// and xnExdgemm (the capture's fixed plan: the moduli the warm-up's
// exponent range needs, with a margin).
TEST_F(GpuGraphs, DefaultOptionsAt8192) {
  auto cap = [this](const std::function<cublasStatus_t()> &b, cudaGraphExec_t *e) {
    return capture(b, e);
  };
  std::mt19937_64 rng(xn_test::fresh_seed());
  for (const Routine<double> &r :
       {Routine<double>{"xnDngemm", xnDngemm}, Routine<double>{"xnExdgemm", xnExdgemm}}) {
    cublasHandle_t h = nullptr;
    ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    GemmProblem<double> p{8192, 8192, 8192, CUBLAS_OP_N, CUBLAS_OP_N, 1.0, 0.5};
    p.fill(rng, true);
    check_replays<double>(stream_, h, r, p, false, rng, true, true, cap);
    xnRelease(h);
    cublasDestroy(h);
  }
}

// A fresh handle with a workspace supplied by xnSetWorkspace, the way cuBLAS
// is made capturable: its first call may be captured.
TEST_F(GpuGraphs, FreshHandleWithSuppliedWorkspace) {
  auto cap = [this](const std::function<cublasStatus_t()> &b, cudaGraphExec_t *e) {
    return capture(b, e);
  };
  std::mt19937_64 rng(xn_test::fresh_seed());
  const std::size_t bytes = std::size_t(256) << 20;
  DeviceBuffer<char> ws(bytes);
  for (const Routine<double> &r : gemm_routines<double>()) {
    cublasHandle_t h = nullptr;
    ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    small_leaves(h);
    ASSERT_EQ(xnSetWorkspace(h, ws.get(), bytes), CUBLAS_STATUS_SUCCESS);
    GemmProblem<double> p{1024, 1024, 1024, CUBLAS_OP_N, CUBLAS_OP_T, -0.5, 2.0};
    p.fill(rng, true);
    check_replays<double>(stream_, h, r, p, true, rng, true, false, cap);
    xnRelease(h);
    cublasDestroy(h);
  }
}

// With XN_OPT_CHECK_NONNEG, whose scan decides on the host, a captured
// xnDngemm takes the plan that needs no decision: the classical product,
// the bits of a direct call with the recursion off.
TEST_F(GpuGraphs, CheckedNonNegativeProductCapturesTheClassicalPlan) {
  auto cap = [this](const std::function<cublasStatus_t()> &b, cudaGraphExec_t *e) {
    return capture(b, e);
  };
  std::mt19937_64 rng(xn_test::fresh_seed());
  cublasHandle_t h = nullptr, plain = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasCreate(&plain), CUBLAS_STATUS_SUCCESS);
  small_leaves(h);
  ASSERT_EQ(xnSetOption(h, XN_OPT_CHECK_NONNEG, 1), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(plain, XN_OPT_MAX_LEVELS, 0), CUBLAS_STATUS_SUCCESS);
  XN_CUBLAS_OK(cublasSetStream(h, stream_));
  XN_CUBLAS_OK(cublasSetStream(plain, stream_));
  GemmProblem<double> p(1024, 1024, 1024, CUBLAS_OP_N, CUBLAS_OP_N, 1.0, 0.5);
  p.fill(rng, true);
  XN_CUBLAS_OK(p.enqueue(h, xnDngemm, stream_, false));  // warm-up: it recurses
  int levels = 0;
  xnGetLastLevels(h, &levels);
  EXPECT_GT(levels, 0);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cap([&] { return p.enqueue(h, xnDngemm, stream_, false); }, &exec),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_NE(exec, nullptr);
  XN_CUDA_OK(cudaGraphLaunch(exec, stream_));
  const std::vector<double> replayed = p.C.download(stream_);
  XN_CUBLAS_OK(p.enqueue(plain, xnDngemm, stream_, false));
  EXPECT_TRUE(xn_test::same_bits(replayed, p.C.download(stream_)));
  cudaGraphExecDestroy(exec);
  for (cublasHandle_t x : {h, plain}) {
    xnRelease(x);
    cublasDestroy(x);
  }
}

// SYMV, both precisions, both pointer modes, after a warm-up call.
template <class T>
void symv_replays(cudaStream_t s, SymvFn<T> fn,
                  const std::function<cublasStatus_t(const std::function<cublasStatus_t()> &,
                                                     cudaGraphExec_t *)> &capture) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  const int n = 8192, lda = 8200;
  DeviceBuffer<T> A, x, y0, y, sc;
  A.upload(random_matrix<T>(std::size_t(lda) * n, rng, false));
  x.upload(random_matrix<T>(std::size_t(n), rng, false));
  y0.upload(random_matrix<T>(std::size_t(n), rng, false));
  y.upload(std::vector<T>(std::size_t(n), T(NAN)));
  const T alpha = T(1.5), beta = T(-0.25);
  sc.upload({alpha, beta});
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  XN_CUBLAS_OK(cublasSetStream(h, s));
  for (bool dev : {false, true}) {
    auto call = [&] {
      if (cudaMemcpyAsync(y.get(), y0.get(), sizeof(T) * n, cudaMemcpyDeviceToDevice, s) !=
          cudaSuccess)
        return CUBLAS_STATUS_EXECUTION_FAILED;
      cublasSetPointerMode(h, dev ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);
      const cublasStatus_t st =
          fn(h, CUBLAS_FILL_MODE_LOWER, n, dev ? sc.get() : &alpha, A.get(), lda, x.get(),
             1, dev ? sc.get() + 1 : &beta, y.get(), 1);
      cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
      return st;
    };
    XN_CUBLAS_OK(call());
    const std::vector<T> direct = y.download(s);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(capture(call, &exec), CUBLAS_STATUS_SUCCESS);
    ASSERT_NE(exec, nullptr);
    for (int rep = 0; rep < 3; ++rep) {
      XN_CUDA_OK(cudaGraphLaunch(exec, s));
      EXPECT_TRUE(xn_test::same_bits(y.download(s), direct)) << "replay " << rep;
    }
    cudaGraphExecDestroy(exec);
  }
  xnRelease(h);
  cublasDestroy(h);
}

TEST_F(GpuGraphs, SymvReplaysTheBitsOfDirectCalls) {
  auto cap = [this](const std::function<cublasStatus_t()> &b, cudaGraphExec_t *e) {
    return capture(b, e);
  };
  symv_replays<double>(stream_, xnDsymv, cap);
  symv_replays<float>(stream_, xnSsymv, cap);
}

// xnExdgemm's captured plan takes its moduli from the exponent range of the
// handle's last direct call (plus 32 bits): after a warm-up on uniforms, the
// uniforms' moduli, not all 48; after a warm-up on small integers, few
// moduli, so replays on uniforms sum their entries from the operands (slow,
// still the correctly rounded bits). A supplied workspace holds every plan.
TEST_F(GpuGraphs, ExdgemmCapturePlanFollowsTheWarmUp) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  const int m = 96, n = 80, k = 300;
  std::vector<double> uni_a(std::size_t(m) * k), uni_b(std::size_t(k) * n),
      int_a(uni_a.size()), int_b(uni_b.size());
  for (double &x : uni_a) x = xn_test::u53(rng) - 0.5;
  for (double &x : uni_b) x = xn_test::u53(rng) - 0.5;
  for (double &x : int_a) x = double(int(rng() % 201) - 100);
  for (double &x : int_b) x = double(int(rng() % 201) - 100);
  const double alpha = 1.5, beta = 0.0;
  std::vector<double> want(std::size_t(m) * n, 0.0);
  ASSERT_EQ(xn::cpu_exdgemm(false, false, m, n, k, alpha, uni_a.data(), m, uni_b.data(), k,
                            beta, want.data(), m, std::size_t(0), 0, nullptr),
            xn::Status::Ok);
  DeviceBuffer<double> dA, dB, dC, ws(std::size_t(32) << 20);  // 256 MiB
  for (const bool narrow_warm_up : {false, true}) {
    cublasHandle_t h = nullptr;
    ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    XN_CUBLAS_OK(cublasSetStream(h, stream_));
    XN_CUBLAS_OK(xnSetWorkspace(h, ws.get(), ws.size() * sizeof(double)));
    dA.upload(narrow_warm_up ? int_a : uni_a, stream_);
    dB.upload(narrow_warm_up ? int_b : uni_b, stream_);
    dC.upload(std::vector<double>(std::size_t(m) * n, NAN), stream_);
    auto call = [&] {
      return xnExdgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA.get(), m,
                       dB.get(), k, &beta, dC.get(), m);
    };
    XN_CUBLAS_OK(call());  // the warm-up
    XN_CUDA_OK(cudaStreamSynchronize(stream_));
    const xn::HandleState *st = xn::find_handle_state(h);
    ASSERT_NE(st, nullptr);
    const int spans = st->ex_last_direct_span_bits;
    EXPECT_GT(spans, 0);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(capture(call, &exec), CUBLAS_STATUS_SUCCESS);
    ASSERT_NE(exec, nullptr);
    xnExdgemmInfo_t info{};
    ASSERT_EQ(xnGetLastExdgemmInfo(h, &info), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(info.moduli, xn::exact::moduli_for_bits(1 + 9 + spans + 32))
        << (narrow_warm_up ? "integer" : "uniform") << " warm-up, spans " << spans;
    EXPECT_LT(info.moduli, xn::exact::kMaxModuli);
    // Replays on the uniforms (after a narrow warm-up: new data).
    dA.upload(uni_a, stream_);
    dB.upload(uni_b, stream_);
    dC.upload(std::vector<double>(std::size_t(m) * n, NAN), stream_);
    XN_CUDA_OK(cudaGraphLaunch(exec, stream_));
    XN_CUDA_OK(cudaStreamSynchronize(stream_));
    EXPECT_TRUE(xn_test::same_bits(dC.download(stream_), want))
        << (narrow_warm_up ? "integer" : "uniform") << " warm-up: replay on uniforms";
    cudaGraphExecDestroy(exec);
    xnRelease(h);
    cublasDestroy(h);
  }
}

// xnExdgemm's captured plan on data whose rows span more binades than its
// moduli hold: those entries are summed from their operands on the device,
// and every entry is still the correctly rounded one (the CPU backend's
// bits), Inf/NaN and signed zeros included.
TEST_F(GpuGraphs, ExdgemmWideRangeRowsUnderCapture) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  const int m = 130, n = 70, k = 200;
  std::vector<double> a(std::size_t(m) * k), b(std::size_t(k) * n), c0(std::size_t(m) * n);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (double &x : a) x = u(rng);
  for (double &x : b) x = u(rng);
  for (double &x : c0) x = u(rng);
  for (int i = 0; i < m; i += 3) a[std::size_t(i)] = std::ldexp(u(rng), 600);  // wide rows
  for (int i = 1; i < m; i += 7) a[std::size_t(i + 5 * m)] = std::ldexp(u(rng), -700);
  a[std::size_t(2 + 9 * m)] = INFINITY;
  for (int p = 0; p < k; ++p) a[std::size_t(4 + std::size_t(p) * m)] = -0.0;  // a -0 row
  const double alpha = 0.3, beta = -2.0;
  std::vector<double> want = c0;
  ASSERT_EQ(xn::cpu_exdgemm(false, false, m, n, k, alpha, a.data(), m, b.data(), k, beta,
                            want.data(), m, std::size_t(0), 0, nullptr),
            xn::Status::Ok);
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  XN_CUBLAS_OK(cublasSetStream(h, stream_));
  DeviceBuffer<double> dA, dB, dC0, dC;
  dA.upload(a);
  dB.upload(b);
  dC0.upload(c0);
  dC.upload(c0);
  auto call = [&] {
    if (cudaMemcpyAsync(dC.get(), dC0.get(), sizeof(double) * m * n,
                        cudaMemcpyDeviceToDevice, stream_) != cudaSuccess)
      return CUBLAS_STATUS_EXECUTION_FAILED;
    return xnExdgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA.get(), m, dB.get(),
                     k, &beta, dC.get(), m);
  };
  XN_CUBLAS_OK(call());  // the warm-up: the handle's workspace
  EXPECT_TRUE(xn_test::same_bits(dC.download(stream_), want)) << "direct call";
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(capture(call, &exec), CUBLAS_STATUS_SUCCESS);
  ASSERT_NE(exec, nullptr);
  xnExdgemmInfo_t info{};
  ASSERT_EQ(xnGetLastExdgemmInfo(h, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(info.engine, 2) << "the captured plan is the modular engine";
  for (int rep = 0; rep < 2; ++rep) {
    XN_CUDA_OK(cudaGraphLaunch(exec, stream_));
    const std::vector<double> got = dC.download(stream_);
    int bad = 0;
    for (std::size_t e = 0; e < got.size(); ++e)
      if (!xn_test::same_bits(std::vector<double>{got[e]}, std::vector<double>{want[e]}) &&
          !(std::isnan(got[e]) && std::isnan(want[e])) && bad++ < 5)
        ADD_FAILURE() << "entry " << e << ": got " << std::hexfloat << got[e] << " want "
                      << want[e] << std::defaultfloat;
    EXPECT_EQ(bad, 0);
  }
  cudaGraphExecDestroy(exec);
  xnRelease(h);
  cublasDestroy(h);
}

// Calls that cannot be captured see it before they enqueue anything: status
// NOT_SUPPORTED, and the caller's capture stays valid (what it captured
// before and after runs).
TEST_F(GpuGraphs, UncapturableCallsLeaveTheCaptureValid) {
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  XN_CUBLAS_OK(cublasSetStream(h, stream_));
  DeviceBuffer<double> A(std::size_t(64) * 131073), B(131073), C(64), flag(1);
  XN_CUDA_OK(cudaMemset(A.get(), 0, sizeof(double) * 64 * 131073));
  XN_CUDA_OK(cudaMemset(B.get(), 0, sizeof(double) * 131073));
  const double one = 1.0, zero = 0.0;
  XN_CUDA_OK(cudaMemset(flag.get(), 0, sizeof(double)));
  cudaGraphExec_t exec = nullptr;
  const cublasStatus_t st = capture(
      [&] {
        cudaMemsetAsync(flag.get(), 0xff, sizeof(double), stream_);
        // A fresh handle owns no workspace: exdgemm's plan cannot fit.
        const cublasStatus_t a = xnExdgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 1, 64, &one,
                                           A.get(), 64, B.get(), 64, &zero, C.get(), 64);
        EXPECT_EQ(a, CUBLAS_STATUS_NOT_SUPPORTED) << "exdgemm without a workspace";
        // SYMV without its workspace.
        const cublasStatus_t b = xnDsymv(h, CUBLAS_FILL_MODE_UPPER, 64, &one, A.get(), 64,
                                         B.get(), 1, &zero, C.get(), 1);
        EXPECT_EQ(b, CUBLAS_STATUS_NOT_SUPPORTED) << "symv without a workspace";
        return CUBLAS_STATUS_SUCCESS;
      },
      &exec);
  EXPECT_EQ(st, CUBLAS_STATUS_SUCCESS);
  ASSERT_NE(exec, nullptr);
  XN_CUDA_OK(cudaGraphLaunch(exec, stream_));
  XN_CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_TRUE(std::isnan(flag.download(stream_)[0])) << "the capture's own work ran";
  cudaGraphExecDestroy(exec);

  // k beyond the INT8 engine's exact int32 accumulation (2^17): its chunks
  // are reduced on the device between rounds, so after a warm-up the call
  // is captured, and replays give the direct call's bits.
  {
    std::mt19937_64 rng(xn_test::fresh_seed());
    std::vector<double> a(std::size_t(64) * 131073), b(131073);
    for (double &x : a) x = xn_test::u53(rng) - 0.5;
    for (double &x : b) x = xn_test::u53(rng) - 0.5;
    A.upload(a, stream_);
    B.upload(b, stream_);
    XN_CUBLAS_OK(xnExdgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 1, 131073, &one, A.get(), 64,
                           B.get(), 131073, &zero, C.get(), 64));
    const std::vector<double> direct = C.download(stream_);
    XN_CUDA_OK(cudaMemsetAsync(C.get(), 0xff, sizeof(double) * 64, stream_));
    const cublasStatus_t sk = capture(
        [&] {
          return xnExdgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 1, 131073, &one, A.get(), 64,
                           B.get(), 131073, &zero, C.get(), 64);
        },
        &exec);
    EXPECT_EQ(sk, CUBLAS_STATUS_SUCCESS) << "exdgemm with k = 2^17 + 1";
    if (exec) {
      XN_CUDA_OK(cudaGraphLaunch(exec, stream_));
      XN_CUDA_OK(cudaStreamSynchronize(stream_));
      EXPECT_TRUE(xn_test::same_bits(C.download(stream_), direct))
          << "the replay of k = 2^17 + 1";
      cudaGraphExecDestroy(exec);
    }
  }
  xnRelease(h);
  cublasDestroy(h);
}

// xnExdgemv (unit, strided and negative increments) and xnExddot with a
// device result replay the bits of direct calls after a warm-up (the parts
// live in the handle's workspace, which the warm-up sized); a host-memory
// dot result is refused inside the capture, which stays valid.
TEST_F(GpuGraphs, ExdgemvAndExddotReplayTheBitsOfDirectCalls) {
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  XN_CUBLAS_OK(cublasSetStream(h, stream_));
  std::mt19937_64 rng(xn_test::fresh_seed());
  const int m = 300, n = 257;
  DeviceBuffer<double> A, x, y0, y, r;
  A.upload(random_matrix<double>(std::size_t(m) * n, rng, false));
  x.upload(random_matrix<double>(std::size_t(3) * m, rng, false));
  y0.upload(random_matrix<double>(std::size_t(3) * m, rng, false));
  y.upload(std::vector<double>(std::size_t(3) * m, NAN));
  r.upload({NAN});
  const double alpha = 1.5, beta = -0.25;
  const int incs[][2] = {{1, 1}, {3, 2}, {-2, -1}};
  for (const auto &inc : incs) {
    auto gemv = [&] {
      if (cudaMemcpyAsync(y.get(), y0.get(), sizeof(double) * 3 * m,
                          cudaMemcpyDeviceToDevice, stream_) != cudaSuccess)
        return CUBLAS_STATUS_EXECUTION_FAILED;
      return xnExdgemv(h, CUBLAS_OP_T, m, n, &alpha, A.get(), m, x.get(), inc[0], &beta,
                       y.get(), inc[1]);
    };
    auto dot = [&] {
      cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
      const cublasStatus_t st = xnExddot(h, m, x.get(), inc[0], y0.get(), inc[1], r.get());
      cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
      return st;
    };
    for (const bool is_gemv : {true, false}) {
      const std::function<cublasStatus_t()> call = is_gemv
                                                      ? std::function<cublasStatus_t()>(gemv)
                                                      : std::function<cublasStatus_t()>(dot);
      DeviceBuffer<double> &out = is_gemv ? y : r;
      XN_CUBLAS_OK(call());
      const std::vector<double> direct = out.download(stream_);
      XN_CUDA_OK(cudaMemsetAsync(out.get(), 0xff, sizeof(double) * direct.size(), stream_));
      cudaGraphExec_t exec = nullptr;
      ASSERT_EQ(capture(call, &exec), CUBLAS_STATUS_SUCCESS)
          << (is_gemv ? "gemv" : "dot") << " incx " << inc[0] << " incy " << inc[1];
      ASSERT_NE(exec, nullptr);
      for (int rep = 0; rep < 2; ++rep) {
        XN_CUDA_OK(cudaGraphLaunch(exec, stream_));
        EXPECT_TRUE(xn_test::same_bits(out.download(stream_), direct))
            << (is_gemv ? "gemv" : "dot") << " incx " << inc[0] << " incy " << inc[1]
            << " replay " << rep;
      }
      cudaGraphExecDestroy(exec);
    }
  }
  double host_result = 0;
  cudaGraphExec_t exec = nullptr;
  EXPECT_EQ(capture([&] { return xnExddot(h, m, x.get(), 1, y0.get(), 1, &host_result); },
                    &exec),
            CUBLAS_STATUS_NOT_SUPPORTED);
  if (exec) cudaGraphExecDestroy(exec);
  xnRelease(h);
  cublasDestroy(h);
}

// A capture that the caller's own mistake invalidated, and failed
// allocations: later calls on the same handle and on new ones run and give
// the right bits.
TEST_F(GpuGraphs, FailuresNeverAffectLaterCalls) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  const std::vector<Routine<double>> routines = gemm_routines<double>();
  cublasHandle_t ref = nullptr;
  ASSERT_EQ(cublasCreate(&ref), CUBLAS_STATUS_SUCCESS);
  small_leaves(ref);
  GemmProblem<double> p{768, 700, 640, CUBLAS_OP_N, CUBLAS_OP_N, 1.0, 0.5};
  p.fill(rng, true);
  std::vector<std::vector<double>> want;
  for (const Routine<double> &r : routines) {
    XN_CUBLAS_OK(p.enqueue(ref, r.fn, nullptr, false));
    want.push_back(p.C.download());
  }
  auto all_right = [&](cublasHandle_t h, const char *when) {
    XN_CUBLAS_OK(cublasSetStream(h, stream_));
    for (std::size_t i = 0; i < routines.size(); ++i) {
      EXPECT_EQ(p.enqueue(h, routines[i].fn, stream_, false), CUBLAS_STATUS_SUCCESS)
          << routines[i].name << " " << when;
      EXPECT_TRUE(xn_test::same_bits(p.C.download(stream_), want[i]))
          << routines[i].name << " " << when;
    }
  };

  // 1. The caller invalidates its own global capture (a cudaMalloc in the
  // capturing thread) around library calls on a fresh handle.
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  small_leaves(h);
  XN_CUBLAS_OK(cublasSetStream(h, stream_));
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  for (const Routine<double> &r : routines) (void)p.enqueue(h, r.fn, stream_, false);
  void *bad = nullptr;
  EXPECT_NE(cudaMalloc(&bad, 256), cudaSuccess) << "cudaMalloc inside a global capture";
  cudaGetLastError();
  for (const Routine<double> &r : routines)
    EXPECT_NE(r.fn(h, p.ta, p.tb, p.m, p.n, p.k, &p.alpha, p.A.get(), p.lda(), p.B.get(),
                   p.ldb(), &p.beta, p.C.get(), p.m),
              CUBLAS_STATUS_SUCCESS)
        << r.name << " on an invalidated capture";
  cudaGraph_t g = nullptr;
  EXPECT_NE(cudaStreamEndCapture(stream_, &g), cudaSuccess);
  if (g) cudaGraphDestroy(g);
  cudaGetLastError();
  all_right(h, "after a failed capture");
  cublasHandle_t fresh = nullptr;
  ASSERT_EQ(cublasCreate(&fresh), CUBLAS_STATUS_SUCCESS);
  small_leaves(fresh);
  all_right(fresh, "on a new handle after a failed capture");

  // 2. Allocations that fail (test hook): the recursive products run with
  // fewer levels, exdgemm and SYMV report ALLOC_FAILED; afterwards all is as
  // before.
  cublasHandle_t starved = nullptr;
  ASSERT_EQ(cublasCreate(&starved), CUBLAS_STATUS_SUCCESS);
  small_leaves(starved);
  XN_CUBLAS_OK(cublasSetStream(starved, stream_));
  xn::testing::set_fail_workspace_allocations(true);
  EXPECT_EQ(p.enqueue(starved, xnDngemm, stream_, false), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(p.enqueue(starved, xnExdgemm, stream_, false), CUBLAS_STATUS_ALLOC_FAILED);
  xn::testing::set_fail_workspace_allocations(false);
  all_right(starved, "after failed allocations");
  all_right(fresh, "on another handle after failed allocations");

  for (cublasHandle_t x : {ref, h, fresh, starved}) {
    xnRelease(x);
    cublasDestroy(x);
  }
}

// Another thread's global capture is never invalidated by the library's
// own allocations on this thread (a fresh handle's constants, its
// workspace): they run in the relaxed capture mode.
TEST_F(GpuGraphs, AnotherThreadsCaptureStaysValid) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  GemmProblem<double> p{1024, 1024, 1024, CUBLAS_OP_N, CUBLAS_OP_N, 1.0, 0.0};
  p.fill(rng, true);
  DeviceBuffer<double> flag(1);
  cudaStream_t other = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  // cuBLAS's own handle is made before the capture (cublasCreate allocates);
  // the library has seen nothing of it yet.
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  XN_CUBLAS_OK(cublasSetStream(h, other));
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  cudaMemsetAsync(flag.get(), 0, sizeof(double), stream_);
  std::thread worker([&] {
    small_leaves(h);
    for (const Routine<double> &r : gemm_routines<double>()) {
      EXPECT_EQ(p.enqueue(h, r.fn, other, false), CUBLAS_STATUS_SUCCESS) << r.name;
      cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
      EXPECT_EQ(cudaStreamIsCapturing(stream_, &st), cudaSuccess);
      EXPECT_EQ(st, cudaStreamCaptureStatusActive)
          << r.name << " invalidated the other thread's capture";
    }
  });
  worker.join();
  cudaGraph_t g = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(stream_, &g), cudaSuccess)
      << "the library invalidated another thread's capture";
  if (g) cudaGraphDestroy(g);
  cudaGetLastError();
  EXPECT_EQ(cudaStreamSynchronize(other), cudaSuccess);
  xnRelease(h);
  cublasDestroy(h);
  cudaStreamDestroy(other);
}

}  // namespace
