// test_exdgemm_ieee_gpu.cpp - the IEEE contract of xnExdgemm on the GPU
// (label gpu; skipped without a device): the families of
// support/ieee_families.h, every entry bit for bit against the IEEE oracle
// and against the CPU backend, under all four transpose pairs with padded
// leading dimensions, the engine forced both ways (XN_OPT_EXDGEMM_ENGINE 1
// and 2), host and device pointer modes, the automatic and a forced 64 block
// (XN_OPT_EXDGEMM_BLOCK) where C has more than one. Each test is one family
// on one path and stops at the first wrong entry.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_exdgemm.h"
#include "support/gpu_support.h"
#include "support/ieee_families.h"
#include "support/test_support.h"
#include "xngemm.h"

namespace {

using xn_test::DeviceBuffer;
using xn_test::IeeeFamily;
using xn_test::IeeeProblem;
using xn_test::IeeeStored;

struct GpuPath {
  int engine;  // XN_OPT_EXDGEMM_ENGINE: 1 slices, 2 modular
  bool device_scalars;
};

std::string path_name(const GpuPath &p) {
  return std::string(p.engine == 1 ? "slices" : "modular") +
         (p.device_scalars ? ", device pointers" : ", host pointers");
}

// gtest prints the parameter in test names: the path's name, not its bytes
// (the struct's padding would differ from run to run).
void PrintTo(const GpuPath &p, std::ostream *os) { *os << path_name(p); }

class ExdgemmIeeeGpu
    : public xn_test::CublasHandleFixture<::testing::TestWithParam<GpuPath>> {
 protected:
  // One call; "" or what went wrong with the call itself.
  std::string call(const IeeeProblem &p, const IeeeStored &s, std::vector<double> *out) {
    const GpuPath path = GetParam();
    DeviceBuffer<double> dA, dB, dC, dS(2);
    dA.upload(s.A);
    dB.upload(s.B);
    dC.upload(s.C);
    dS.upload({p.alpha, p.beta});
    cublasSetPointerMode(
        h_, path.device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);
    const double *al = path.device_scalars ? dS.get() : &p.alpha;
    const double *be = path.device_scalars ? dS.get() + 1 : &p.beta;
    const cublasStatus_t st =
        xnExdgemm(h_, s.ta ? CUBLAS_OP_T : CUBLAS_OP_N, s.tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                  int(p.m), int(p.n), int(p.k), al, dA.get(), int(s.lda), dB.get(),
                  int(s.ldb), be, dC.get(), int(s.ldc));
    const cudaError_t sync = cudaDeviceSynchronize();
    cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST);
    *out = dC.download();
    if (st != CUBLAS_STATUS_SUCCESS) return "xnExdgemm status " + std::to_string(int(st));
    if (sync != cudaSuccess) return std::string("CUDA error ") + cudaGetErrorString(sync);
    return "";
  }

  std::string run_problem(const IeeeProblem &p, const std::vector<double> &want,
                          std::mt19937_64 &rng, std::int64_t *checked,
                          std::int64_t *calls) {
    const std::vector<std::int64_t> blocks = p.m > 64 || p.n > 64
                                                 ? std::vector<std::int64_t>{0, 64}
                                                 : std::vector<std::int64_t>{0};
    for (int t = 0; t < 4; ++t) {
      const IeeeStored s =
          xn_test::ieee_store(p, t & 1, t & 2, false, xn_test::ieee_pad(t, rng));
      // The CPU backend (automatic engine) on the same arguments.
      std::vector<double> cpu = s.C;
      const xn::Status cst =
          xn::cpu_exdgemm(s.ta, s.tb, p.m, p.n, p.k, p.alpha, s.A.data(), s.lda,
                          s.B.data(), s.ldb, p.beta, cpu.data(), s.ldc, 0, 0, nullptr);
      for (const std::int64_t block : blocks) {
        EXPECT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, GetParam().engine),
                  CUBLAS_STATUS_SUCCESS);
        EXPECT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_BLOCK, block), CUBLAS_STATUS_SUCCESS);
        std::vector<double> got;
        const std::string err = call(p, s, &got);
        ++*calls;
        const std::string where =
            std::string("xnExdgemm ta=") + (s.ta ? "T" : "N") +
            " tb=" + (s.tb ? "T" : "N") + " lda=" + std::to_string(s.lda) +
            " ldb=" + std::to_string(s.ldb) + " ldc=" + std::to_string(s.ldc) +
            " block=" + std::to_string(block);
        std::string msg = xn_test::ieee_first_mismatch(p, s, got, want, where, checked);
        if (!err.empty()) msg = p.name + " [" + where + "]: " + err + "\n  " + msg;
        if (!msg.empty()) return msg;
        // Bit for bit the CPU backend's (which may itself be wrong: then
        // the CPU suite fails too).
        for (std::size_t idx = 0; idx < got.size(); ++idx)
          if (!xn_test::ieee_same(got[idx], cpu[idx]))
            return p.name + " [" + where + "]: GPU " + xn_test::ieee_hex(got[idx]) +
                   " != CPU backend " + xn_test::ieee_hex(cpu[idx]) + " at C[" +
                   std::to_string(idx) + "] (CPU status " + std::to_string(int(cst)) +
                   ")";
      }
    }
    return "";
  }

  void run_family(const IeeeFamily &f, std::uint64_t seed) {
    std::mt19937_64 rng(seed ^ 0x9e3779b9u);
    std::int64_t checked = 0, calls = 0, problems = 0;
    std::string failure;
    for (const IeeeProblem &p : f.problems) {
      const std::vector<double> want = xn_test::ieee_expected(p);
      const std::string bad = xn_test::ieee_check_known(p, want);
      if (!bad.empty()) {
        failure = "ORACLE OR FAMILY WRONG (not a library bug): " + bad;
        break;
      }
      ++problems;
      failure = run_problem(p, want, rng, &checked, &calls);
      if (!failure.empty()) break;
    }
    xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 0);
    xnSetOption(h_, XN_OPT_EXDGEMM_BLOCK, 0);
    std::printf(
        "[ieee gpu] %-28s %-26s %8lld entries checked, %6lld calls, %4lld/%zu "
        "problems%s\n",
        f.name.c_str(), path_name(GetParam()).c_str(), (long long)checked,
        (long long)calls, (long long)problems, f.problems.size(),
        failure.empty() ? "" : " (stopped at a wrong entry)");
    if (!failure.empty())
      ADD_FAILURE() << path_name(GetParam()) << ": " << failure << "\n"
                    << xn_test::describe_seed(seed);
  }

};

TEST_P(ExdgemmIeeeGpu, IssueExamples) {
  run_family(xn_test::ieee_issue_family(), xn_test::fresh_seed());
}

TEST_P(ExdgemmIeeeGpu, Boundaries) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  run_family(xn_test::ieee_boundary_family(rng), seed);
}

TEST_P(ExdgemmIeeeGpu, Specials) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  run_family(xn_test::ieee_special_family(rng), seed);
}

TEST_P(ExdgemmIeeeGpu, SignedZeros) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  run_family(xn_test::ieee_signed_zero_family(rng), seed);
}

TEST_P(ExdgemmIeeeGpu, NoNonzeroFiniteEntry) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  run_family(xn_test::ieee_no_finite_family(rng), seed);
}

TEST_P(ExdgemmIeeeGpu, PlantedInRandomMatrices) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  run_family(xn_test::ieee_planted_family(rng), seed);
}

INSTANTIATE_TEST_SUITE_P(Paths, ExdgemmIeeeGpu,
                         ::testing::Values(GpuPath{1, false}, GpuPath{1, true},
                                           GpuPath{2, false}, GpuPath{2, true}),
                         [](const ::testing::TestParamInfo<GpuPath> &i) {
                           return std::string(i.param.engine == 1 ? "Slices"
                                                                  : "Modular") +
                                  (i.param.device_scalars ? "DevicePointers"
                                                          : "HostPointers");
                         });

}  // namespace
