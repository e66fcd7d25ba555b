// bench_random.h - the counter-based random numbers of xnbench, the same on
// the host and the device: SplitMix64 outputs computed independently per
// index (so a GPU kernel fills any entry on its own and the host regenerates
// it), and the uniform deviates made of their top bits (53 random bits per
// double, 24 per float). Used by the GPU input kernels (bench_gpu.cu,
// bench_symv.cu), the host generators (bench_common.cpp) and the seeds
// (bench_util.cpp).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define XNB_HD __host__ __device__ inline
#else
#define XNB_HD inline
#endif

namespace xnb {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// SplitMix64's output function (the finaliser, without the increment).
XNB_HD std::uint64_t mix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Output `idx` of the SplitMix64 stream with state `key`: any entry on its
// own. hash_at(x, 0) is one SplitMix64 step from x.
XNB_HD std::uint64_t hash_at(std::uint64_t key, std::uint64_t idx) {
  return mix64(key + (idx + 1) * kGolden);
}

// Uniform in [0, 1) from the top 53 (double) or 24 (float) bits of h.
template <class T>
XNB_HD T uniform01(std::uint64_t h) {
  if constexpr (sizeof(T) == sizeof(double)) {
    return T(h >> 11) * T(0x1.0p-53);
  } else {
    return T(unsigned(h >> 40)) * T(0x1.0p-24);
  }
}

// Uniform in [0, 1) or, with pm1, 2u - 1 in [-1, 1) (exact: the host and the
// device get the same bits).
template <class T>
XNB_HD T uniform(std::uint64_t h, bool pm1) {
  const T u = uniform01<T>(h);
  return pm1 ? T(2) * u - T(1) : u;
}

}  // namespace xnb
