// test_support.h - shared helpers of the test suites: GPU detection, random
// matrices (fresh seeds per run, printed on failure), views of host arrays.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace xn_test {

// True when a CUDA device can be used. GPU tests call XN_REQUIRE_GPU() first.
bool gpu_available();

#define XN_REQUIRE_GPU()                                               \
  do {                                                                 \
    if (!::xn_test::gpu_available()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

// A fresh seed per call (from the clock and a counter) unless XN_TEST_SEED is
// set, so every run draws new inputs and a failure can be replayed.
std::uint64_t fresh_seed();

// SmallInt: 0..8; SmallSignedInt: -8..8 (products and sums of a few levels of
// pre-additions stay exact in double).
enum class Dist { Uniform01, UniformPm1, SmallInt, SmallSignedInt };

// Fills a column-major rows x cols matrix with leading dimension ld; the
// padding rows between `rows` and `ld` are set to `pad` (NaN by default, so a
// read of padding shows up in the result).
template <class T>
void fill(std::vector<T> &a, std::int64_t rows, std::int64_t cols, std::int64_t ld,
          Dist dist, std::mt19937_64 &rng, T pad);

// Uniform [0,1) with 53 random bits for T = double, 24 for T = float (so the
// value is exactly representable in T and never rounds up to 1).
template <class T = double>
double uniform01(std::mt19937_64 &rng);

std::string describe_seed(std::uint64_t seed);

// The unit roundoff of T: 2^-53 (double), 2^-24 (float).
template <class T>
constexpr double unit_roundoff() {
  return sizeof(T) == sizeof(double) ? 0x1p-53 : 0x1p-24;
}

}  // namespace xn_test
