// test_api_workspace_gpu.cpp - the handle's workspace growing inside calls
// (label gpu; skipped without a device). A sequence of calls, each
// outgrowing the workspace of the ones before it (the batched engine's
// copy of its summaries into the grown workspace, about 50 MB to 117 MB;
// xnExdgemm's blocks), runs on a default handle (the legacy default
// stream) and on a handle with a created stream, in three rounds on fresh
// handles (the last two beside a handle that keeps a workspace, so that the
// library's pool keeps and reuses what a round gave up): every call
// succeeds, its stream reports no fault, C has the bits of the same call on
// a handle whose workspace was supplied large enough (xnSetWorkspace:
// nothing grows), the workspaces are in the library's pool, and the pool
// goes back to the device once no handle holds a workspace.
//
// Also run as eight copies at once (api_workspace_growth_concurrent,
// scripts/run_concurrent.sh): with the workspaces in the default pool, 7 of
// the 8 faulted (illegal address; docs/design.md, "Workspace": "Where the
// memory comes from").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/device_pool.h"
#include "support/exdgemm_inputs.h"
#include "support/gpu_support.h"
#include "xngemm.h"

namespace {

using xn_test::DeviceBuffer;

// One call of the sequence: a strided batch (count > 1) or one xnExdgemm
// (count 1, strides 0), C = alpha op(A) op(B) + beta C.
struct GrowthCall {
  bool ta, tb;
  int m, n, k, lda, ldb, ldc, count;
  std::int64_t stride_a, stride_b, stride_c;
  double alpha, beta, phi;
};

// clang-format off
const GrowthCall kSequence[] = {
    // ta, tb, m, n, k, lda, ldb, ldc, count, strides (A, B, C), alpha, beta, phi
    {false, false, 200, 300, 272, 201, 272, 203, 3, 201 * 272 + 7, 272 * 300, 203 * 300 + 1,
     1.5, 0.0, 1.0},
    {true, false, 256, 130, 1024, 1024, 1030, 256, 2, 1024 * 256, 1030 * 130, 256 * 130,
     -1.0, -0.5, 0.0},
    {true, true, 129, 257, 48, 48, 260, 129, 5, 48 * 129, 260 * 48, 129 * 257 + 9,
     0.75, 2.0, 2.0},
    {false, true, 16, 144, 4000, 16, 144, 16, 4, 16 * 4000, 144 * 4000, 16 * 144,
     1.0, 1.0, 0.5},
    {false, false, 256, 256, 256, 256, 256, 256, 1, 0, 0, 0, 1.0, 0.0, 1.0},
    {true, false, 2048, 2048, 2048, 2048, 2048, 2048, 1, 0, 0, 0, -1.0, 0.5, 1.0},
};
// clang-format on

struct Operands {
  std::vector<double> A, B, C;
};

std::size_t elements(std::int64_t stride, int count, int ld, int cols) {
  return std::size_t(stride * (count - 1)) + std::size_t(ld) * std::size_t(cols);
}

// (u - 0.5) exp(phi randn), every 7th entry scaled by 2^+-40; C NaN where
// beta = 0 (never read).
Operands draw(const GrowthCall &c, std::mt19937_64 &rng) {
  std::normal_distribution<double> randn(0.0, 1.0);
  auto fill = [&](std::size_t count, double phi) {
    std::vector<double> v(count);
    for (std::size_t i = 0; i < count; ++i) {
      v[i] = (xn_test::u53(rng) - 0.5) * std::exp(phi * randn(rng));
      if (i % 7 == 3) v[i] = std::ldexp(v[i], (rng() & 1) ? 40 : -40);
    }
    return v;
  };
  Operands x;
  x.A = fill(elements(c.stride_a, c.count, c.lda, c.ta ? c.m : c.k), c.phi);
  x.B = fill(elements(c.stride_b, c.count, c.ldb, c.tb ? c.k : c.n), c.phi);
  const std::size_t size_c = elements(c.stride_c, c.count, c.ldc, c.n);
  x.C = c.beta != 0.0 ? fill(size_c, 0.0)
                      : std::vector<double>(size_c, std::numeric_limits<double>::quiet_NaN());
  return x;
}

std::string describe(const GrowthCall &c) {
  return std::to_string(c.count) + " x " + std::to_string(c.m) + "x" + std::to_string(c.n) +
         "x" + std::to_string(c.k);
}

class GpuWorkspaceGrowth : public ::testing::Test {
 protected:
  void SetUp() override {
    XN_REQUIRE_GPU();
    const std::uint64_t seed = xn_test::fresh_seed();
    seed_trace_ = xn_test::describe_seed(seed);
    SCOPED_TRACE(seed_trace_);
    XN_CUDA_OK(cudaGetDevice(&device_));
    std::mt19937_64 rng(seed);
    for (const GrowthCall &c : kSequence) inputs_.push_back(draw(c, rng));
    run_on_presized_handle();
  }

  // The sequence's C after each call on handle h (on its stream) to *out;
  // with `held`, the workspace the handle holds after each call. A fault
  // stops the sequence (a fatal failure).
  void run(cublasHandle_t h, std::vector<std::vector<double>> *out,
           std::vector<std::size_t> *held) {
    cudaStream_t s = nullptr;
    XN_CUBLAS_OK(cublasGetStream(h, &s));
    for (std::size_t i = 0; i < std::size(kSequence); ++i) {
      const GrowthCall &c = kSequence[i];
      SCOPED_TRACE(describe(c));
      DeviceBuffer<double> dA, dB, dC;
      dA.upload(inputs_[i].A, s), dB.upload(inputs_[i].B, s), dC.upload(inputs_[i].C, s);
      const cublasOperation_t ta = c.ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                              tb = c.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
      const cublasStatus_t st =
          c.count > 1
              ? xnExdgemmStridedBatched(h, ta, tb, c.m, c.n, c.k, &c.alpha, dA.get(), c.lda,
                                        c.stride_a, dB.get(), c.ldb, c.stride_b, &c.beta,
                                        dC.get(), c.ldc, c.stride_c, c.count)
              : xnExdgemm(h, ta, tb, c.m, c.n, c.k, &c.alpha, dA.get(), c.lda, dB.get(), c.ldb,
                          &c.beta, dC.get(), c.ldc);
      EXPECT_EQ(st, CUBLAS_STATUS_SUCCESS);
      XN_CUDA_OK(cudaStreamSynchronize(s));  // (a fault in the call names it here)
      out->push_back(dC.download(s));
      if (held) {
        std::size_t bytes = 0;
        XN_CUBLAS_OK(xnGetWorkspaceHeld(h, &bytes));
        held->push_back(bytes);
      }
    }
  }

  // The reference: a supplied workspace, so nothing grows (a call that
  // would want more works in smaller blocks of C, with the same bits).
  void run_on_presized_handle() {
    constexpr std::size_t kBytes = std::size_t(256) << 20;
    DeviceBuffer<char> ws(kBytes);
    Handle h;
    ASSERT_EQ(xnSetWorkspace(h.get(), ws.get(), kBytes), CUBLAS_STATUS_SUCCESS);
    run(h.get(), &reference_, nullptr);
  }

  // Three rounds on fresh handles, on `stream` (nullptr: the default
  // handle's legacy stream): the workspace grows, in the library's pool,
  // and every C has the reference's bits. From the second round a handle
  // keeping a small workspace stands beside them (the pool then keeps what
  // a round gave up); released, the pool is given back.
  void check_growth(cudaStream_t stream) {
    SCOPED_TRACE(seed_trace_);
    ASSERT_EQ(xn::pool_bytes(device_).used, 0u) << "no workspace yet";
    Handle keeper;
    for (int round = 0; round < 3; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      if (round == 1) {
        ASSERT_NO_FATAL_FAILURE(keep_a_workspace(keeper.get()));
      }
      Handle h;
      if (stream) {
        ASSERT_EQ(cublasSetStream(h.get(), stream), CUBLAS_STATUS_SUCCESS);
      }
      std::vector<std::vector<double>> got;
      std::vector<std::size_t> held;
      run(h.get(), &got, &held);
      if (HasFatalFailure()) return;
      EXPECT_GE(xn::pool_bytes(device_).used, held.back()) << "the workspace is the pool's";
      h.reset();
      const xn::PoolBytes after = xn::pool_bytes(device_);
      if (round == 0) {
        EXPECT_EQ(after.reserved, 0u) << "the pool, unused, goes back to the device";
      } else {
        EXPECT_GT(after.reserved, after.used) << "the pool keeps what the round gave up";
      }
      ASSERT_EQ(got.size(), reference_.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(std::memcmp(got[i].data(), reference_[i].data(),
                              got[i].size() * sizeof(double)),
                  0)
            << describe(kSequence[i]) << ": not the presized handle's bits";
      // The batched engine's copy of its summaries happens where the fourth
      // call outgrows the third's workspace; the last call grows it again.
      ASSERT_EQ(held.size(), std::size(kSequence));
      EXPECT_GT(held[3], held[2]);
      EXPECT_GT(held[5], held[4]);
    }
    keeper.reset();
    EXPECT_EQ(xn::pool_bytes(device_).reserved, 0u) << "given back with the last workspace";
  }

  // One small xnExdgemm on h: a workspace of its own in the pool.
  void keep_a_workspace(cublasHandle_t h) {
    const double one = 1.0, zero = 0.0;
    DeviceBuffer<double> dA, dC;
    dA.upload(std::vector<double>(64 * 64, 0.5));
    dC.upload(std::vector<double>(64 * 64, 0.0));
    XN_CUBLAS_OK(xnExdgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, dA.get(), 64,
                           dA.get(), 64, &zero, dC.get(), 64));
    XN_CUDA_OK(cudaDeviceSynchronize());
    std::size_t held = 0;
    XN_CUBLAS_OK(xnGetWorkspaceHeld(h, &held));
    ASSERT_GT(held, 0u);
  }

  // A cuBLAS handle, released with xNGEMM's state when it goes.
  class Handle {
   public:
    Handle() { EXPECT_EQ(cublasCreate(&h_), CUBLAS_STATUS_SUCCESS); }
    ~Handle() { reset(); }
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    cublasHandle_t get() const { return h_; }
    void reset() {
      if (!h_) return;
      xnRelease(h_);
      cublasDestroy(h_);
      h_ = nullptr;
    }

   private:
    cublasHandle_t h_ = nullptr;
  };

  int device_ = 0;
  std::string seed_trace_;
  std::vector<Operands> inputs_;
  std::vector<std::vector<double>> reference_;
};

TEST_F(GpuWorkspaceGrowth, LegacyDefaultStream) { check_growth(nullptr); }

TEST_F(GpuWorkspaceGrowth, CreatedStream) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  check_growth(s);
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

}  // namespace
