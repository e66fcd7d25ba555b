// ieee_families.h - the input families of the IEEE contract suites of the
// correctly rounded DGEMM (tests/test_exdgemm_ieee.cpp on the CPU,
// tests/test_exdgemm_ieee_gpu.cpp on the GPU), written once for both.
//
// A problem is op(A), op(B) and C as logical matrices (column-major, tight);
// the suites store them under every transpose pair with padded leading
// dimensions (padding NaN) and compare every entry, bit for bit, with the
// IEEE oracle (support/ieee_oracle.h). Where a family knows an entry's value
// by construction (a boundary target's rounding, a special's class) it says
// so in `known`, and the suites check the oracle against it too.
//
// Boundary targets: an exact value T given as a few terms +-M 2^e, placed so
// that alpha X + beta c = T exactly, each term one product a b (a carries M,
// b a power of two) - through alpha X alone, through alpha = 2^s, with one
// term carried by beta c (c subnormal where the term allows), or with beta c
// cancelling a large part H of alpha X. Targets of one region share a
// problem: each sits on the diagonal (row t of op(A), column t of op(B),
// diagonal of C); the off-diagonal entries mix the targets' rows and columns
// and are checked as well.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/exdgemm_inputs.h"
#include "support/ieee_oracle.h"

namespace xn_test {

struct IeeeProblem {
  std::string name;
  std::int64_t m = 1, n = 1, k = 1;
  double alpha = 1, beta = 0;
  std::vector<double> a;  // op(A): m x k, ld m
  std::vector<double> b;  // op(B): k x n, ld k
  std::vector<double> c;  // C on entry: m x n, ld m (NaN where beta == 0)
  // Entries whose value the family states by construction: (i + j m, value).
  std::vector<std::pair<std::int64_t, double>> known;
};

struct IeeeFamily {
  std::string name;
  std::vector<IeeeProblem> problems;
};

// The bit pattern, as the older exdgemm suites read it.
inline std::uint64_t ieee_bits(double x) { return ex_bits(x); }

// The contract's equality: the same bits, or both NaN (payload and sign of
// a NaN are unspecified).
inline bool ieee_same(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return ieee_bits(got) == ieee_bits(want);
}

inline std::string ieee_hex(double x) {
  char s[48];
  std::snprintf(s, sizeof s, "%a", x);
  return s;
}

// ------------------------------------------------------------ the oracle

// Every entry of the problem, from its logical (non-transposed) matrices.
inline std::vector<double> ieee_expected(const IeeeProblem &p) {
  std::vector<double> out;
  const std::int64_t lda = std::max<std::int64_t>(1, p.m);
  const std::int64_t ldb = std::max<std::int64_t>(1, p.k);
  exact_gemm_ieee(false, false, p.m, p.n, p.k, p.alpha, p.a.data(), lda, p.b.data(), ldb,
                  p.beta, p.c.data(), std::max<std::int64_t>(1, p.m), out);
  return out;
}

// ------------------------------------------------------------ storage

// The problem as one call's arguments: column-major with transposes ta/tb,
// or (row_major) the same matrices in row-major order (as cblas RowMajor
// takes them); leading dimensions `pad` beyond the minimum, padding NaN.
struct IeeeStored {
  bool ta = false, tb = false, row_major = false;
  std::int64_t lda = 1, ldb = 1, ldc = 1;
  std::vector<double> A, B, C;
  // Index of C(i, j) in C.
  std::int64_t c_at(std::int64_t i, std::int64_t j) const {
    return row_major ? i * ldc + j : i + j * ldc;
  }
  // Whether C[idx] lies outside the m x n matrix (padding or slack).
  bool is_padding(std::int64_t idx, std::int64_t m, std::int64_t n) const {
    const std::int64_t within = idx % ldc, line = idx / ldc;  // line: a column (a row)
    return row_major ? (within >= n || line >= m) : (within >= m || line >= n);
  }
};

// Stores the logical rows x cols matrix `x` (ld rows) so that element (r, s)
// is at r + s ld (transposed = false) or s + r ld (true).
inline std::vector<double> ieee_store_matrix(const std::vector<double> &x,
                                             std::int64_t rows, std::int64_t cols,
                                             bool transposed, std::int64_t ld) {
  const std::int64_t stored_cols = std::max<std::int64_t>(1, transposed ? rows : cols);
  std::vector<double> s(std::size_t(ld * stored_cols),
                        std::numeric_limits<double>::quiet_NaN());
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t r = 0; r < rows; ++r)
      s[std::size_t(transposed ? c + r * ld : r + c * ld)] = x[std::size_t(r + c * rows)];
  return s;
}

inline IeeeStored ieee_store(const IeeeProblem &p, bool ta, bool tb, bool row_major,
                             std::int64_t pad) {
  IeeeStored s;
  s.ta = ta;
  s.tb = tb;
  s.row_major = row_major;
  // Row-major storage of a matrix is column-major storage of its transpose.
  const bool sa = ta != row_major, sb = tb != row_major;
  s.lda = std::max<std::int64_t>(1, sa ? p.k : p.m) + pad;
  s.ldb = std::max<std::int64_t>(1, sb ? p.n : p.k) + pad;
  s.ldc = std::max<std::int64_t>(1, row_major ? p.n : p.m) + pad;
  s.A = ieee_store_matrix(p.a, p.m, p.k, sa, s.lda);
  s.B = ieee_store_matrix(p.b, p.k, p.n, sb, s.ldb);
  s.C = ieee_store_matrix(p.c, p.m, p.n, row_major, s.ldc);
  return s;
}

// Leading dimensions' slack for the t-th of a problem's calls: tight for
// the first, 1 to 3 more for the others.
inline std::int64_t ieee_pad(int t, std::mt19937_64 &rng) {
  return t == 0 ? 0 : 1 + std::int64_t(rng() % 3);
}

// Inputs of entry (i, j) for a failure message: alpha, beta, c, the row of
// op(A) and the column of op(B) (nonzero products first, at most 8).
inline std::string ieee_describe_entry(const IeeeProblem &p, std::int64_t i,
                                       std::int64_t j) {
  std::string s = "alpha=" + ieee_hex(p.alpha) + " beta=" + ieee_hex(p.beta) +
                  " c=" + ieee_hex(p.c[std::size_t(i + j * p.m)]) +
                  " k=" + std::to_string(p.k) + "\n    products a*b:";
  int shown = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (std::int64_t q = 0; q < p.k && shown < 8; ++q) {
      const double x = p.a[std::size_t(i + q * p.m)], y = p.b[std::size_t(q + j * p.k)];
      const bool zero_product = x == 0.0 || y == 0.0;
      if ((pass == 0) == zero_product) continue;
      s += " [" + std::to_string(q) + "] " + ieee_hex(x) + "*" + ieee_hex(y);
      ++shown;
    }
  if (p.k > shown) s += " ... (" + std::to_string(p.k - shown) + " more)";
  return s;
}

// Compares a call's C with the expected entries and its padding with what
// was stored. Returns "" or a message about the first wrong entry.
inline std::string ieee_first_mismatch(const IeeeProblem &p, const IeeeStored &s,
                                       const std::vector<double> &got,
                                       const std::vector<double> &want,
                                       const std::string &path, std::int64_t *checked) {
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) {
      const double g = got[std::size_t(s.c_at(i, j))], w = want[std::size_t(i + j * p.m)];
      if (!ieee_same(g, w))
        return p.name + " [" + path + "] entry (" + std::to_string(i) + "," +
               std::to_string(j) + ") of " + std::to_string(p.m) + "x" +
               std::to_string(p.n) + "x" + std::to_string(p.k) + ": expected " +
               ieee_hex(w) + " got " + ieee_hex(g) + "\n    " +
               ieee_describe_entry(p, i, j);
    }
  for (std::size_t idx = 0; idx < got.size(); ++idx)
    if (s.is_padding(std::int64_t(idx), p.m, p.n) &&
        ieee_bits(got[idx]) != ieee_bits(s.C[idx]))
      return p.name + " [" + path + "]: padding of C written at " + std::to_string(idx);
  *checked += p.m * p.n;
  return "";
}

// The oracle against the values the family states; "" or a message.
inline std::string ieee_check_known(const IeeeProblem &p,
                                    const std::vector<double> &want) {
  for (const auto &kv : p.known) {
    const double w = want[std::size_t(kv.first)];
    if (!ieee_same(w, kv.second)) {
      const std::int64_t i = kv.first % p.m, j = kv.first / p.m;
      return p.name + ": the oracle says " + ieee_hex(w) + " but the family states " +
             ieee_hex(kv.second) + " at (" + std::to_string(i) + "," + std::to_string(j) +
             ")\n    " + ieee_describe_entry(p, i, j);
    }
  }
  return "";
}

// ------------------------------------------------------------ builders

namespace ieee_detail {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMaxSub = 0x0.fffffffffffffp-1022;  // largest subnormal
constexpr double kMinNormal = 0x1p-1022;
constexpr double kNextNormal = 0x1.0000000000001p-1022;
constexpr std::uint64_t kTop53 = (std::uint64_t(1) << 53) - 1;

inline int bit_length(std::uint64_t x) {
  int n = 0;
  while (x >> n) ++n;
  return n;
}

inline int uniform_int(std::mt19937_64 &rng, int lo, int hi) {
  return lo + int(rng() % std::uint64_t(hi - lo + 1));
}
inline bool coin(std::mt19937_64 &rng) { return rng() & 1; }

// (-1)^neg mant 2^exp, 1 <= mant < 2^53.
struct Term {
  bool neg;
  std::uint64_t mant;
  int exp;
};
inline Term pos(std::uint64_t mant, int exp) { return {false, mant, exp}; }
inline Term neg(std::uint64_t mant, int exp) { return {true, mant, exp}; }

// An exact value (sum of its terms) and its rounding, stated by hand.
struct Target {
  std::string name;
  std::vector<Term> terms;
  double rn;
};

inline Target negated(Target t) {
  t.name = "-(" + t.name + ")";
  for (Term &x : t.terms) x.neg = !x.neg;
  t.rn = -t.rn;
  return t;
}

inline int top_exponent(const std::vector<Term> &terms) {
  int top = -100000;
  for (const Term &t : terms) top = std::max(top, t.exp + bit_length(t.mant) - 1);
  return top;
}

// a, b with a b = term / 2^scale exactly, b = +-2^eb with eb in [lo, hi]
// (and both doubles); false if no such eb.
inline bool split_term(const Term &t, int scale, int lo, int hi, std::mt19937_64 &rng,
                       double *a, double *b) {
  const int e = t.exp - scale, len = bit_length(t.mant);
  const int eb_lo = std::max({lo, -1074, e + len - 1024});
  const int eb_hi = std::min({hi, 1023, e + 1074});
  if (eb_lo > eb_hi) return false;
  const int eb = uniform_int(rng, eb_lo, eb_hi);
  const bool flip = coin(rng);  // the sign on either side
  *b = flip ? -std::ldexp(1.0, eb) : std::ldexp(1.0, eb);
  *a = std::ldexp(double(t.mant), e - eb);
  if (t.neg != flip) *a = -*a;
  return true;
}

// x / 2^scale as one double, or false.
inline bool term_as_double(const Term &t, int scale, double *x) {
  const int e = t.exp - scale, len = bit_length(t.mant);
  if (e < -1074 || e + len > 1024) return false;
  *x = std::ldexp(double(t.mant), e);
  if (t.neg) *x = -*x;
  return true;
}

// How targets are placed (shared by one problem: alpha and beta are).
struct Route {
  std::string name;
  int alpha_exp = 0;  // alpha = +-2^alpha_exp
  bool alpha_neg = false;
  int b_lo = -1074, b_hi = 1023;  // exponents allowed for the b side
  enum Mode { AlphaOnly, TermInBetaC, BetaCCancels } mode = AlphaOnly;
  int beta_exp = 0;  // beta = +-2^beta_exp (modes with beta != 0)
  bool beta_neg = false;
  bool beta_negative_zero = false;     // AlphaOnly: beta = -0 instead of +0
  int cancel_lo = 1, cancel_hi = 200;  // H = 2^(top(T) + d), d in [lo, hi]
  bool swap_sides = false;             // let op(B) carry the mantissa at random
  // b = 2^eb with eb within 30 of half the term's exponent (the exponent
  // split evenly between a and b, not all on a), instead of [b_lo, b_hi].
  bool balanced = false;
};

// One entry's operands: k products (a_p, b_p) and c, with alpha X + beta c = T.
struct Placed {
  std::vector<double> a, b;
  double c = 0;
};

// Splits terms in two equal halves until there are `want` of them (exact:
// M 2^e = M 2^(e-1) + M 2^(e-1)).
inline std::vector<Term> split_to(std::vector<Term> terms, std::size_t want,
                                  std::mt19937_64 &rng) {
  while (terms.size() < want) {
    const std::size_t i = std::size_t(rng() % terms.size());
    Term t = terms[i];
    t.exp -= 1;
    terms[i] = t;
    terms.push_back(t);
  }
  return terms;
}

inline bool place(const Target &target, const Route &r, int max_k, std::mt19937_64 &rng,
                  Placed *out) {
  // Signs: alpha X + beta c = T with alpha, beta of the route's signs.
  std::vector<Term> x_terms = target.terms;  // alpha X's part, as terms of T
  Placed p;
  if (r.mode == Route::TermInBetaC) {
    // The first term (largest-first order is not required) that c can carry.
    std::vector<std::size_t> order(x_terms.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    bool found = false;
    for (std::size_t i : order) {
      double c = 0;
      if (!term_as_double(x_terms[i], r.beta_exp, &c)) continue;
      p.c = r.beta_neg ? -c : c;
      x_terms.erase(x_terms.begin() + std::ptrdiff_t(i));
      found = true;
      break;
    }
    if (!found) return false;
  } else if (r.mode == Route::BetaCCancels) {
    const int h = top_exponent(target.terms) + uniform_int(rng, r.cancel_lo, r.cancel_hi);
    const bool h_neg = coin(rng);
    x_terms.push_back({h_neg, 1, h});
    double c = 0;
    if (!term_as_double({!h_neg, 1, h}, r.beta_exp, &c)) return false;
    p.c = r.beta_neg ? -c : c;
  }
  if (x_terms.empty()) {
    // X must be exactly zero: a cancelling pair (X = +0).
    const double v = std::ldexp(1.0 + u53(rng), uniform_int(rng, -30, 30));
    p.a = {v, v};
    p.b = {1.0, -1.0};
  } else {
    const std::size_t want = std::max<std::size_t>(
        x_terms.size(), std::size_t(uniform_int(rng, 2, std::max(2, max_k))));
    x_terms = split_to(x_terms, std::min<std::size_t>(want, std::size_t(max_k)), rng);
    if (int(x_terms.size()) > max_k) return false;
    for (Term t : x_terms) {
      if (r.alpha_neg) t.neg = !t.neg;
      double a = 0, b = 0;
      const int half = (t.exp - r.alpha_exp) / 2;
      const int lo = r.balanced ? half - 30 : r.b_lo,
                hi = r.balanced ? half + 30 : r.b_hi;
      if (!split_term(t, r.alpha_exp, lo, hi, rng, &a, &b)) return false;
      if (r.swap_sides && coin(rng)) std::swap(a, b);
      p.a.push_back(a);
      p.b.push_back(b);
    }
  }
  // Random order of the products.
  std::vector<std::size_t> perm(p.a.size());
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  Placed q = p;
  for (std::size_t i = 0; i < perm.size(); ++i) {
    q.a[i] = p.a[perm[i]];
    q.b[i] = p.b[perm[i]];
  }
  *out = q;
  return true;
}

inline double route_alpha(const Route &r) {
  const double a = std::ldexp(1.0, r.alpha_exp);
  return r.alpha_neg ? -a : a;
}
inline double route_beta(const Route &r) {
  if (r.mode == Route::AlphaOnly) return r.beta_negative_zero ? -0.0 : 0.0;
  const double b = std::ldexp(1.0, r.beta_exp);
  return r.beta_neg ? -b : b;
}

// Targets on the diagonal of one problem (k = max_k; unused positions hold
// zero products of random sign). Targets the route cannot place are left
// out (counted in *skipped).
inline IeeeProblem pack_targets(const std::string &name,
                                const std::vector<Target> &targets, const Route &r,
                                int max_k, std::mt19937_64 &rng, int *skipped) {
  std::vector<Placed> placed;
  std::vector<double> rn;
  for (const Target &t : targets) {
    Placed p;
    if (place(t, r, max_k, rng, &p)) {
      placed.push_back(p);
      rn.push_back(t.rn);
    } else if (skipped) {
      ++*skipped;
    }
  }
  IeeeProblem pr;
  pr.name = name + " / " + r.name;
  pr.m = pr.n = std::int64_t(placed.size());
  pr.k = max_k;
  pr.alpha = route_alpha(r);
  pr.beta = route_beta(r);
  const std::size_t mk = std::size_t(pr.m * pr.k), kn = std::size_t(pr.k * pr.n);
  pr.a.assign(mk, 0.0);
  pr.b.assign(kn, 0.0);
  for (double &x : pr.a) x = coin(rng) ? -0.0 : 0.0;
  for (double &x : pr.b) x = coin(rng) ? -0.0 : 0.0;
  pr.c.assign(std::size_t(pr.m * pr.n), kNaN);
  const bool beta_reads = pr.beta != 0.0;
  for (std::int64_t t = 0; t < pr.m; ++t) {
    const Placed &p = placed[std::size_t(t)];
    for (std::size_t q = 0; q < p.a.size(); ++q) {
      pr.a[std::size_t(t + std::int64_t(q) * pr.m)] = p.a[q];
      pr.b[std::size_t(std::int64_t(q) + t * pr.k)] = p.b[q];
    }
    if (beta_reads) {
      // Off the diagonal: random values on the scale of the targets' c.
      for (std::int64_t i = 0; i < pr.m; ++i)
        pr.c[std::size_t(i + t * pr.m)] =
            i == t ? p.c : placed[std::size_t(i)].c * (0.5 + u53(rng));
    }
    pr.known.push_back({t + t * pr.m, rn[std::size_t(t)]});
  }
  return pr;
}

// ------------------------------------------------------------ targets

inline std::vector<Target> with_negations(const std::vector<Target> &t) {
  std::vector<Target> all = t;
  for (const Target &x : t) all.push_back(negated(x));
  return all;
}

// Around DBL_MIN and in the subnormal range.
inline std::vector<Target> low_targets(std::mt19937_64 &rng) {
  std::vector<Target> t = {
      {"2^-1022", {pos(1, -1022)}, kMinNormal},
      {"2^-1022+2^-1200", {pos(1, -1022), pos(1, -1200)}, kMinNormal},
      {"2^-1022-2^-1200", {pos(1, -1022), neg(1, -1200)}, kMinNormal},
      {"2^-1022-2^-1075 (tie, up to even)", {pos(1, -1022), neg(1, -1075)}, kMinNormal},
      {"2^-1022-2^-1075-2^-1130 (issue a)",
       {pos(1, -1022), neg(1, -1075), neg(1, -1130)},
       kMaxSub},
      {"2^-1022-2^-1075+2^-1130",
       {pos(1, -1022), neg(1, -1075), pos(1, -1130)},
       kMinNormal},
      {"2^-1022-3*2^-1076", {pos(1, -1022), neg(3, -1076)}, kMaxSub},
      {"2^-1022-3*2^-1076+2^-1200",
       {pos(1, -1022), neg(3, -1076), pos(1, -1200)},
       kMaxSub},
      {"2^-1022-3*2^-1076-2^-1200",
       {pos(1, -1022), neg(3, -1076), neg(1, -1200)},
       kMaxSub},
      {"2^-1022-2^-1074", {pos(1, -1022), neg(1, -1074)}, kMaxSub},
      {"2^-1022-2^-1074+2^-1200", {pos(1, -1022), neg(1, -1074), pos(1, -1200)}, kMaxSub},
      {"2^-1022-2^-1074-2^-1200", {pos(1, -1022), neg(1, -1074), neg(1, -1200)}, kMaxSub},
      {"2^-1022-3*2^-1075 (tie, down to even)",
       {pos(1, -1022), neg(3, -1075)},
       0x0.ffffffffffffep-1022},
      {"2^-1022+2^-1075 (tie, down to even)", {pos(1, -1022), pos(1, -1075)}, kMinNormal},
      {"2^-1022+2^-1075+2^-1200",
       {pos(1, -1022), pos(1, -1075), pos(1, -1200)},
       kNextNormal},
      {"2^-1022+2^-1074", {pos(1, -1022), pos(1, -1074)}, kNextNormal},
      {"2^-1074", {pos(1, -1074)}, 0x1p-1074},
      {"2^-1075 (tie to 0)", {pos(1, -1075)}, 0.0},
      {"2^-1075+2^-1200", {pos(1, -1075), pos(1, -1200)}, 0x1p-1074},
      {"2^-1075-2^-1200", {pos(1, -1075), neg(1, -1200)}, 0.0},
      {"3*2^-1075 (tie, up to even)", {pos(3, -1075)}, 0x1p-1073},
      {"3*2^-1075-2^-1200", {pos(3, -1075), neg(1, -1200)}, 0x1p-1074},
      {"3*2^-1076", {pos(3, -1076)}, 0x1p-1074},
      {"2^-1076", {pos(1, -1076)}, 0.0},
      {"2^-1200", {pos(1, -1200)}, 0.0},
      {"2^-1900", {pos(1, -1900)}, 0.0},
      {"2^1000-2^1000+2^-1075+2^-1300",
       {pos(1, 1000), neg(1, 1000), pos(1, -1075), pos(1, -1300)},
       0x1p-1074},
  };
  // The whole interval of issue a: 2^-1022 - 2^-1075 - R 2^-1129, R < 2^53.
  for (int s = 0; s < 6; ++s) {
    const std::uint64_t r = (rng() >> 11) | 1;
    t.push_back({"2^-1022-2^-1075-" + std::to_string(r) + "*2^-1129",
                 {pos(1, -1022), neg(1, -1075), neg(r, -1129)},
                 kMaxSub});
  }
  // The last ulp below DBL_MIN: 2^-1022 - R 2^-1126, R in [1, 2^52].
  const std::uint64_t half = std::uint64_t(1) << 51;
  for (std::uint64_t r : {std::uint64_t(1), half - 1, half, half + 1, 2 * half,
                          (rng() >> 12) | 1, (rng() >> 12) | 1, (rng() >> 12) | 1}) {
    if (r == 0) continue;
    t.push_back({"2^-1022-" + std::to_string(r) + "*2^-1126",
                 {pos(1, -1022), neg(r, -1126)},
                 r <= half ? kMinNormal : kMaxSub});
  }
  // The subnormal grid: M 2^-1074, its midpoints (ties both ways) and the
  // midpoints nudged by 2^-1200.
  for (int s = 0; s < 6; ++s) {
    std::uint64_t m = ((rng() >> 12) % ((std::uint64_t(1) << 52) - 3)) + 1;
    if (s % 2)
      m |= 1;
    else
      m &= ~std::uint64_t(1);
    if (m == 0) m = 2;
    const std::string ms = std::to_string(m);
    const double lo = std::ldexp(double(m), -1074), hi = std::ldexp(double(m + 1), -1074);
    t.push_back({ms + "*2^-1074", {pos(m, -1074)}, lo});
    t.push_back(
        {ms + "*2^-1074+2^-1075 (tie)", {pos(m, -1074), pos(1, -1075)}, m % 2 ? hi : lo});
    t.push_back({ms + "*2^-1074+2^-1075+2^-1200",
                 {pos(m, -1074), pos(1, -1075), pos(1, -1200)},
                 hi});
    t.push_back({ms + "*2^-1074+2^-1075-2^-1200",
                 {pos(m, -1074), pos(1, -1075), neg(1, -1200)},
                 lo});
  }
  return with_negations(t);
}

// Around DBL_MAX and the overflow threshold 2^1024 - 2^970.
inline std::vector<Target> high_targets(std::mt19937_64 &rng) {
  const double dmax = std::numeric_limits<double>::max();
  std::vector<Target> t = {
      {"DBL_MAX", {pos(kTop53, 971)}, dmax},
      {"DBL_MAX+2^969", {pos(kTop53, 971), pos(1, 969)}, dmax},
      {"DBL_MAX+2^970-2^-1000 (just below the midpoint)",
       {pos(kTop53, 971), pos(1, 970), neg(1, -1000)},
       dmax},
      {"2^1024-2^970 (the midpoint)", {pos(1, 1024), neg(1, 970)}, kInf},
      {"2^1024-2^970+2^-1000", {pos(1, 1024), neg(1, 970), pos(1, -1000)}, kInf},
      {"2^1024-2^970-2^900", {pos(1, 1024), neg(1, 970), neg(1, 900)}, dmax},
      {"2^1024", {pos(1, 1024)}, kInf},
      {"2^1024+2^1000", {pos(1, 1024), pos(1, 1000)}, kInf},
      {"DBL_MAX-2^970 (tie, down to even)",
       {pos(kTop53, 971), neg(1, 970)},
       0x1.ffffffffffffep1023},
      {"2^1023+2^970 (tie, down to even)", {pos(1, 1023), pos(1, 970)}, 0x1p1023},
      {"2^1023+3*2^970 (tie, up to even)",
       {pos(1, 1023), pos(3, 970)},
       0x1.0000000000002p1023},
      {"2^1100-2^1100+DBL_MAX", {pos(1, 1100), neg(1, 1100), pos(kTop53, 971)}, dmax},
  };
  const std::uint64_t m = (std::uint64_t(1) << 52) | (rng() >> 12);
  t.push_back({"M*2^971 (random M)", {pos(m, 971)}, std::ldexp(double(m), 971)});
  return with_negations(t);
}

// Normal-range ties and near ties.
inline std::vector<Target> mid_targets(std::mt19937_64 &rng) {
  std::vector<Target> t = {
      {"1+2^-53 (tie, down)", {pos(1, 0), pos(1, -53)}, 1.0},
      {"1+2^-53+2^-1000", {pos(1, 0), pos(1, -53), pos(1, -1000)}, 1 + 0x1p-52},
      {"1+3*2^-53 (tie, up)", {pos(1, 0), pos(3, -53)}, 1 + 0x1p-51},
      {"1-2^-54 (tie, up)", {pos(1, 0), neg(1, -54)}, 1.0},
      {"1-2^-54-2^-1000", {pos(1, 0), neg(1, -54), neg(1, -1000)}, 1 - 0x1p-53},
  };
  for (int s = 0; s < 4; ++s) {
    const std::uint64_t m = (std::uint64_t(1) << 52) | (rng() >> 12);
    const int e = uniform_int(rng, -900, 900);
    const double lo = std::ldexp(double(m), e), hi = std::ldexp(double(m + 1), e);
    t.push_back({"M*2^e+2^(e-1) (tie)", {pos(m, e), pos(1, e - 1)}, m % 2 ? hi : lo});
    t.push_back(
        {"M*2^e+2^(e-1)-2^(e-300)", {pos(m, e), pos(1, e - 1), neg(1, e - 300)}, lo});
  }
  return with_negations(t);
}

}  // namespace ieee_detail

// ------------------------------------------------------------ the families

// The issue's examples, verbatim (defects a, b, c).
inline IeeeFamily ieee_issue_family() {
  using namespace ieee_detail;
  IeeeFamily f{"issue", {}};
  auto one = [&](const std::string &name, std::int64_t k, std::vector<double> a,
                 std::vector<double> b, double alpha, double beta, double c,
                 double want) {
    IeeeProblem p;
    p.name = name;
    p.m = p.n = 1;
    p.k = k;
    p.a = std::move(a);
    p.b = std::move(b);
    p.alpha = alpha;
    p.beta = beta;
    p.c = {c};
    p.known = {{0, want}};
    f.problems.push_back(p);
  };
  one("a: 2^-1022-2^-1075-2^-1130", 3, {0x1p-511, -0x1p-537, -0x1p-565},
      {0x1p-511, 0x1p-538, 0x1p-565}, 1.0, 0.0, kNaN, kMaxSub);
  one("a: negated", 3, {-0x1p-511, 0x1p-537, 0x1p-565}, {0x1p-511, 0x1p-538, 0x1p-565},
      1.0, 0.0, kNaN, -kMaxSub);
  one("b: alpha=Inf, X=2^-1200, beta=0", 1, {0x1p-600}, {0x1p-600}, kInf, 0.0, kNaN,
      kInf);
  one("b: alpha=Inf, X=2^-1200, beta=1, C=1", 1, {0x1p-600}, {0x1p-600}, kInf, 1.0, 1.0,
      kInf);
  one("b: alpha=-Inf, X=2^-1200, beta=0", 1, {0x1p-600}, {0x1p-600}, -kInf, 0.0, kNaN,
      -kInf);
  one("c: A=B=0, beta=2, C=3", 1, {0.0}, {0.0}, 1.0, 2.0, 3.0, 6.0);
  one("c: A=B=Inf, beta=0", 1, {kInf}, {kInf}, 1.0, 0.0, kNaN, kInf);
  // c at 2x66x32 and 3x3x3: all zeros, beta = 2.
  for (const auto &mnk : {std::vector<std::int64_t>{2, 66, 32}, {3, 3, 3}}) {
    IeeeProblem p;
    p.name = "c: zeros " + std::to_string(mnk[0]) + "x" + std::to_string(mnk[1]) + "x" +
             std::to_string(mnk[2]);
    p.m = mnk[0];
    p.n = mnk[1];
    p.k = mnk[2];
    p.a.assign(std::size_t(p.m * p.k), 0.0);
    p.b.assign(std::size_t(p.k * p.n), 0.0);
    p.alpha = 1.0;
    p.beta = 2.0;
    p.c.resize(std::size_t(p.m * p.n));
    for (std::size_t i = 0; i < p.c.size(); ++i) {
      p.c[i] = 3.0 + double(i);
      p.known.push_back({std::int64_t(i), 2 * p.c[i]});
    }
    f.problems.push_back(p);
  }
  return f;
}

// Boundary targets of the three regions under four routes each, packed on
// diagonals, plus some as single 1 x 1 x k products.
inline IeeeFamily ieee_boundary_family(std::mt19937_64 &rng) {
  using namespace ieee_detail;
  IeeeFamily f{"boundaries", {}};
  struct Region {
    std::string name;
    std::vector<Target> targets;
    int alpha_lo, alpha_hi;  // alpha = 2^s for the routes with b near 1
    int beta_lo, beta_hi;    // beta = 2^s
    int cancel_hi;
  };
  const Region regions[] = {
      {"low", low_targets(rng), -350, -250, -40, -2, 200},
      {"high", high_targets(rng), 250, 350, 250, 350, 100},
      {"mid", mid_targets(rng), -50, 50, -10, 10, 200},
  };
  int skipped = 0;
  for (const Region &g : regions) {
    std::vector<Route> routes(4);
    routes[0].name = "alpha=+-1, balanced products";
    routes[0].alpha_neg = coin(rng);
    routes[0].beta_negative_zero = coin(rng);
    routes[0].swap_sides = true;
    routes[0].balanced = true;
    routes[1].name = "alpha=+-2^s, b near 1";
    routes[2].name = "one term in beta*c";
    routes[2].mode = Route::TermInBetaC;
    routes[3].name = "beta*c cancels part of alpha*X";
    routes[3].mode = Route::BetaCCancels;
    routes[3].cancel_hi = g.cancel_hi;
    for (std::size_t r = 1; r < 4; ++r) {
      routes[r].alpha_exp = uniform_int(rng, g.alpha_lo, g.alpha_hi);
      routes[r].alpha_neg = coin(rng);
      routes[r].b_lo = -20;
      routes[r].b_hi = 20;
      routes[r].beta_exp = uniform_int(rng, g.beta_lo, g.beta_hi);
      routes[r].beta_neg = coin(rng);
    }
    for (const Route &r : routes) {
      IeeeProblem p = pack_targets(g.name, g.targets, r, 4, rng, &skipped);
      if (p.m > 0) f.problems.push_back(p);
    }
    // Single products, k = 2..4, for a sample of the region's targets.
    for (int s = 0; s < 8; ++s) {
      const Target &t = g.targets[std::size_t(rng() % g.targets.size())];
      Route r = routes[std::size_t(rng() % 4)];
      IeeeProblem p = pack_targets(g.name + " single " + t.name, {t}, r, 4, rng, nullptr);
      if (p.m == 1) {
        p.k = std::int64_t(1 + rng() % 4);
        // Trim trailing zero products (the placed ones come first).
        std::int64_t used = 4;
        while (used > 1 && p.a[std::size_t(used - 1)] == 0.0) --used;
        p.k = std::max(p.k, used);
        p.a.resize(std::size_t(p.k));
        p.b.resize(std::size_t(p.k));
        f.problems.push_back(p);
      }
    }
  }
  return f;
}

// Inf and NaN in A, B, C, alpha, beta; Inf * 0 inside the product; alpha
// infinite or NaN with X zero or tiny; beta c infinite against a finite
// (even huge) alpha X; k = 0; alpha = 0 with NaN in A and B; beta = 0 with
// NaN or Inf in C. Every value is stated.
inline IeeeFamily ieee_special_family(std::mt19937_64 &rng) {
  using namespace ieee_detail;
  IeeeFamily f{"specials", {}};
  auto one = [&](const std::string &name, std::vector<double> a, std::vector<double> b,
                 double alpha, double beta, double c, double want) {
    IeeeProblem p;
    p.name = name;
    p.k = std::int64_t(a.size());
    p.a = std::move(a);
    p.b = std::move(b);
    p.alpha = alpha;
    p.beta = beta;
    p.c = {c};
    p.known = {{0, want}};
    f.problems.push_back(p);
  };
  const double nan = kNaN, inf = kInf;
  // Non-finite operands.
  one("A has Inf", {inf, 1}, {2, 3}, 1, 0, nan, inf);
  one("B has -Inf", {2, 1}, {-inf, 3}, 1, 0, nan, -inf);
  one("Inf*-Inf", {inf}, {-inf}, 1, 0, nan, -inf);
  one("Inf - Inf", {inf, inf}, {1, -1}, 1, 0, nan, nan);
  one("Inf*0 among finite products", {1, inf, 2}, {1, 0, 3}, 1, 0, nan, nan);
  one("-0*Inf", {-0.0}, {inf}, 1, 0, nan, nan);
  one("NaN in A", {nan, 1}, {1, 1}, 1, 0, nan, nan);
  one("NaN in B", {1, 1}, {1, nan}, 1, 0, nan, nan);
  one("Inf in A, -Inf in B, same sign product", {inf, 1}, {1, -inf}, 1, 0, nan, nan);
  one("Inf with huge finite", {inf, 0x1p1000}, {1, 0x1p1000}, -1, 0, nan, -inf);
  // C non-finite (beta != 0).
  one("C=Inf", {1}, {1}, 1, 2, inf, inf);
  one("C=-Inf, beta=-1", {1}, {1}, 1, -1, -inf, inf);
  one("C=NaN", {1}, {1}, 1, 2, nan, nan);
  one("C=Inf, P=-Inf", {-inf}, {1}, 1, 1, inf, nan);
  one("C=Inf, P=+Inf", {inf}, {1}, 1, 1, inf, inf);
  one("C=Inf, X=-0", {-0.0}, {1}, 1, 1, inf, inf);
  // alpha non-finite against X of every class.
  struct XCase {
    std::string name;
    std::vector<double> a, b;
    int cls;  // 0: +0, 1: -0, 2: positive, 3: negative, 4: +Inf, 5: NaN
  };
  const XCase xs[] = {
      {"X=+0", {0.0}, {1}, 0},
      {"X=-0", {-0.0}, {1}, 1},
      {"X=+0 by cancellation", {1, 1}, {1, -1}, 0},
      {"X=2^-1200", {0x1p-600}, {0x1p-600}, 2},
      {"X=-2^-1200", {-0x1p-600}, {0x1p-600}, 3},
      {"X=2^-2100", {0x1p-1050}, {0x1p-1050}, 2},
      {"X=1", {1}, {1}, 2},
      {"X=2^2000", {0x1p1000}, {0x1p1000}, 2},
      {"X=Inf", {inf}, {1}, 4},
      {"X=NaN", {nan}, {1}, 5},
  };
  for (const double alpha : {inf, -inf, nan})
    for (const XCase &x : xs)
      for (int bc = 0; bc < 3; ++bc) {
        // beta c: absent (beta = 0, C NaN), 1 * 1, 1 * -Inf.
        const double beta = bc == 0 ? 0.0 : 1.0;
        const double c = bc == 0 ? nan : bc == 1 ? 1.0 : -inf;
        double p;  // alpha X
        if (std::isnan(alpha) || x.cls == 5 || x.cls <= 1)
          p = nan;  // NaN, or Inf * 0
        else if (x.cls == 4)
          p = alpha;
        else
          p = x.cls == 3 ? -alpha : alpha;
        double want = p;
        if (bc == 2) want = (std::isnan(p) || p == inf) ? nan : -inf;
        one("alpha=" + ieee_hex(alpha) + " " + x.name + " beta*c=" +
                (bc == 0   ? "none"
                 : bc == 1 ? "1"
                           : "-Inf"),
            x.a, x.b, alpha, beta, c, want);
      }
  // beta non-finite or C infinite against finite P of every size.
  struct PCase {
    std::string name;
    std::vector<double> a, b;
    double alpha;
    int cls;  // 0: zero, 1: finite nonzero (any size), 2: +Inf
  };
  const PCase ps[] = {
      {"P=+0", {0.0}, {1}, 1, 0},
      {"P=2^500 (alpha=2^-1000, X=2^1500)", {0x1p750}, {0x1p750}, 0x1p-1000, 1},
      {"P=2^2000 (exact, beyond DBL_MAX)", {0x1p1000}, {0x1p1000}, 1, 1},
      {"P=-2^3000", {0x1p1000}, {-0x1p1000}, 0x1p1000, 1},
      {"P=2^-2100", {0x1p-1050}, {0x1p-1050}, 1, 1},
      {"P=+Inf", {inf}, {1}, 1, 2},
  };
  for (const PCase &p : ps)
    for (const double beta : {inf, -inf, nan, 2.0})
      for (const double c : {1.0, -0.0, inf, 0x1p-1074}) {
        const double q = beta * c;  // IEEE: Inf * 0 = NaN; exact for 2 * 2^-1074
        if (!std::isinf(beta) && !std::isnan(beta) && !std::isinf(c)) continue;
        double want;
        if (std::isnan(q) || (p.cls == 2 && q == -inf))
          want = nan;
        else if (std::isinf(q))
          want = q;
        else
          want = inf;  // p.cls == 2, q finite
        one("beta=" + ieee_hex(beta) + " c=" + ieee_hex(c) + " " + p.name, p.a, p.b,
            p.alpha, beta, c, want);
      }
  // The contract's example: alpha = 2^-1000, X = 2^1500, beta c = -Inf.
  one("alpha=2^-1000 X=2^1500 beta*c=-Inf", {0x1p750}, {0x1p750}, 0x1p-1000, 1.0, -inf,
      -inf);
  // alpha = 0 (either sign): A and B not read, C := beta c in one multiplication.
  for (const double alpha : {0.0, -0.0}) {
    one("alpha=" + ieee_hex(alpha) + " A,B NaN", {nan, inf}, {inf, nan}, alpha, -1.5, 2.0,
        -3.0);
    one("alpha=" + ieee_hex(alpha) + " beta=0 C=NaN", {nan}, {nan}, alpha, 0.0, nan, 0.0);
    one("alpha=" + ieee_hex(alpha) + " beta=-0 C=Inf", {inf}, {nan}, alpha, -0.0, inf,
        0.0);
    one("alpha=" + ieee_hex(alpha) + " beta=-1 C=+0", {nan}, {1}, alpha, -1.0, 0.0, -0.0);
    one("alpha=" + ieee_hex(alpha) + " beta=0.5 C=2^-1074 (tie to 0)", {inf}, {inf},
        alpha, 0.5, 0x1p-1074, 0.0);
    one("alpha=" + ieee_hex(alpha) + " beta=-0.5 C=3*2^-1074 (tie up)", {inf}, {inf},
        alpha, -0.5, 0x1.8p-1073, -0x1p-1073);
    one("alpha=" + ieee_hex(alpha) + " beta=Inf C=0", {1}, {1}, alpha, inf, 0.0, nan);
    one("alpha=" + ieee_hex(alpha) + " beta=2^600 C=2^600 (overflow)", {1}, {1}, alpha,
        0x1p600, 0x1p600, inf);
    one("alpha=" + ieee_hex(alpha) + " beta=NaN", {1}, {1}, alpha, nan, 1.0, nan);
  }
  // beta = 0 (either sign): C not read even when NaN or Inf.
  for (const double beta : {0.0, -0.0})
    for (const double c : {nan, inf, -inf}) {
      one("beta=" + ieee_hex(beta) + " C=" + ieee_hex(c) + " X=3", {1.5}, {2}, 1, beta, c,
          3.0);
      one("beta=" + ieee_hex(beta) + " C=" + ieee_hex(c) + " X=-0", {-0.0}, {2}, 1, beta,
          c, -0.0);
    }
  // k = 0: alpha of any value (even NaN) is not used; A and B not read.
  auto k0 = [&](const std::string &name, double alpha, double beta, double c,
                double want) {
    IeeeProblem p;
    p.name = "k=0 " + name;
    p.k = 0;
    p.alpha = alpha;
    p.beta = beta;
    p.c = {c};
    p.known = {{0, want}};
    f.problems.push_back(p);
  };
  k0("beta=2 C=3", 1, 2, 3, 6);
  k0("alpha=NaN beta=2 C=3", nan, 2, 3, 6);
  k0("alpha=Inf beta=0 C=NaN", inf, 0, nan, 0.0);
  k0("beta=-0 C=Inf", 1, -0.0, inf, 0.0);
  k0("beta=-1 C=+0", 1, -1, 0.0, -0.0);
  k0("beta=-1 C=-0", 1, -1, -0.0, 0.0);
  k0("beta=2^-600 C=2^-600 (underflow to +0)", 1, 0x1p-600, 0x1p-600, 0.0);
  k0("beta=-2^-600 C=2^-600 (underflow to -0)", 1, -0x1p-600, 0x1p-600, -0.0);
  k0("beta=0.5 C=2^-1074 (tie to 0)", 1, 0.5, 0x1p-1074, 0.0);
  k0("beta=Inf C=0", 1, inf, 0.0, nan);
  k0("beta=Inf C=-2", 1, inf, -2.0, -inf);
  k0("beta=1 C=NaN", 1, 1, nan, nan);
  // k = 0 at 2 x 3 with C random, beta random (one IEEE product each).
  {
    IeeeProblem p;
    p.name = "k=0 2x3 random";
    p.m = 2;
    p.n = 3;
    p.k = 0;
    p.alpha = 1.5;
    p.beta = (u53(rng) - 0.5) * 4;
    for (int i = 0; i < 6; ++i) {
      p.c.push_back(std::ldexp(u53(rng) - 0.5, uniform_int(rng, -1100, 1000)));
      p.known.push_back({i, p.beta * p.c.back()});
    }
    f.problems.push_back(p);
  }
  // alpha = 0 at 3 x 2 x 4 with A and B full of NaN and Inf.
  {
    IeeeProblem p;
    p.name = "alpha=0 3x2x4, A and B non-finite";
    p.m = 3;
    p.n = 2;
    p.k = 4;
    p.alpha = 0.0;
    p.beta = -0.75;
    for (int i = 0; i < 12; ++i) p.a.push_back(i % 2 ? nan : -inf);
    for (int i = 0; i < 8; ++i) p.b.push_back(i % 3 ? inf : nan);
    for (int i = 0; i < 6; ++i) {
      p.c.push_back(i == 0 ? -0.0 : double(i));
      p.known.push_back({i, p.beta * p.c.back()});
    }
    f.problems.push_back(p);
  }
  return f;
}

// Every combination of zero signs: rows of op(A) and columns of op(B) run
// over all vectors of {+0, -0, +s, -s}^k (k = 1, 2, 3), C over zeros of both
// signs and values that cancel alpha X exactly; alpha and beta over both
// zeros, +-1, and +-2^-1074 (with s = 1/4, where every nonzero alpha X is
// below 2^-1075 and rounds to a zero of its own sign).
inline IeeeFamily ieee_signed_zero_family(std::mt19937_64 &rng) {
  using namespace ieee_detail;
  IeeeFamily f{"signed zeros", {}};
  for (int scale = 0; scale < 2; ++scale)
    for (int k = 1; k <= 3; ++k) {
      const double s = scale == 0 ? 1.0 : 0.25;
      const double vals[4] = {0.0, -0.0, s, -s};
      std::int64_t count = 1;
      for (int q = 0; q < k; ++q) count *= 4;
      const double alphas0[] = {1.0, -1.0, 0.0, -0.0};
      const double alphas1[] = {0x1p-1074, -0x1p-1074};
      const double betas[] = {0.0, -0.0, 1.0, -1.0};
      const std::vector<double> alphas = scale == 0
                                             ? std::vector<double>(alphas0, alphas0 + 4)
                                             : std::vector<double>(alphas1, alphas1 + 2);
      for (double alpha : alphas)
        for (double beta : betas) {
          // k = 3 is the big one (64 x 64): only with alpha = +-1 or tiny.
          if (k == 3 && alpha == 0.0) continue;
          IeeeProblem p;
          p.name = "k=" + std::to_string(k) + " s=" + ieee_hex(s) +
                   " alpha=" + ieee_hex(alpha) + " beta=" + ieee_hex(beta);
          p.m = p.n = count;
          p.k = k;
          p.alpha = alpha;
          p.beta = beta;
          p.a.resize(std::size_t(p.m * k));
          p.b.resize(std::size_t(k * p.n));
          for (std::int64_t r = 0; r < count; ++r) {
            std::int64_t code = r;
            for (int q = 0; q < k; ++q, code /= 4) {
              p.a[std::size_t(r + q * p.m)] = vals[code % 4];
              p.b[std::size_t(q + r * k)] = vals[(code + q) % 4];  // another order
            }
          }
          // C: zeros of both signs and values of alpha X's size (cancelling
          // it now and then: X is an integer multiple of s^2).
          const double unit = scale == 0 ? 1.0 : 0x1p-1074;
          const double cs[] = {0.0, -0.0, unit, -unit, 2 * unit, -2 * unit, 3 * unit};
          p.c.resize(std::size_t(p.m * p.n));
          for (double &c : p.c) c = beta == 0.0 ? kNaN : cs[rng() % 7];
          f.problems.push_back(p);
        }
    }
  // A row of -0 times a column of positives (X = -0), under alpha = +-1.
  for (double alpha : {1.0, -1.0}) {
    IeeeProblem p;
    p.name = "row of -0, positive column, alpha=" + ieee_hex(alpha);
    p.m = 1;
    p.n = 1;
    p.k = 5;
    p.a.assign(5, -0.0);
    p.b = {1, 2, 0x1p-1074, 0x1p1000, 0.0};
    p.alpha = alpha;
    p.beta = 0.0;
    p.c = {kNaN};
    p.known = {{0, alpha > 0 ? -0.0 : 0.0}};
    f.problems.push_back(p);
  }
  return f;
}

// Operands without a nonzero finite entry (only zeros, Inf, NaN), and one
// side so while the other is random, at 1x1x1, 2x66x32, 3x3x3 (and 70x65x33,
// past one block).
inline IeeeFamily ieee_no_finite_family(std::mt19937_64 &rng) {
  using namespace ieee_detail;
  IeeeFamily f{"no nonzero finite entry", {}};
  enum Fill { PosZeros, NegZeros, MixedZeros, ZerosInf, ZerosInfNaN, InfOnly, Random };
  const char *names[] = {"+0", "-0", "+-0", "0/Inf", "0/Inf/NaN", "Inf", "random"};
  auto value = [&](Fill fill) {
    const int r = int(rng() % 8);
    switch (fill) {
      case PosZeros:
        return 0.0;
      case NegZeros:
        return -0.0;
      case MixedZeros:
        return r % 2 ? -0.0 : 0.0;
      case ZerosInf:
        return r == 0 ? kInf : r == 1 ? -kInf : r % 2 ? -0.0 : 0.0;
      case ZerosInfNaN:
        return r == 0 ? kInf : r == 1 ? kNaN : r == 2 ? -kInf : r % 2 ? -0.0 : 0.0;
      case InfOnly:
        return r % 2 ? -kInf : kInf;
      case Random:
        return (u53(rng) - 0.5) * std::ldexp(1.0, uniform_int(rng, -4, 4));
    }
    return 0.0;
  };
  const std::pair<Fill, Fill> pairs[] = {
      {PosZeros, PosZeros},   {NegZeros, PosZeros},       {MixedZeros, MixedZeros},
      {ZerosInf, MixedZeros}, {ZerosInfNaN, ZerosInfNaN}, {InfOnly, InfOnly},
      {PosZeros, Random},     {Random, MixedZeros},       {InfOnly, Random},
      {ZerosInf, Random}};
  const std::int64_t sizes[][3] = {{1, 1, 1}, {2, 66, 32}, {3, 3, 3}, {70, 65, 33}};
  for (const auto &sz : sizes)
    for (const auto &pr : pairs) {
      if (sz[0] == 70 && pr.first != PosZeros && pr.first != MixedZeros &&
          pr.first != ZerosInf)
        continue;  // the big size for a few fills only
      IeeeProblem p;
      p.m = sz[0];
      p.n = sz[1];
      p.k = sz[2];
      static const double alphas[] = {1.0, -1.0, 2.5};
      static const double betas[] = {0.0, 2.0, -0.0, -1.0};
      p.alpha = alphas[rng() % 3];
      p.beta = betas[rng() % 4];
      p.name = std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
               std::to_string(p.k) + " A " + names[pr.first] + ", B " + names[pr.second] +
               " alpha=" + ieee_hex(p.alpha) + " beta=" + ieee_hex(p.beta);
      for (std::int64_t i = 0; i < p.m * p.k; ++i) p.a.push_back(value(pr.first));
      for (std::int64_t i = 0; i < p.k * p.n; ++i) p.b.push_back(value(pr.second));
      for (std::int64_t i = 0; i < p.m * p.n; ++i) {
        const int r = int(rng() % 4);
        p.c.push_back(p.beta == 0.0 ? kNaN
                      : r == 0      ? 0.0
                      : r == 1      ? -0.0
                                    : (u53(rng) - 0.5) * 8);
      }
      f.problems.push_back(p);
    }
  return f;
}

// Boundary targets planted in larger random matrices (phi = 1 data): the
// planted row of op(A) is zero outside the target's positions, so the
// planted entry is exactly the target while its neighbours mix the planted
// rows and columns with random data (low region: results around 2^-1100,
// subnormal and random). Sizes past one 64 x 64 block of C.
inline IeeeFamily ieee_planted_family(std::mt19937_64 &rng) {
  using namespace ieee_detail;
  IeeeFamily f{"planted in random matrices", {}};
  struct Spec {
    std::int64_t m, n, k;
    int region;  // 0 low, 1 high
    Route::Mode mode;
  };
  const Spec specs[] = {{70, 67, 45, 0, Route::AlphaOnly},
                        {70, 67, 45, 1, Route::TermInBetaC},
                        {130, 97, 64, 0, Route::TermInBetaC},
                        {97, 130, 50, 0, Route::BetaCCancels},
                        {67, 70, 45, 1, Route::AlphaOnly}};
  std::normal_distribution<double> randn(0.0, 1.0);
  for (const Spec &s : specs) {
    std::vector<Target> targets = s.region == 0 ? low_targets(rng) : high_targets(rng);
    std::shuffle(targets.begin(), targets.end(), rng);
    Route r;
    r.name = s.mode == Route::AlphaOnly     ? "alpha only"
             : s.mode == Route::TermInBetaC ? "one term in beta*c"
                                            : "beta*c cancels";
    r.mode = s.mode;
    r.alpha_exp =
        s.region == 0 ? uniform_int(rng, -350, -250) : uniform_int(rng, 250, 350);
    r.alpha_neg = coin(rng);
    r.beta_exp = s.region == 0 ? uniform_int(rng, -40, -2) : uniform_int(rng, 250, 350);
    r.beta_neg = coin(rng);
    r.b_lo = -20;
    r.b_hi = 20;
    r.cancel_hi = s.region == 0 ? 200 : 100;
    IeeeProblem p;
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.alpha = route_alpha(r);
    p.beta = route_beta(r);
    p.name = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
             (s.region == 0 ? " low / " : " high / ") + r.name;
    p.a.resize(std::size_t(p.m * p.k));
    p.b.resize(std::size_t(p.k * p.n));
    p.c.resize(std::size_t(p.m * p.n));
    for (double &x : p.a) x = (u53(rng) - 0.5) * std::exp(randn(rng));
    for (double &x : p.b) x = (u53(rng) - 0.5) * std::exp(randn(rng));
    // C on the scale of beta c's targets (random where nothing is planted).
    for (double &x : p.c)
      x = p.beta == 0.0 ? kNaN
                        : (u53(rng) - 0.5) * std::ldexp(1.0, s.region == 0 ? -1000 : 700);
    // Plant on distinct rows and columns, at random positions of k.
    std::vector<std::int64_t> rows(std::size_t(p.m)), cols(std::size_t(p.n)),
        ks(std::size_t(p.k));
    for (std::int64_t i = 0; i < p.m; ++i) rows[std::size_t(i)] = i;
    for (std::int64_t j = 0; j < p.n; ++j) cols[std::size_t(j)] = j;
    for (std::int64_t q = 0; q < p.k; ++q) ks[std::size_t(q)] = q;
    std::shuffle(rows.begin(), rows.end(), rng);
    std::shuffle(cols.begin(), cols.end(), rng);
    const std::size_t planted = std::min<std::size_t>(16, targets.size());
    std::size_t t_next = 0;
    for (std::size_t slot = 0; slot < planted && t_next < targets.size(); ++t_next) {
      Placed pl;
      if (!place(targets[t_next], r, 4, rng, &pl)) continue;
      const std::int64_t i = rows[slot], j = cols[slot];
      std::shuffle(ks.begin(), ks.end(), rng);
      for (std::int64_t q = 0; q < p.k; ++q) p.a[std::size_t(i + q * p.m)] = 0.0;
      for (std::size_t q = 0; q < pl.a.size(); ++q) {
        p.a[std::size_t(i + ks[q] * p.m)] = pl.a[q];
        p.b[std::size_t(ks[q] + j * p.k)] = pl.b[q];
      }
      if (p.beta != 0.0) p.c[std::size_t(i + j * p.m)] = pl.c;
      p.known.push_back({i + j * p.m, targets[t_next].rn});
      ++slot;
    }
    f.problems.push_back(p);
  }
  return f;
}

}  // namespace xn_test
