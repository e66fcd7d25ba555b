// test_api_depth_model_gpu.cpp - the depth model on the device (labels api
// and gpu; skipped without one): the built-in model of the card, what
// xnGetLastGemmInfo reports for each routine, the options' precedence,
// the workspace query planning the call's depth, and xnCalibrate writing
// the cache file that the next calls (and processes) use.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cuda/device_model_cuda.h"
#include "core/calibration_cache.h"
#include "core/gemm_driver.h"
#include "core/options.h"
#include "core/schedule.h"
#include "support/gpu_support.h"
#include "support/test_support.h"
#include "xngemm.h"

namespace {

using xn_test::DeviceBuffer;

class GpuDepthModel : public xn_test::CublasHandleFixture<> {
 protected:
  // Uniform [-1, 1) n x n operands (and C) on the device.
  void inputs(int n) {
    std::mt19937_64 rng(xn_test::fresh_seed());
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> h(std::size_t(n) * n);
    for (double &x : h) x = u(rng);
    a_.upload(h);
    for (double &x : h) x = u(rng);
    b_.upload(h);
    c_.resize(h.size());
  }
  cublasStatus_t strassen(int n) {
    const double one = 1, zero = 0;
    return xnDgemmStrassen(h_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a_.get(), n,
                           b_.get(), n, &zero, c_.get(), n);
  }
  DeviceBuffer<double> a_, b_, c_;
};

TEST_F(GpuDepthModel, TheCardHasAModelAndCallsReportIt) {
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  xn::DeviceTraits traits;
  ASSERT_EQ(xn::query_device_traits(device, &traits), xn::Status::Ok);
  EXPECT_GT(traits.sm_count, 0);
  EXPECT_GT(traits.memory_bandwidth(), 1e11);
  EXPECT_EQ(traits.uuid.size(), 32u);
  EXPECT_GT(traits.blas_version, 0);
  const auto builtin = xn::device_depth_model(false);
  ASSERT_TRUE(builtin->usable());
  // The machines lend Hopper cards of 132 multiprocessors: the table's own.
  if (traits.cc_major == 9 && traits.sm_count == 132) {
    EXPECT_EQ(builtin->source, xn::ModelSource::BuiltIn);
  }

  xnGemmInfo_t info;
  ASSERT_EQ(xnGetLastGemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(info.levels, -1);  // no call yet
  ASSERT_EQ(xnSetOption(h_, XN_OPT_DEVICE_CALIBRATION, 0), CUBLAS_STATUS_SUCCESS);
  const int n = 8192;
  inputs(n);
  ASSERT_EQ(strassen(n), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(xnGetLastGemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
  const xn::Options opt;
  const xn::DepthPrediction want =
      xn::predict_depth(*builtin, xn::strassen_algorithm(), true, false, n, n, n,
                        int(opt.max_levels), 0);
  EXPECT_EQ(int(info.source), int(builtin->source));
  EXPECT_EQ(info.planned_levels, want.levels);
  EXPECT_EQ(info.levels, want.levels);  // the workspace was had
  EXPECT_NEAR(info.predicted_speedup, want.ms_at_zero / want.ms_at_levels, 1e-12);
  EXPECT_GE(info.predicted_speedup, 1.0);
  EXPECT_EQ(std::string(info.model), builtin->description);
  int levels = -2;
  ASSERT_EQ(xnGetLastLevels(h_, &levels), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(levels, info.levels);

  // The workspace query plans the same depth.
  size_t bytes = 0;
  ASSERT_EQ(xnGetFastGemmWorkspaceSize(h_, XN_FAST_GEMM_STRASSEN, 'd', CUBLAS_OP_N,
                                       CUBLAS_OP_N, n, n, n, 1, &bytes),
            CUBLAS_STATUS_SUCCESS);
  const xn::index_t elems = xn::call_workspace_elems(
      xn::strassen_algorithm(), false, n, n, n, want.levels,
      xn::temp_orientation(opt, true, false, false).a_layout, false,
      xn::temp_orientation(opt, true, false, false).t_normal);
  EXPECT_GE(bytes, std::size_t(elems) * sizeof(double));
  EXPECT_EQ(bytes == 0, want.levels == 0);
}

TEST_F(GpuDepthModel, ALeafSizeOrCrossoverOverridesTheModel) {
  const int n = 4096;
  inputs(n);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_STRASSEN_LEAF_D, 1024), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(strassen(n), CUBLAS_STATUS_SUCCESS);
  xnGemmInfo_t info;
  ASSERT_EQ(xnGetLastGemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(info.source, XN_PARAMETERS_FROM_OPTIONS);
  EXPECT_EQ(info.planned_levels, 2);  // 4096 -> 2048 -> 1024
  EXPECT_EQ(info.levels, 2);
  EXPECT_EQ(info.predicted_speedup, 0.0);
  EXPECT_STREQ(info.model, "");
  // Back to the model, under a crossover of the user's own.
  ASSERT_EQ(xnSetOption(h_, XN_OPT_STRASSEN_LEAF_D, -1), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_STRASSEN_MIN_SIZE_D, 5000), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(strassen(n), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnGetLastGemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(info.levels, 0);
  EXPECT_EQ(info.planned_levels, 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// xnCalibrate measures, writes the cache file (atomically, in XN_CACHE_DIR)
// and installs the calibration: the next call reports it, and turning the
// option off returns to the built-in model. The figures are plausible: every
// rate positive, the copy's bandwidth within the card's nominal one.
TEST_F(GpuDepthModel, CalibrationIsCachedAndUsed) {
  char tmpl[] = "/tmp/xn_calibration_test_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const char *old = std::getenv("XN_CACHE_DIR");
  const std::string saved = old ? old : "";
  setenv("XN_CACHE_DIR", dir.c_str(), 1);
  // Not inside a stream capture (it allocates and waits): NOT_SUPPORTED,
  // and the capture stays valid.
  {
    cudaStream_t cs = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cublasSetStream(h_, cs), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal), cudaSuccess);
    EXPECT_EQ(xnCalibrate(h_), CUBLAS_STATUS_NOT_SUPPORTED);
    cudaGraph_t graph = nullptr;
    EXPECT_EQ(cudaStreamEndCapture(cs, &graph), cudaSuccess);
    if (graph) cudaGraphDestroy(graph);
    ASSERT_EQ(cublasSetStream(h_, nullptr), CUBLAS_STATUS_SUCCESS);
    cudaStreamDestroy(cs);
  }
  // The handle's modes are the caller's again afterwards.
  ASSERT_EQ(cublasSetMathMode(h_, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnCalibrate(h_), CUBLAS_STATUS_SUCCESS);
  cublasMath_t math;
  cublasPointerMode_t mode;
  ASSERT_EQ(cublasGetMathMode(h_, &math), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasGetPointerMode(h_, &mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(math, CUBLAS_TF32_TENSOR_OP_MATH);
  EXPECT_EQ(mode, CUBLAS_POINTER_MODE_HOST);
  ASSERT_EQ(cublasSetMathMode(h_, CUBLAS_DEFAULT_MATH), CUBLAS_STATUS_SUCCESS);
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  xn::DeviceTraits traits;
  ASSERT_EQ(xn::query_device_traits(device, &traits), xn::Status::Ok);
  const std::string path = xn::calibration_path(traits);
  std::ifstream f(path);
  ASSERT_TRUE(f.good()) << path;
  std::stringstream text;
  text << f.rdbuf();
  xn::DepthModel m;
  std::string problem;
  ASSERT_TRUE(xn::parse_calibration(text.str(), traits, xn::library_version_text(), &m,
                                    &problem))
      << problem;
  EXPECT_GT(m.elementwise_bytes_per_s, 0.3 * traits.memory_bandwidth());
  EXPECT_LT(m.elementwise_bytes_per_s, 1.05 * traits.memory_bandwidth());
  for (const xn::LeafRates &r : m.rates) {
    ASSERT_EQ(r.tflops.size(), std::size_t(xn::kLeafGridCount));
    for (double x : r.tflops) EXPECT_GT(x, 0.5);
  }
  // The loaded file gives the model the registry holds.
  const auto cal = xn::device_depth_model(true);
  EXPECT_EQ(cal->source, xn::ModelSource::Calibrated);
  EXPECT_NEAR(cal->rates[1].tflops.back(), m.rates[1].tflops.back(),
              1e-3 * m.rates[1].tflops.back());

  const int n = 2048;
  inputs(n);
  ASSERT_EQ(strassen(n), CUBLAS_STATUS_SUCCESS);
  xnGemmInfo_t info;
  ASSERT_EQ(xnGetLastGemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(info.source, XN_PARAMETERS_CALIBRATED);
  EXPECT_NE(std::string(info.model).find("calibrated"), std::string::npos) << info.model;
  ASSERT_EQ(xnSetOption(h_, XN_OPT_DEVICE_CALIBRATION, 0), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(strassen(n), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnGetLastGemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_NE(info.source, XN_PARAMETERS_CALIBRATED);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  if (old) {
    setenv("XN_CACHE_DIR", saved.c_str(), 1);
  } else {
    unsetenv("XN_CACHE_DIR");
  }
  const std::string cmd = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

}  // namespace
