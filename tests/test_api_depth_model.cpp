// test_api_depth_model.cpp - the recursive GEMMs' depth from the device
// (core/device_model.h, core/calibration_cache.h, gemm_driver.h's
// planned_depth), on the CPU with given device traits: the built-in tables
// and their selection, the model's choices and their invariants, the
// options' precedence, and the calibration files (format, checksum,
// staleness, atomic write, the cache folder).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/calibration_cache.h"
#include "core/device_model.h"
#include "core/gemm_driver.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "xngemm.h"

namespace {

using xn::index_t;

// The runtime's figures of the two Hopper cards the machines lend.
xn::DeviceTraits h100() {
  xn::DeviceTraits t;
  t.name = "NVIDIA H100 80GB HBM3";
  t.uuid = "0123456789abcdef0123456789abcdef";
  t.cc_major = 9;
  t.cc_minor = 0;
  t.sm_count = 132;
  t.sm_clock_khz = 1980000;
  t.memory_clock_khz = 2619000;
  t.memory_bus_bits = 5120;
  t.l2_bytes = 50 << 20;
  t.memory_bytes = std::int64_t(80) << 30;
  t.driver_version = 13000;
  t.blas_version = 130100;
  return t;
}
xn::DeviceTraits h200() {
  xn::DeviceTraits t = h100();
  t.name = "NVIDIA H200";
  t.uuid = "fedcba9876543210fedcba9876543210";
  t.memory_clock_khz = 3201000;
  t.memory_bus_bits = 6144;
  t.memory_bytes = std::int64_t(141) << 30;
  return t;
}

struct AlgoCase {
  const char *name;
  const xn::GemmAlgorithm *algo;
};
std::vector<AlgoCase> algorithms() {
  return {{"ngemm", &xn::nonneg_winograd_algorithm()},
          {"strassen", &xn::strassen_algorithm()},
          {"winograd", &xn::winograd_algorithm()}};
}

int depth(const xn::DepthModel &m, const AlgoCase &a, bool is_double, index_t n,
          int max_levels = 6) {
  const xn::Options opt;
  return xn::predict_depth(m, *a.algo, is_double, false, n, n, n, max_levels,
                           opt.kchain_for(a.algo->kind, is_double))
      .levels;
}

TEST(DeviceTraits, BandwidthIsTwiceTheMemoryClockTimesTheBus) {
  EXPECT_NEAR(h100().memory_bandwidth(), 3.352e12, 0.01e12);
  EXPECT_NEAR(h200().memory_bandwidth(), 4.917e12, 0.01e12);
  EXPECT_EQ(xn::DeviceTraits{}.memory_bandwidth(), 0.0);
}

TEST(DepthModel, HopperCardsShareTheLeafRatesAndKeepTheirBandwidth) {
  const xn::DepthModel a = xn::builtin_model(h100()), b = xn::builtin_model(h200());
  ASSERT_TRUE(a.usable());
  ASSERT_TRUE(b.usable());
  EXPECT_EQ(a.source, xn::ModelSource::BuiltIn);
  EXPECT_EQ(b.source, xn::ModelSource::BuiltIn);
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(a.rates[p].tflops, b.rates[p].tflops);
    EXPECT_EQ(a.rates[p].tflops.size(), std::size_t(xn::kLeafGridCount));
    EXPECT_EQ(a.rates[p].first, xn::kLeafGridFirst);
    EXPECT_EQ(a.rates[p].last(), 8192);
  }
  EXPECT_NEAR(b.elementwise_bytes_per_s / a.elementwise_bytes_per_s,
              h200().memory_bandwidth() / h100().memory_bandwidth(), 1e-12);
  // The passes get less than the nominal bandwidth.
  EXPECT_LT(a.elementwise_bytes_per_s, h100().memory_bandwidth());
  EXPECT_GT(a.elementwise_bytes_per_s, 0.7 * h100().memory_bandwidth());
}

TEST(DepthModel, AnotherCardIsScaledByMultiprocessorsAndClock) {
  xn::DeviceTraits pcie = h100();  // H100 PCIe: 114 SMs, another clock
  pcie.sm_count = 114;
  pcie.sm_clock_khz = 1755000;
  const xn::DepthModel ref = xn::builtin_model(h100()), m = xn::builtin_model(pcie);
  ASSERT_TRUE(m.usable());
  EXPECT_EQ(m.source, xn::ModelSource::Scaled);
  EXPECT_NE(m.description.find("scaled from"), std::string::npos);
  const double scale = (114.0 * 1755000) / (132.0 * 1980000);
  for (int p = 0; p < 2; ++p)
    for (std::size_t i = 0; i < ref.rates[p].tflops.size(); ++i)
      EXPECT_NEAR(m.rates[p].tflops[i], ref.rates[p].tflops[i] * scale, 1e-9);
  // A card of another architecture gets a first guess too.
  xn::DeviceTraits other = h100();
  other.cc_major = 10;
  other.sm_count = 148;
  EXPECT_EQ(xn::builtin_model(other).source, xn::ModelSource::Scaled);
  // Unknown traits: no model (the options' leaf-size rule applies).
  EXPECT_FALSE(xn::builtin_model(xn::DeviceTraits{}).usable());
}

TEST(DepthModel, LeafRatesInterpolateAndFallBelowTheGrid) {
  xn::LeafRates r;
  r.first = 1000;
  r.step = 100;
  r.tflops = {10, 20, 40};
  EXPECT_DOUBLE_EQ(r.at(1000, 1000, 1000), 10);
  EXPECT_DOUBLE_EQ(r.at(1100, 1100, 1100), 20);
  EXPECT_NEAR(r.at(1150, 1150, 1150), 30, 1e-9);
  EXPECT_DOUBLE_EQ(r.at(1200, 1200, 1200), 40);
  EXPECT_DOUBLE_EQ(r.at(5000, 5000, 5000), 40);  // above: the last rate
  EXPECT_NEAR(r.at(500, 500, 500), 5, 1e-9);      // below: proportional
  // A GEMM runs like a square one of C's side, sqrt(m n), unless k is
  // shallower than a quarter of it.
  EXPECT_NEAR(r.at(2000, 500, 8000), 10, 1e-9);
  EXPECT_NEAR(r.at(1200, 1200, 2000), 40, 1e-9);
  EXPECT_NEAR(r.at(1200, 1200, 275), 20, 1e-9);
  EXPECT_EQ(r.at(0, 1000, 1000), 0);
  EXPECT_EQ(xn::LeafRates{}.at(1000, 1000, 1000), 0);
}

// More bandwidth never makes the model recurse less, small products never
// recurse, the largest always do, and the chosen depth is never predicted
// slower than the classical product or beaten by a deeper one by more than
// the margin.
TEST(DepthModel, ChoicesFollowTheRatesOnBothCards) {
  const xn::DepthModel a = xn::builtin_model(h100()), b = xn::builtin_model(h200());
  const xn::Options opt;
  for (const AlgoCase &c : algorithms())
    for (bool d : {false, true})
      for (index_t n = 1024; n <= 32768; n += 1024) {
        const std::string what =
            std::string(c.name) + (d ? " d " : " s ") + std::to_string(n);
        const int la = depth(a, c, d, n), lb = depth(b, c, d, n);
        EXPECT_GE(lb, la) << what;
        if (n <= 4096) {
          EXPECT_EQ(la, 0) << what;
        }
        if (n == 32768) {
          EXPECT_GE(la, 2) << what;
        }
        const index_t kchain = opt.kchain_for(c.algo->kind, d);
        const double t0 = xn::predicted_ms(a, *c.algo, d, false, n, n, n, 0, kchain);
        const double tl = xn::predicted_ms(a, *c.algo, d, false, n, n, n, la, kchain);
        EXPECT_GT(t0, 0) << what;
        EXPECT_LE(tl, t0) << what;
        const double margin = la == 0 ? xn::kFirstLevelMargin : xn::kDepthGainMargin;
        for (int deeper = la + 1; deeper <= 6; ++deeper)
          EXPECT_GE(xn::predicted_ms(a, *c.algo, d, false, n, n, n, deeper, kchain),
                    (1 - margin) * tl)
              << what << " at " << deeper;
      }
}

// Two levels at 9216 single precision make leaves of 2304, a size cuBLAS's
// SGEMM runs at 0.8 of its rate at 2048 on Hopper: measured 0.93-0.95x
// cuBLAS on an H100 (docs/performance.md). The model must not take them.
TEST(DepthModel, AvoidsTheSlowLeafSizes) {
  const xn::DepthModel a = xn::builtin_model(h100());
  for (const AlgoCase &c : algorithms()) EXPECT_NE(depth(a, c, false, 9216), 2) << c.name;
}

TEST(DepthModel, MaxLevelsCapsTheDepth) {
  const xn::DepthModel a = xn::builtin_model(h100());
  for (const AlgoCase &c : algorithms()) {
    EXPECT_EQ(depth(a, c, true, 32768, 0), 0);
    EXPECT_LE(depth(a, c, true, 32768, 1), 1);
    EXPECT_LE(depth(a, c, false, 32768, 2), 2);
  }
  EXPECT_EQ(depth(a, algorithms()[1], true, 32768, 1), 1);
  // Dimensions that cannot halve: no level.
  const xn::Options opt;
  EXPECT_EQ(xn::predict_depth(a, xn::strassen_algorithm(), true, false, 1, 40000, 40000, 6,
                              0)
                .levels,
            0);
}

// Rectangular and odd shapes: the model runs on the core the schedule
// recurses on and prices the peeled strips at the full product's rate.
TEST(DepthModel, OddAndRectangularShapesArePriced) {
  const xn::DepthModel a = xn::builtin_model(h100());
  const xn::GemmAlgorithm &s = xn::strassen_algorithm();
  const double even = xn::predicted_ms(a, s, true, false, 16384, 16384, 16384, 2, 0);
  const double odd = xn::predicted_ms(a, s, true, false, 16387, 16387, 16387, 2, 0);
  EXPECT_GT(odd, even);
  EXPECT_LT(odd, even * 1.01);
  EXPECT_GE(xn::predict_depth(a, s, true, false, 32768, 8192, 32768, 6, 0).levels, 1);
}

// Precedence (gemm_driver.h, planned_depth): a leaf size set is the rule; a
// crossover set forbids recursion below it; without a usable model the
// rule runs with kRuleLeaf and kRuleMinSize.
TEST(DepthModel, OptionsOverrideTheModel) {
  const xn::DepthModel a = xn::builtin_model(h100());
  const xn::GemmAlgorithm &algo = xn::strassen_algorithm();
  xn::Options opt;
  xn::ModelSource src;
  EXPECT_EQ(
      xn::planned_depth(algo, opt, &a, true, false, 32768, 32768, 32768, &src).levels,
      depth(a, {"strassen", &algo}, true, 32768));
  EXPECT_EQ(src, xn::ModelSource::BuiltIn);

  opt.strassen_leaf_d = 8192;  // the rule: 32768 -> 2 levels
  EXPECT_EQ(
      xn::planned_depth(algo, opt, &a, true, false, 32768, 32768, 32768, &src).levels, 2);
  EXPECT_EQ(src, xn::ModelSource::Options);

  // A leaf size set is the rule as before the model, its single-precision
  // crossover (14336) included unless a crossover is set.
  opt = xn::Options();
  opt.strassen_leaf_s = 2048;
  EXPECT_EQ(xn::planned_depth(algo, opt, &a, false, false, 8192, 8192, 8192, &src).levels,
            0);
  opt.strassen_min_size_s = 0;
  EXPECT_EQ(xn::planned_depth(algo, opt, &a, false, false, 8192, 8192, 8192, &src).levels,
            2);

  opt = xn::Options();
  opt.strassen_min_size_d = 40000;
  EXPECT_EQ(
      xn::planned_depth(algo, opt, &a, true, false, 32768, 32768, 32768, &src).levels, 0);

  opt = xn::Options();  // no model: the rule's built-in values
  EXPECT_EQ(
      xn::planned_depth(algo, opt, nullptr, true, false, 16384, 16384, 16384, &src).levels,
      xn::choose_levels(16384, 16384, 16384, xn::kRuleLeaf[1], 6, xn::kRuleMinSize[1]));
  EXPECT_EQ(src, xn::ModelSource::Options);
  EXPECT_EQ(
      xn::planned_depth(algo, opt, nullptr, false, false, 8192, 8192, 8192, &src).levels, 0);
  const xn::DepthModel none;
  EXPECT_EQ(
      xn::planned_depth(algo, opt, &none, true, false, 16384, 16384, 16384, &src).levels,
      2);
  EXPECT_EQ(src, xn::ModelSource::Options);
}

// ------------------------------------------------------------ calibration files

xn::DepthModel sample_calibration() {
  xn::DepthModel m = xn::builtin_model(h100());
  m.source = xn::ModelSource::Calibrated;
  m.elementwise_bytes_per_s = 2.987e12;
  m.rates[1].tflops[3] = 12.5;  // unlike the table, so a round trip shows
  return m;
}

TEST(Calibration, TextRoundTrips) {
  const xn::DepthModel m = sample_calibration();
  const std::string text = xn::format_calibration(h100(), "0.1.0", m);
  xn::DepthModel back;
  std::string problem;
  ASSERT_TRUE(xn::parse_calibration(text, h100(), "0.1.0", &back, &problem)) << problem;
  EXPECT_EQ(back.source, xn::ModelSource::Calibrated);
  EXPECT_TRUE(back.usable());
  EXPECT_NEAR(back.elementwise_bytes_per_s, 2.987e12, 1e6);
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(back.rates[p].first, m.rates[p].first);
    EXPECT_EQ(back.rates[p].step, m.rates[p].step);
    ASSERT_EQ(back.rates[p].tflops.size(), m.rates[p].tflops.size());
    for (std::size_t i = 0; i < m.rates[p].tflops.size(); ++i)
      EXPECT_NEAR(back.rates[p].tflops[i], m.rates[p].tflops[i],
                  1e-3 * m.rates[p].tflops[i]);
  }
  EXPECT_NE(back.description.find("H100"), std::string::npos);
}

TEST(Calibration, DamagedStaleAndForeignTextIsRefusedWithAReason) {
  const std::string text = xn::format_calibration(h100(), "0.1.0", sample_calibration());
  xn::DepthModel m;
  std::string problem;
  // One figure changed: the checksum no longer holds.
  std::string damaged = text;
  const std::size_t at = damaged.find("double ") + 7;
  damaged[at] = damaged[at] == '9' ? '8' : '9';
  EXPECT_FALSE(xn::parse_calibration(damaged, h100(), "0.1.0", &m, &problem));
  EXPECT_NE(problem.find("damaged"), std::string::npos) << problem;
  // Cut short (a half-written file).
  EXPECT_FALSE(
      xn::parse_calibration(text.substr(0, text.size() / 2), h100(), "0.1.0", &m, &problem));
  EXPECT_FALSE(xn::parse_calibration("", h100(), "0.1.0", &m, &problem));
  EXPECT_FALSE(xn::parse_calibration("hello\nchecksum 0\n", h100(), "0.1.0", &m, &problem));
  EXPECT_NE(problem.find("not an xNGEMM calibration"), std::string::npos) << problem;
  // Anything after the checksum, a magic of another version, a grid that
  // is not the library's.
  EXPECT_FALSE(xn::parse_calibration(text + "x\n", h100(), "0.1.0", &m, &problem));
  std::string other_magic = text;
  other_magic.insert(std::strlen("xngemm-calibration 1"), "0");
  EXPECT_FALSE(xn::parse_calibration(other_magic, h100(), "0.1.0", &m, &problem));
  xn::DepthModel off_grid = sample_calibration();
  off_grid.rates[0].first = off_grid.rates[1].first = 1000;
  EXPECT_FALSE(xn::parse_calibration(xn::format_calibration(h100(), "0.1.0", off_grid), h100(),
                                     "0.1.0", &m, &problem));
  EXPECT_NE(problem.find("off-grid"), std::string::npos) << problem;
  // Another device, driver, cuBLAS or library version.
  EXPECT_FALSE(xn::parse_calibration(text, h200(), "0.1.0", &m, &problem));
  EXPECT_NE(problem.find("device"), std::string::npos) << problem;
  xn::DeviceTraits t = h100();
  t.driver_version = 13010;
  EXPECT_FALSE(xn::parse_calibration(text, t, "0.1.0", &m, &problem));
  EXPECT_NE(problem.find("driver 13000, this is 13010"), std::string::npos) << problem;
  t = h100();
  t.blas_version = 130200;
  EXPECT_FALSE(xn::parse_calibration(text, t, "0.1.0", &m, &problem));
  EXPECT_NE(problem.find("cuBLAS"), std::string::npos) << problem;
  EXPECT_FALSE(xn::parse_calibration(text, h100(), "0.2.0", &m, &problem));
  EXPECT_NE(problem.find("xNGEMM 0.1.0"), std::string::npos) << problem;
}

// A private cache folder for one test (XN_CACHE_DIR), removed after it.
class CacheFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/xn_cache_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/nested/xngemm";  // made by the first write
    const char *old = std::getenv("XN_CACHE_DIR");
    had_ = old != nullptr;
    if (had_) saved_ = old;
    setenv("XN_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_)
      setenv("XN_CACHE_DIR", saved_.c_str(), 1);
    else
      unsetenv("XN_CACHE_DIR");
    const std::string cmd = "rm -rf '" + root_ + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  std::vector<std::string> files() const {
    std::vector<std::string> v;
    if (DIR *d = opendir(dir_.c_str())) {
      while (dirent *e = readdir(d))
        if (e->d_name[0] != '.') v.push_back(e->d_name);
      closedir(d);
    }
    return v;
  }
  std::string root_, dir_, saved_;
  bool had_ = false;
};

// What is said on stderr while `body` runs, with XN_VERBOSE=1 (without it
// nothing is: test_api_options.cpp, NothingOnStderrUnlessAskedFor).
std::string stderr_of(const std::function<void()> &body) {
  setenv("XN_VERBOSE", "1", 1);
  testing::internal::CaptureStderr();
  body();
  std::string said = testing::internal::GetCapturedStderr();
  unsetenv("XN_VERBOSE");
  return said;
}

TEST_F(CacheFolder, WrittenAtomicallyAndReadBack) {
  const xn::DeviceTraits t = h100();
  const std::string path = xn::calibration_path(t);
  EXPECT_EQ(path, dir_ + "/calibration-" + t.uuid + ".txt");
  const xn::DepthModel fallback = xn::builtin_model(t);
  // No file: the fallback, silently.
  std::string err = stderr_of([&] {
    EXPECT_EQ(xn::load_calibrated_model(t, "0.1.0", fallback).source,
              xn::ModelSource::BuiltIn);
  });
  EXPECT_EQ(err, "");
  std::string problem;
  ASSERT_TRUE(xn::write_file_atomically(
      path, xn::format_calibration(t, "0.1.0", sample_calibration()), &problem))
      << problem;
  // Exactly the one file: the temporary was renamed, not left behind.
  EXPECT_EQ(files(), std::vector<std::string>{"calibration-" + t.uuid + ".txt"});
  const xn::DepthModel m = xn::load_calibrated_model(t, "0.1.0", fallback);
  EXPECT_EQ(m.source, xn::ModelSource::Calibrated);
  EXPECT_NEAR(m.rates[1].tflops[3], 12.5, 1e-9);
  // Rewriting replaces it whole.
  xn::DepthModel other = sample_calibration();
  other.rates[1].tflops[3] = 33.0;
  ASSERT_TRUE(xn::write_file_atomically(path, xn::format_calibration(t, "0.1.0", other),
                                        &problem));
  EXPECT_NEAR(xn::load_calibrated_model(t, "0.1.0", fallback).rates[1].tflops[3], 33.0,
              1e-9);
  EXPECT_EQ(files().size(), 1u);
}

TEST_F(CacheFolder, StaleOrDamagedFilesAreIgnoredAndSaidOnce) {
  const xn::DeviceTraits t = h100();
  const std::string path = xn::calibration_path(t);
  std::string problem;
  xn::DeviceTraits old = t;
  old.driver_version = 12080;
  ASSERT_TRUE(xn::write_file_atomically(
      path, xn::format_calibration(old, "0.1.0", sample_calibration()), &problem));
  const xn::DepthModel fallback = xn::builtin_model(t);
  const std::string err = stderr_of([&] {
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(xn::load_calibrated_model(t, "0.1.0", fallback).source,
                xn::ModelSource::BuiltIn);
  });
  EXPECT_EQ(err, "xngemm: calibration " + path +
                     " was made with driver 12080, this is 13000; ignored (xnbench "
                     "calibrate makes a new one)\n");
  // A damaged file: said once too, with its own reason.
  {
    std::ofstream f(path, std::ios::trunc);
    f << "xngemm-calibration 1\nlibrary 0.1.0\nchecksum 0000000000000000\n";
  }
  const std::string err2 = stderr_of([&] {
    for (int i = 0; i < 2; ++i)
      EXPECT_EQ(xn::load_calibrated_model(t, "0.1.0", fallback).source,
                xn::ModelSource::BuiltIn);
  });
  EXPECT_NE(err2.find("damaged"), std::string::npos) << err2;
  EXPECT_EQ(std::count(err2.begin(), err2.end(), '\n'), 1) << err2;
}

// Writers replacing the file while readers read it: a reader sees one
// writer's whole file or another's, never a mix or a part (rename is
// atomic); the folder holds the one file at the end.
TEST_F(CacheFolder, ConcurrentWritersNeverShowHalfAFile) {
  const xn::DeviceTraits t = h100();
  const std::string path = xn::calibration_path(t);
  std::string problem;
  ASSERT_TRUE(xn::write_file_atomically(
      path, xn::format_calibration(t, "0.1.0", sample_calibration()), &problem));
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, reads{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w)
    writers.emplace_back([&, w] {
      xn::DepthModel m = sample_calibration();
      for (int i = 0; i < 60; ++i) {
        m.rates[0].tflops[0] = 10.0 + w * 100 + i;  // each write different
        std::string why;
        if (!xn::write_file_atomically(path, xn::format_calibration(t, "0.1.0", m), &why))
          ++bad;
      }
    });
  std::thread reader([&] {
    while (!stop) {
      std::ifstream f(path);
      std::stringstream text;
      text << f.rdbuf();
      xn::DepthModel m;
      std::string why;
      if (!xn::parse_calibration(text.str(), t, "0.1.0", &m, &why)) ++bad;
      ++reads;
    }
  });
  for (std::thread &w : writers) w.join();
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(files().size(), 1u);
}

TEST_F(CacheFolder, AnUnwritableFolderIsAnErrorNotACrash) {
  std::string problem;
  // A regular file where the folder should be.
  ASSERT_TRUE(xn::write_file_atomically(root_ + "/nested", "x", &problem)) << problem;
  EXPECT_FALSE(xn::write_file_atomically(dir_ + "/calibration-x.txt", "y", &problem));
  EXPECT_FALSE(problem.empty());
}

TEST(Calibration, CacheFolderFollowsTheEnvironment) {
  const char *saved_dir = std::getenv("XN_CACHE_DIR");
  const char *saved_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string keep_dir = saved_dir ? saved_dir : "",
                    keep_xdg = saved_xdg ? saved_xdg : "";
  unsetenv("XN_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/somewhere/cache", 1);
  EXPECT_EQ(xn::calibration_dir(), "/somewhere/cache/xngemm");
  unsetenv("XDG_CACHE_HOME");
  const char *home = std::getenv("HOME");
  if (home && *home) {
    EXPECT_EQ(xn::calibration_dir(), std::string(home) + "/.cache/xngemm");
  }
  setenv("XN_CACHE_DIR", "/my/cache", 1);
  EXPECT_EQ(xn::calibration_dir(), "/my/cache");
  xn::DeviceTraits no_uuid = h100();
  no_uuid.uuid.clear();
  EXPECT_EQ(xn::calibration_path(no_uuid), "");
  if (saved_dir) {
    setenv("XN_CACHE_DIR", keep_dir.c_str(), 1);
  } else {
    unsetenv("XN_CACHE_DIR");
  }
  if (saved_xdg) setenv("XDG_CACHE_HOME", keep_xdg.c_str(), 1);
}

// ------------------------------------------------------------ the public API

TEST(DepthModelApi, BadArguments) {
  EXPECT_EQ(xnCalibrate(nullptr), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(xnGetLastGemmInfo(nullptr, nullptr), CUBLAS_STATUS_INVALID_VALUE);
}

// A host call on the CPU (no model there): the options' rule, reported as
// such for the calling thread.
TEST(DepthModelApi, HostCallOnTheCpuReportsTheRule) {
  const char *saved = std::getenv("XN_DEVICE");
  const std::string keep = saved ? saved : "";
  setenv("XN_DEVICE", "cpu", 1);
  std::int64_t leaf = 0;
  ASSERT_EQ(xnGetOption(nullptr, XN_OPT_STRASSEN_LEAF_D, &leaf), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_STRASSEN_LEAF_D, 64), CUBLAS_STATUS_SUCCESS);
  const int n = 300;
  std::vector<double> A(std::size_t(n) * n, 0.5), B(A), C(A.size(), 0.0);
  cblas_dstgemm(XnColMajor, XnNoTrans, XnNoTrans, n, n, n, 1.0, A.data(), n, B.data(), n,
                0.0, C.data(), n);
  xnGemmInfo_t info;
  ASSERT_EQ(xnGetLastGemmInfo(nullptr, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(info.levels, xn::choose_levels(n, n, n, 64, 6));
  EXPECT_EQ(info.planned_levels, info.levels);
  EXPECT_EQ(info.source, XN_PARAMETERS_FROM_OPTIONS);
  EXPECT_EQ(info.predicted_speedup, 0.0);
  EXPECT_NEAR(C[0], 0.25 * n, 1e-9);
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_STRASSEN_LEAF_D, leaf), CUBLAS_STATUS_SUCCESS);
  if (saved) {
    setenv("XN_DEVICE", keep.c_str(), 1);
  } else {
    unsetenv("XN_DEVICE");
  }
}

// ------------------------------------------------ the model against timings

// Per-depth timings (xnbench gemm --per-level: every routine and precision
// timed at every depth L, n = 6144..16384, docs/results/device_model/) of
// an H100 and an H200: the depth the built-in model picks for each case
// (with that card's bandwidth) against the measured best. The figures
// docs/design.md gives: within 2 % of the best in at least 77 of 96
// cases, mean loss at most 1.6 %. A change of the tables, the margins or
// the arithmetic that makes the choices worse fails here.
struct DepthCheck {
  int cases = 0, within = 0;
  double loss_sum = 0, worst = 1;
};

void check_against(const std::string &file, const xn::DeviceTraits &traits,
                   DepthCheck *c) {
  std::ifstream f(file);
  ASSERT_TRUE(f.good()) << file;
  std::map<std::tuple<std::string, char, index_t>, std::map<int, double>> rows;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string routine;
    char prec;
    index_t n;
    int levels;
    double ms;
    if (!(in >> routine >> prec >> n >> levels >> ms)) continue;
    if (routine == "ngemm" || routine == "strassen" || routine == "winograd")
      rows[{routine, prec, n}][levels] = ms;
  }
  const xn::DepthModel model = xn::builtin_model(traits);
  const xn::Options opt;
  for (const auto &[key, by_depth] : rows) {
    const auto &[routine, prec, n] = key;
    if (!by_depth.count(0) || by_depth.size() < 2) continue;
    const xn::GemmAlgorithm &algo = routine == "ngemm"      ? xn::nonneg_winograd_algorithm()
                                    : routine == "strassen" ? xn::strassen_algorithm()
                                                            : xn::winograd_algorithm();
    const bool d = prec == 'd';
    const int chosen = xn::predict_depth(model, algo, d, false, n, n, n,
                                         by_depth.rbegin()->first, opt.kchain_for(algo.kind, d))
                           .levels;
    ASSERT_TRUE(by_depth.count(chosen)) << routine << " " << prec << " " << n;
    double best = by_depth.at(0);
    for (const auto &[levels, ms] : by_depth) best = std::min(best, ms);
    const double loss = by_depth.at(chosen) / best;
    ++c->cases;
    c->within += loss < 1.02;
    c->loss_sum += loss - 1;
    c->worst = std::max(c->worst, loss);
  }
}

TEST(DepthModel, PicksNearTheMeasuredBestDepthOnBothCards) {
  const std::string dir = std::string(XN_SOURCE_DIR) + "/docs/results/device_model/";
  DepthCheck c;
  check_against(dir + "per-depth-h100-2026-11-27.txt", h100(), &c);
  check_against(dir + "per-depth-h200-2026-11-27.txt", h200(), &c);
  ASSERT_EQ(c.cases, 96);
  EXPECT_GE(c.within, 77);
  EXPECT_LE(c.loss_sum / c.cases, 0.016);
  // The worst case: d 8192 on one H100 start, where the model stays with
  // cuBLAS and one level ran 1.14x there (0.945x on another start).
  EXPECT_LE(c.worst, 1.15);
}

}  // namespace
