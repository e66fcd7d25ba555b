// test_support.cpp - see test_support.h.
#include "support/test_support.h"

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <limits>

namespace xn_test {

bool gpu_available() {
  static const bool ok = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return n > 0;
  }();
  return ok;
}

std::uint64_t fresh_seed() {
  static std::atomic<std::uint64_t> counter{0};
  if (const char *s = std::getenv("XN_TEST_SEED"))
    return std::strtoull(s, nullptr, 10) + counter++;
  const auto t = std::chrono::high_resolution_clock::now().time_since_epoch().count();
  return std::uint64_t(t) * 0x9E3779B97F4A7C15ull + counter++;
}

template <>
double uniform01<double>(std::mt19937_64 &rng) {
  return double(rng() >> 11) * 0x1.0p-53;
}
template <>
double uniform01<float>(std::mt19937_64 &rng) {
  return double(rng() >> 40) * 0x1.0p-24;  // exactly a float, never 1
}

template <class T>
void fill(std::vector<T> &a, std::int64_t rows, std::int64_t cols, std::int64_t ld,
          Dist dist, std::mt19937_64 &rng, T pad) {
  a.assign(std::size_t(ld * (cols > 0 ? cols : 1)), pad);
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) {
      T v;
      switch (dist) {
        case Dist::Uniform01:
          v = T(uniform01<T>(rng));
          break;
        case Dist::UniformPm1:
          v = T(2 * uniform01<T>(rng) - 1);
          break;
        case Dist::SmallSignedInt:
          v = T(std::int64_t(rng() % 17) - 8);  // -8..8
          break;
        default:
          v = T(std::int64_t(rng() % 9));  // 0..8, exact products
      }
      a[std::size_t(i + j * ld)] = v;
    }
}

template void fill<float>(std::vector<float> &, std::int64_t, std::int64_t, std::int64_t,
                          Dist, std::mt19937_64 &, float);
template void fill<double>(std::vector<double> &, std::int64_t, std::int64_t,
                           std::int64_t, Dist, std::mt19937_64 &, double);

std::string describe_seed(std::uint64_t seed) {
  return "replay with XN_TEST_SEED=" + std::to_string(seed);
}

}  // namespace xn_test
