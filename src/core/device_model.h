// device_model.h - what a device is and how fast it runs the pieces of a
// recursive GEMM: the data the depth of xn?ngemm, xn?gemmStrassen and
// xn?gemmWinograd is chosen from (docs/design.md, "Parameters from the
// device").
//
// A level of Strassen's or Winograd's recursion saves 1/8 of the
// multiplications of the level below and pays elementwise passes over
// quadrants (Li, Ranka, Sahni, ICPADS'11, section 3; Badin et al., ICS'13,
// section 4). Whether it pays depends on two rates of the device: the leaf
// GEMM's at the leaf's size (cuBLAS runs some sizes much slower than their
// neighbours: SGEMM at 2304 ran at 0.8 of its rate at 2048 on an H100) and
// the memory bandwidth the passes get. The model predicts a call's time at
// each depth from these two and takes the fastest depth.
//
// CUDA-free: the CUDA backend fills DeviceTraits from the runtime and
// measures LeafRates for a calibration (src/backend/cuda/device_model_cuda.cpp);
// CPU tests drive the model with given traits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/schedule.h"
#include "core/types.h"

namespace xn {

// What the runtime says a device is.
struct DeviceTraits {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;  // 32 hex digits, the runtime's UUID of the device
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double sm_clock_khz = 0;      // peak SM clock
  double memory_clock_khz = 0;  // peak memory clock (data moves on both edges)
  int memory_bus_bits = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
  int driver_version = 0;  // cudaDriverGetVersion's
  int blas_version = 0;    // cuBLAS's (the leaf GEMM's rates change with it)

  // The nominal memory bandwidth in bytes per second (double data rate).
  double memory_bandwidth() const {
    return 2.0 * memory_clock_khz * 1e3 * double(memory_bus_bits) / 8.0;
  }
};

// Rates of the leaf GEMM (2 m n k / time, in TFLOP/s) at square sizes
// first, first + step, ..., as a train of back-to-back calls sustains them.
struct LeafRates {
  index_t first = 0, step = 0;
  std::vector<double> tflops;

  bool empty() const { return tflops.empty(); }
  index_t last() const { return first + step * index_t(tflops.size() - 1); }
  // The rate at an m x n x k GEMM: the table's, linearly interpolated, at
  // min(sqrt(m n), 4 k) (C's side, unless k is too shallow to keep the
  // tiles busy). Below the table it falls in proportion to the size (small
  // GEMMs do not fill the device); above it, the last rate.
  double at(double m, double n, double k) const;
};

// The grid the library's tables and calibrations measure: square sizes
// 1024, 1152, ..., 8192 (the leaves of the depths worth taking: smaller
// leaves never paid on a Hopper card, larger ones are at full rate).
constexpr index_t kLeafGridFirst = 1024, kLeafGridStep = 128;
constexpr int kLeafGridCount = 57;

// Where a model's figures come from (xnGemmInfo_t::parameter_source).
enum class ModelSource : int {
  Options = 0,     // no model: the leaf-size rule of the options (a leaf size was set,
                   // or the backend has no model: the CPU)
  BuiltIn = 1,     // the library's table for this kind of device
  Scaled = 2,      // no table for this device: the nearest one, scaled by peak rate
  Calibrated = 3,  // measured on this device (xnCalibrate), read from the cache
};

struct DepthModel {
  ModelSource source = ModelSource::Options;
  std::string description;         // for reports: the table's or calibration's origin
  double elementwise_bytes_per_s = 0;  // what the schedule's passes sustain
  LeafRates rates[2];              // [0] single, [1] double precision

  bool usable() const {
    return source != ModelSource::Options && elementwise_bytes_per_s > 0 &&
           !rates[0].empty() && !rates[1].empty();
  }
};

// A level is taken only when the model predicts it faster than the best
// shallower depth by a margin: the first level (leaving the vendor's GEMM)
// by kFirstLevelMargin, each further one by kDepthGainMargin. A level that
// gains less is not worth its workspace and its error growth, and the
// first one can lose outright: an H100's DGEMM rate at one size differed by
// up to 5 % between machine starts, one level at d 8192 ran 1.13x cuBLAS on
// one start and 0.945x on another, and at d 6144 the model predicted 1.045x
// for Winograd's one level that ran 0.97x (docs/performance.md, "Depth
// from the device").
constexpr double kFirstLevelMargin = 0.05;
constexpr double kDepthGainMargin = 0.02;

// The model's prediction for one call.
struct DepthPrediction {
  int levels = 0;
  double ms_at_zero = 0;    // the classical product (the leaf GEMM alone)
  double ms_at_levels = 0;  // at `levels`
};

// The depth the model chooses for an m x n x k product of `algo` with
// leaves split along k at `kchain` (0: none), at most `max_levels`.
DepthPrediction predict_depth(const DepthModel &model, const GemmAlgorithm &algo,
                              bool is_double, bool beta_nonzero, index_t m, index_t n,
                              index_t k, int max_levels, index_t kchain);

// The model's time (ms) for exactly `levels` levels.
double predicted_ms(const DepthModel &model, const GemmAlgorithm &algo, bool is_double,
                    bool beta_nonzero, index_t m, index_t n, index_t k, int levels,
                    index_t kchain);

// The library's model for a device (ModelSource::BuiltIn where a table
// matches its compute capability and multiprocessor count, else Scaled from
// the nearest table; Options when traits are unknown).
DepthModel builtin_model(const DeviceTraits &traits);

// Calibration files (docs/design.md, "Calibration cache"): the traits that
// key a file, the measured model, and a checksum over the text.
// Text of a calibration for `traits`; `library_version` as xnbench prints it.
std::string format_calibration(const DeviceTraits &traits, const char *library_version,
                               const DepthModel &model);
// Parses a calibration's text. Returns true with *model filled when it is
// well-formed, its checksum holds and it was made for `traits` (the same
// device UUID, driver, cuBLAS and library versions); else false with
// *problem saying why ("made with driver 12080, this is 13000").
bool parse_calibration(const std::string &text, const DeviceTraits &traits,
                       const char *library_version, DepthModel *model,
                       std::string *problem);

}  // namespace xn
