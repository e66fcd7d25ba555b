// exdgemm_inputs.h - input families of the exdgemm suites (CPU and GPU):
// the PMAA'18 (Mukunoki et al.) (rand - 0.5) * exp(phi * randn) with 53-bit uniforms,
// ill-conditioned dot products, integers, extreme exponents, subnormals,
// zero rows/columns, mixed huge/tiny rows, and non-finite entries.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace xn_test {

enum class ExKind {
  Phi,      // (u - 0.5) exp(phi randn), u with 53 random bits (Mukunoki et al., PMAA'18)
  Integer,  // small integers
  Extreme,  // rows/columns scaled by 2^e, e in [-1000, 1000]
  Subnormal,   // every entry subnormal
  MixedRange,  // rows holding both ~2^1000 and ~2^-1070 (wide path)
  ZeroLines,   // phi = 1 with whole rows of A and columns of B zero
  Overflow,    // entries near DBL_MAX: some results overflow
};

inline std::string ex_kind_name(ExKind k) {
  switch (k) {
    case ExKind::Phi:
      return "phi";
    case ExKind::Integer:
      return "integer";
    case ExKind::Extreme:
      return "extreme";
    case ExKind::Subnormal:
      return "subnormal";
    case ExKind::MixedRange:
      return "mixedrange";
    case ExKind::ZeroLines:
      return "zerolines";
    case ExKind::Overflow:
      return "overflow";
  }
  return "?";
}

inline std::uint64_t ex_bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}
// The double of the given bits (a signalling NaN, a payload).
inline double ex_double(std::uint64_t b) {
  double x;
  std::memcpy(&x, &b, 8);
  return x;
}
// x in C's %a form, for messages.
inline std::string ex_hex(double x) {
  char s[48];
  std::snprintf(s, sizeof s, "%a", x);
  return s;
}

// Same value as the MPFR oracle's (NaN matches NaN; +0 matches -0: that
// oracle does not model the sign of an exact zero, which is part of
// exdgemm's contract and is checked against the IEEE oracle in
// test_exdgemm_ieee*.cpp; CPU-GPU comparisons compare bits).
inline bool ex_same(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  if (want == 0.0) return got == 0.0;
  return ex_bits(got) == ex_bits(want);
}

// The IEEE contract's equality (xnExdgemm, xnExdgemv, xnExddot): the same
// bits, signed zeros included, or both NaN (payloads are unspecified).
inline bool ex_same_bits(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return ex_bits(got) == ex_bits(want);
}

// Uniform in [0, 1) with 53 random bits.
inline double u53(std::mt19937_64 &rng) { return double(rng() >> 11) * 0x1p-53; }

// Fills stored rows x cols (ld >= rows; padding NaN) of one operand.
// `line_of(i, j)` gives which row of op(A)/column of op(B) an entry belongs to,
// for the per-line scalings.
inline double ex_value(ExKind kind, double phi, std::mt19937_64 &rng, int line_scale) {
  std::normal_distribution<double> randn(0.0, 1.0);
  switch (kind) {
    case ExKind::Phi:
    case ExKind::ZeroLines:
      return (u53(rng) - 0.5) * std::exp(phi * randn(rng));
    case ExKind::Integer:
      return double(std::int64_t(rng() % 2001) - 1000);
    case ExKind::Extreme:
      return std::ldexp(u53(rng) - 0.5, line_scale);
    case ExKind::Subnormal:
      return std::ldexp(u53(rng) - 0.5, -1030 - int(rng() % 40));
    case ExKind::MixedRange:
      return (rng() % 4 == 0) ? std::ldexp(u53(rng) - 0.5, 1000)
                              : std::ldexp(u53(rng) - 0.5, -1022 - int(rng() % 50));
    case ExKind::Overflow:
      return std::ldexp(0.5 + 0.5 * u53(rng), 1021) * (rng() % 2 ? 1 : -1);
  }
  return 0;
}

// op(A) (m x k) stored with trans flag ta into a (ld lda), op(B) likewise.
inline void ex_fill(ExKind kind, double phi, bool ta, bool tb, std::int64_t m,
                    std::int64_t n, std::int64_t k, std::vector<double> &a,
                    std::int64_t lda, std::vector<double> &b, std::int64_t ldb,
                    std::mt19937_64 &rng) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  a.assign(std::size_t(lda * std::max<std::int64_t>(ac, 1)), nan);
  b.assign(std::size_t(ldb * std::max<std::int64_t>(bc, 1)), nan);
  std::vector<int> rs(static_cast<std::size_t>(m)), cs(static_cast<std::size_t>(n));
  for (auto &x : rs) x = int(rng() % 2001) - 1000;
  for (auto &x : cs) x = -int(rng() % 1000) + (kind == ExKind::Extreme ? 0 : 0);
  for (std::int64_t j = 0; j < ac; ++j)
    for (std::int64_t i = 0; i < ar; ++i) {
      const std::int64_t row = ta ? j : i;  // row of op(A)
      double v = ex_value(kind, phi, rng, rs[std::size_t(row)]);
      if (kind == ExKind::ZeroLines && row % 3 == 1) v = 0.0;
      a[std::size_t(i + j * lda)] = v;
    }
  for (std::int64_t j = 0; j < bc; ++j)
    for (std::int64_t i = 0; i < br; ++i) {
      const std::int64_t col = tb ? i : j;  // column of op(B)
      double v = ex_value(kind, phi, rng, cs[std::size_t(col)]);
      if (kind == ExKind::ZeroLines && col % 4 == 2) v = 0.0;
      b[std::size_t(i + j * ldb)] = v;
    }
}

// Ill-conditioned products (no transposes): op(A)(i, 2p) = op(A)(i, 2p+1) =
// x, op(B)(2p, j) = y, op(B)(2p+1, j) = -y + y 2^-e: the exact (i, j) entry is
// tiny against (|A||B|)_ij (condition ~2^e), with e up to 60.
inline void ex_fill_illcond(std::int64_t m, std::int64_t n, std::int64_t k,
                            std::vector<double> &a, std::int64_t lda,
                            std::vector<double> &b, std::int64_t ldb,
                            std::mt19937_64 &rng) {
  a.assign(std::size_t(lda * k), std::numeric_limits<double>::quiet_NaN());
  b.assign(std::size_t(ldb * n), std::numeric_limits<double>::quiet_NaN());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p + 1 < k; p += 2) {
      const double x = u53(rng) - 0.5;
      a[std::size_t(i + p * lda)] = x;
      a[std::size_t(i + (p + 1) * lda)] = x;
    }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t p = 0; p + 1 < k; p += 2) {
      const double y = u53(rng) - 0.5;
      b[std::size_t(p + j * ldb)] = y;
      b[std::size_t(p + 1 + j * ldb)] = -y + std::ldexp(y, -int(20 + rng() % 41));
    }
  if (k % 2) {
    for (std::int64_t i = 0; i < m; ++i)
      a[std::size_t(i + (k - 1) * lda)] = u53(rng) - 0.5;
    for (std::int64_t j = 0; j < n; ++j)
      b[std::size_t(k - 1 + j * ldb)] = std::ldexp(u53(rng), -70);
  }
}

}  // namespace xn_test
