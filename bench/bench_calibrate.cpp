// bench_calibrate.cpp - xnbench calibrate: measure the device for the
// recursive GEMMs' depth model (xnCalibrate), print the measured rates next
// to the built-in model's and the depth each model chooses for square
// products of every routine (docs/design.md, "Parameters from the device").
#include "bench_calibrate.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "backend/cuda/device_model_cuda.h"
#include "core/calibration_cache.h"
#include "core/gemm_driver.h"
#include "core/options.h"
#include "core/schedule.h"
#include "xngemm.h"

namespace xnb {

namespace {

void print_depths(const xn::DepthModel *builtin, const xn::DepthModel *calibrated) {
  const xn::Options opt = xn::default_options();
  struct Algo {
    const char *name;
    const xn::GemmAlgorithm *algo;
  } algos[] = {{"ngemm", &xn::nonneg_winograd_algorithm()},
               {"strassen", &xn::strassen_algorithm()},
               {"winograd", &xn::winograd_algorithm()}};
  std::printf("\ndepth chosen for square n (beta = 0), built-in model / %s:\n",
              calibrated ? "calibration" : "(no calibration)");
  std::printf("%6s", "n");
  for (const Algo &a : algos)
    for (char p : {'s', 'd'}) std::printf(" %12s_%c", a.name, p);
  std::printf("\n");
  for (xn::index_t n = 1024; n <= 32768; n += 1024) {
    std::printf("%6lld", (long long)n);
    for (const Algo &a : algos)
      for (bool d : {false, true}) {
        xn::ModelSource src;
        const int lb =
            xn::planned_depth(*a.algo, opt, builtin, d, false, n, n, n, &src).levels;
        char cell[32];
        if (calibrated) {
          const int lc =
              xn::planned_depth(*a.algo, opt, calibrated, d, false, n, n, n, &src).levels;
          std::snprintf(cell, sizeof cell, "%d / %d", lb, lc);
        } else {
          std::snprintf(cell, sizeof cell, "%d", lb);
        }
        std::printf(" %14s", cell);
      }
    std::printf("\n");
  }
}

}  // namespace

int run_calibrate(int argc, char **argv) {
  bool measure = true;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-measure")) {
      measure = false;
    } else {
      std::fprintf(stderr,
                   "usage: xnbench calibrate [--no-measure]\n"
                   "  measure this GPU for the depth model (xnCalibrate) and cache it;\n"
                   "  --no-measure: print the models the library has now\n");
      return 2;
    }
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    std::fprintf(stderr, "xnbench calibrate: no GPU\n");
    return 1;
  }
  xn::DeviceTraits traits;
  if (xn::query_device_traits(device, &traits) != xn::Status::Ok) {
    std::fprintf(stderr, "xnbench calibrate: cannot query GPU %d\n", device);
    return 1;
  }
  std::printf("device: GPU %d %s, %d SMs, cc %d.%d, SM clock %.0f MHz, memory %.2f TB/s "
              "nominal, driver %d, cuBLAS %d\n",
              device, traits.name.c_str(), traits.sm_count, traits.cc_major,
              traits.cc_minor, traits.sm_clock_khz / 1e3, traits.memory_bandwidth() / 1e12,
              traits.driver_version, traits.blas_version);
  const xn::DepthModel builtin = xn::builtin_model(traits);
  std::printf("built-in model: %s, passes at %.2f TB/s\n", builtin.description.c_str(),
              builtin.elementwise_bytes_per_s / 1e12);
  std::shared_ptr<const xn::DepthModel> cal = xn::device_depth_model(true);
  if (measure) {
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "xnbench calibrate: cublasCreate failed\n");
      return 1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const cublasStatus_t st = xnCalibrate(h);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    xnRelease(h);
    cublasDestroy(h);
    if (st != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "xnbench calibrate: xnCalibrate returned %d\n", int(st));
      return 1;
    }
    std::printf("calibrated in %.1f s; cache file %s\n", secs,
                xn::calibration_path(traits).c_str());
    cal = xn::device_depth_model(true);
  }
  const bool have_cal = cal && cal->source == xn::ModelSource::Calibrated;
  if (have_cal)
    std::printf("calibration: passes at %.2f TB/s (%.2f of nominal)\n",
                cal->elementwise_bytes_per_s / 1e12,
                cal->elementwise_bytes_per_s / traits.memory_bandwidth());
  std::printf("\nleaf GEMM rates, TFLOP/s (square n, trains of calls): built-in%s\n",
              have_cal ? " / calibrated" : "");
  std::printf("%6s %16s %16s\n", "n", "single", "double");
  for (int i = 0; i < xn::kLeafGridCount; ++i) {
    const double n = double(xn::kLeafGridFirst + xn::kLeafGridStep * i);
    char s[40], d[40];
    if (have_cal) {
      std::snprintf(s, sizeof s, "%.1f / %.1f", builtin.rates[0].at(n, n, n),
                    cal->rates[0].at(n, n, n));
      std::snprintf(d, sizeof d, "%.1f / %.1f", builtin.rates[1].at(n, n, n),
                    cal->rates[1].at(n, n, n));
    } else {
      std::snprintf(s, sizeof s, "%.1f", builtin.rates[0].at(n, n, n));
      std::snprintf(d, sizeof d, "%.1f", builtin.rates[1].at(n, n, n));
    }
    std::printf("%6.0f %16s %16s\n", n, s, d);
  }
  print_depths(&builtin, have_cal ? cal.get() : nullptr);
  return 0;
}

}  // namespace xnb
