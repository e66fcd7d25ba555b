// test_numerics_exact_dot.cpp - the one-pass correctly rounded dot product
// (kernels/numerics/exact_dot.h) held to its own claims, below the host and
// device entry points that use it:
//  * dot2_round's certificate is sound: whenever it returns true, its value
//    is the IEEE oracle's (support/ieee_oracle.h) bit for bit, whatever the
//    data, the split into parts and the order of merges; and it certifies
//    nearly all well-conditioned dot products (the fast path is the usual
//    one);
//  * exact_dot_entry, the fallback, always gives the oracle's value;
//  * exact ties are never certified, near ties only correctly;
//  * dot2_error_bound bounds |X - (s + c)|, measured exactly with MPFR, for
//    any merge order, adversarial ones included (the largest ratio observed
//    is printed, not asserted);
//  * the flags (products too large or too small for an exact TwoProd
//    decline; Inf and NaN products, scalars and exactly zero sums of any
//    sign are decided by dot2_round itself, as IEEE says) and BLAS's
//    alpha == 0 rule.
// Inputs are fresh per run; a failure prints the seed (XN_TEST_SEED replays)
// and the failing input in hex floats.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "numerics/exact_dot.h"
#include "support/exdgemm_inputs.h"
#include "support/ieee_oracle.h"
#include "support/test_support.h"

namespace {

using xn::exact::Dot2;
using xn::exact::dot2_add;
using xn::exact::dot2_clear;
using xn::exact::dot2_error_bound;
using xn::exact::dot2_merge;
using xn::exact::dot2_round;
using xn::exact::exact_dot_entry;
using xn::exact::kDot2NaN;
using xn::exact::kDot2NegInf;
using xn::exact::kDot2PosInf;
using xn::exact::kDot2Uncovered;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr auto &bits = xn_test::ex_bits;
constexpr auto &same = xn_test::ex_same_bits;

constexpr auto &hex = xn_test::ex_hex;

std::string show(const std::vector<double> &v) {
  std::string s = "{";
  const std::size_t shown = std::min<std::size_t>(v.size(), 24);
  for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + hex(v[i]);
  if (shown < v.size()) s += ", ... (" + std::to_string(v.size()) + " entries)";
  return s + "}";
}

std::string show(const Dot2 &d) {
  return "Dot2{s=" + hex(d.s) + " c=" + hex(d.c) + " cabs=" + hex(d.cabs) +
         " flags=" + std::to_string(d.flags) + "}";
}

// alpha x^T y + beta c, the 1 x 1 x n product of the contract.
struct DotCase {
  std::vector<double> x, y;
  double alpha = 1.0, beta = 0.0, c = 0.0;
  std::int64_t n() const { return std::int64_t(x.size()); }
  std::string describe() const {
    return "n=" + std::to_string(n()) + " alpha=" + hex(alpha) + " beta=" + hex(beta) +
           " c=" + hex(c) + "\n  x=" + show(x) + "\n  y=" + show(y);
  }
};

// The IEEE oracle's value of the case (c unread when beta == 0).
double oracle_value(const DotCase &d) {
  return xn_test::exact_gemm_entry_ieee(false, false, d.n(), d.alpha, d.x.data(), 1,
                                        d.y.data(), std::max<std::int64_t>(d.n(), 1),
                                        d.beta, &d.c, 1, 0, 0);
}

double fallback_value(const DotCase &d) {
  return exact_dot_entry(d.x.data(), 1, d.y.data(), 1, d.n(), d.alpha, d.beta, &d.c);
}

// ------------------------------------------------------------ accumulation

// A finished accumulation and the TwoSum count dot2_round is told.
struct Accumulated {
  Dot2 d;
  double ops;
  const char *how;
};

Dot2 accumulate(const DotCase &cs, const std::vector<std::size_t> &order,
                std::size_t begin, std::size_t end) {
  Dot2 d;
  dot2_clear(d);
  for (std::size_t k = begin; k < end; ++k) dot2_add(d, cs.x[order[k]], cs.y[order[k]]);
  return d;
}

std::vector<std::size_t> identity_order(std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  return order;
}

// Every product in `order`, one part: n TwoSums.
Accumulated sequential(const DotCase &cs, const std::vector<std::size_t> &order,
                       const char *how) {
  return {accumulate(cs, order, 0, order.size()), double(order.size()), how};
}

enum class MergeShape { RandomTree, Chain };

// `parts` consecutive runs of `order` of random lengths (empty ones too),
// merged either pairwise in a random tree or one by one in random order
// into a cleared accumulator: n + parts TwoSums at most.
Accumulated in_parts(const DotCase &cs, const std::vector<std::size_t> &order,
                     std::size_t parts, MergeShape shape, std::mt19937_64 &rng,
                     const char *how) {
  const std::size_t n = order.size();
  std::vector<std::size_t> cuts{0, n};
  for (std::size_t p = 1; p < parts; ++p) cuts.push_back(std::size_t(rng() % (n + 1)));
  std::sort(cuts.begin(), cuts.end());
  std::vector<Dot2> pool;
  for (std::size_t p = 0; p + 1 < cuts.size(); ++p)
    pool.push_back(accumulate(cs, order, cuts[p], cuts[p + 1]));
  Dot2 total;
  if (shape == MergeShape::RandomTree) {
    while (pool.size() > 1) {
      const std::size_t i = rng() % pool.size();
      std::size_t j = rng() % (pool.size() - 1);
      if (j >= i) ++j;
      dot2_merge(pool[i], pool[j]);
      pool[j] = pool.back();
      pool.pop_back();
    }
    total = pool[0];
  } else {
    std::shuffle(pool.begin(), pool.end(), rng);
    dot2_clear(total);
    for (const Dot2 &part : pool) dot2_merge(total, part);
  }
  return {total, double(n + parts), how};
}

// ------------------------------------------------------------ random data

double normal(std::mt19937_64 &rng) {
  return std::normal_distribution<double>(0.0, 1.0)(rng);
}

// (u - 0.5) exp(phi randn): phi sets the exponent range (Ogita, Rump and
// Oishi's test data; 0 gives entries of one binade or so).
double random_entry(double phi, std::mt19937_64 &rng) {
  return (xn_test::uniform01(rng) - 0.5) * std::exp(phi * normal(rng));
}

// 1 .. max_n, log-uniform.
std::int64_t random_length(std::int64_t max_n, std::mt19937_64 &rng) {
  const double t = xn_test::uniform01(rng);
  return std::max<std::int64_t>(1, std::int64_t(std::exp(t * std::log(double(max_n)))));
}

double random_scalar(std::mt19937_64 &rng) {
  static const double kFixed[] = {1.0, -1.0, 2.0, 0.75, -3.0, 0x1p-30, 0x1.8p40};
  if (rng() % 2 == 0) return kFixed[rng() % (sizeof kFixed / sizeof kFixed[0])];
  double s = 0.0;
  while (s == 0.0) s = random_entry(2.0, rng);
  return s;
}

// Random scalars (alpha, beta, c): (1, 0, NaN), (alpha, 0, NaN), (alpha,
// beta, c) with c of any size, (1, 1, c) with c of x^T y's size.
void random_scalars(DotCase &cs, std::mt19937_64 &rng) {
  const std::uint64_t kind = rng() % 4;
  cs.alpha = kind == 0 || kind == 3 ? 1.0 : random_scalar(rng);
  cs.beta = kind == 2 ? random_scalar(rng) : kind == 3 ? 1.0 : 0.0;
  if (kind == 2) {
    cs.c = random_entry(4.0, rng);
  } else if (kind == 3) {
    cs.c = random_entry(1.0, rng) * std::sqrt(double(cs.n()));
  } else {
    cs.c = kNaN;  // beta == 0: never read
  }
}

// The data families of the soundness test. kCancelWithC: beta c cancels
// alpha x^T y down to the rounding of c (or to 2^-40..2^-59 of it).
// kExactCancelWithC: the same with n <= 3 exact products (y = +-2^k); Dot2
// then makes no error (cabs = 0, often) and the TwoSum errors of
// dot2_round's own last sum alpha (h + l) + beta c decide; many small
// cases, as few come near enough.
enum Family {
  kWellConditioned,
  kWideRange,
  kCancellation,
  kCancelWithC,
  kExactCancelWithC,
  kFamilies
};
const char *const kFamilyNames[] = {
    "well-conditioned (phi 0, 1)", "wide range (phi 4, 16)",
    "pairs (a, -a) + small terms", "alpha x^T y ~ -beta c",
    "exact x^T y, alpha x^T y ~ -beta c"};

// Pairs a b and a (-b) (exact cancellation of the products) in random
// places, plus a few terms 2^-shift smaller: X is tiny next to sum |p_i|.
DotCase cancelling_case(std::int64_t n, double phi, std::mt19937_64 &rng) {
  DotCase cs;
  const std::int64_t small = 1 + std::int64_t(rng() % std::uint64_t(n / 8 + 1));
  const std::int64_t pairs = std::max<std::int64_t>(0, (n - small) / 2);
  static const int kShifts[] = {20, 45, 60, 80, 120};
  const int shift = kShifts[rng() % 5];
  for (std::int64_t p = 0; p < pairs; ++p) {
    const double a = random_entry(phi, rng), b = random_entry(phi, rng);
    cs.x.push_back(a), cs.y.push_back(b);
    if (rng() % 2) {
      cs.x.push_back(-a), cs.y.push_back(b);
    } else {
      cs.x.push_back(a), cs.y.push_back(-b);
    }
  }
  for (std::int64_t p = 0; p < small; ++p) {
    cs.x.push_back(std::ldexp(random_entry(phi, rng), -shift));
    cs.y.push_back(random_entry(phi, rng));
  }
  std::vector<std::size_t> perm = identity_order(cs.x.size());
  std::shuffle(perm.begin(), perm.end(), rng);
  DotCase shuffled;
  for (std::size_t k : perm) shuffled.x.push_back(cs.x[k]), shuffled.y.push_back(cs.y[k]);
  return shuffled;
}

DotCase random_case(Family family, std::int64_t max_n, std::mt19937_64 &rng) {
  static const double kPhis[] = {0.0, 1.0, 4.0, 16.0};
  DotCase cs;
  if (family == kCancellation) {
    cs = cancelling_case(random_length(max_n, rng), kPhis[rng() % 4], rng);
  } else if (family == kExactCancelWithC) {
    for (std::uint64_t k = 1 + rng() % 3; k > 0; --k) {
      cs.x.push_back(random_entry(1.0, rng));
      cs.y.push_back(std::ldexp(rng() % 2 ? 1.0 : -1.0, int(rng() % 21) - 10));
    }
  } else {
    const double phi = family == kWellConditioned ? kPhis[rng() % 2]
                       : family == kWideRange     ? kPhis[2 + rng() % 2]
                                                  : kPhis[rng() % 3];
    for (std::int64_t k = random_length(max_n, rng); k > 0; --k) {
      cs.x.push_back(random_entry(phi, rng));
      cs.y.push_back(random_entry(phi, rng));
    }
  }
  random_scalars(cs, rng);
  if (family == kCancelWithC || family == kExactCancelWithC) {
    // beta c = -RN(alpha X) (1 + 2^-j u'), j = 40..59, or exactly
    // -RN(alpha X) / beta rounded.
    cs.alpha = random_entry(1.0, rng);
    cs.beta = random_entry(1.0, rng);
    DotCase ax = cs;
    ax.beta = 0.0;
    const double p = oracle_value(ax);
    cs.c = -p / cs.beta;
    if (rng() % 4 == 0)
      cs.c *= 1.0 + std::ldexp(xn_test::uniform01(rng), -40 - int(rng() % 20));
  }
  return cs;
}

// The accumulations every soundness check runs: in order; a random
// permutation in random parts merged by a random tree; random parts
// chained into a cleared accumulator.
std::vector<Accumulated> accumulations(const DotCase &cs, std::mt19937_64 &rng) {
  const std::size_t n = cs.x.size();
  std::vector<Accumulated> out;
  out.push_back(sequential(cs, identity_order(n), "sequential"));
  std::vector<std::size_t> perm = identity_order(n);
  std::shuffle(perm.begin(), perm.end(), rng);
  const std::size_t parts = 2 + rng() % std::min<std::size_t>(n + 1, 200);
  out.push_back(in_parts(cs, perm, parts, MergeShape::RandomTree, rng, "random tree"));
  out.push_back(in_parts(cs, identity_order(n), 1 + rng() % (n + 1), MergeShape::Chain,
                         rng, "chain"));
  return out;
}

// The checks of one case: the fallback equals the oracle, and every
// certified rounding does too. Returns an empty string or the failure.
struct Tally {
  long certified = 0, tried = 0;
  double fraction() const { return tried ? double(certified) / double(tried) : 0.0; }
};

std::string check_case(const DotCase &cs, const std::vector<Accumulated> &accs,
                       double want, Tally &tally, bool *any_certified = nullptr) {
  const double exact = fallback_value(cs);
  if (!same(exact, want))
    return "exact_dot_entry gave " + hex(exact) + ", oracle " + hex(want) + "\n  " +
           cs.describe();
  if (any_certified) *any_certified = false;
  for (const Accumulated &a : accs) {
    double out = kNaN;
    ++tally.tried;
    if (!dot2_round(a.d, a.ops, cs.alpha, cs.beta, cs.c, &out)) continue;
    ++tally.certified;
    if (any_certified) *any_certified = true;
    if (!same(out, want))
      return std::string("dot2_round (") + a.how + ", ops " + std::to_string(a.ops) +
             ") certified " + hex(out) + ", oracle " + hex(want) + "\n  " + show(a.d) +
             "\n  " + cs.describe();
  }
  return "";
}

// ------------------------------------------------------------ 1. soundness

TEST(NumericsExactDot, CertificateIsSoundAndUsual) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const int kCases[kFamilies] = {1200, 600, 600, 300, 50000};
  Tally tally[kFamilies];
  for (int f = 0; f < kFamilies; ++f)
    for (int k = 0; k < kCases[f]; ++k) {
      const DotCase cs = random_case(Family(f), 5000, rng);
      const double want = oracle_value(cs);
      const std::string msg = check_case(cs, accumulations(cs, rng), want, tally[f]);
      ASSERT_TRUE(msg.empty()) << kFamilyNames[f] << ", case " << k << ": " << msg;
    }
  std::printf("[ exact_dot ] %s\n", xn_test::describe_seed(seed).c_str());
  for (int f = 0; f < kFamilies; ++f)
    std::printf("[ exact_dot ] certified %-36s %5ld / %5ld = %.4f\n", kFamilyNames[f],
                tally[f].certified, tally[f].tried, tally[f].fraction());
  // The certificate is the fast path: it must decide nearly every
  // well-conditioned dot product, in any merge order.
  EXPECT_GE(tally[kWellConditioned].fraction(), 0.99);
  // Heavy cancellation must reach the fallback some of the time, or the
  // families above test nothing beyond the fast path.
  EXPECT_LT(tally[kCancelWithC].fraction(), 1.0);
}

// ------------------------------------------------------------ 2. near ties

constexpr mpfr_prec_t kExactPrec = 6400;  // any sum of double products is exact

// X = x^T y exactly in MPFR (every operation checked exact; also used by
// the bound test below): the terms that move a case onto a midpoint, and
// |X - (s + c)| against a bound.
class ExactDot {
 public:
  explicit ExactDot(const DotCase &cs) {
    mpfr_init2(sum_, kExactPrec);
    mpfr_init2(work_, kExactPrec);
    mpfr_init2(prod_, 106);
    mpfr_init2(bound_, 53);
    mpfr_set_zero(sum_, 1);
    for (std::size_t k = 0; k < cs.x.size(); ++k) {
      mpfr_set_d(prod_, cs.x[k], MPFR_RNDN);
      exact_ &= mpfr_mul_d(prod_, prod_, cs.y[k], MPFR_RNDN) == 0;
      exact_ &= mpfr_add(sum_, sum_, prod_, MPFR_RNDN) == 0;
    }
  }
  ~ExactDot() {
    mpfr_clear(sum_);
    mpfr_clear(work_);
    mpfr_clear(prod_);
    mpfr_clear(bound_);
  }
  ExactDot(const ExactDot &) = delete;
  ExactDot &operator=(const ExactDot &) = delete;

  bool exact() const { return exact_; }
  double rounded() const { return mpfr_get_d(sum_, MPFR_RNDN); }

  // Doubles d_k such that alpha (X + sum d_k) + beta c is exactly a
  // midpoint m of the double grid near V = alpha X + beta c (normal, not
  // near a power of two): appended as products d_k * 1 they put the case
  // on a tie. alpha is an odd k <= 7 times a power of two; m is the
  // midpoint nearest V for which (m - V) / alpha is a finite binary
  // fraction (one in every k consecutive ones is, in one binade).
  // *nearest = RN(V); *found = false if none of the 8 tried qualifies.
  std::vector<double> terms_to_midpoint(double alpha, double beta, double c,
                                        double *nearest, bool *found_out) {
    mpfr_t v, m, q;
    mpfr_inits2(kExactPrec, v, m, q, static_cast<mpfr_ptr>(nullptr));
    exact_ &= mpfr_mul_d(v, sum_, alpha, MPFR_RNDN) == 0;
    if (beta != 0.0) {
      mpfr_set_d(prod_, beta, MPFR_RNDN);
      exact_ &= mpfr_mul_d(prod_, prod_, c, MPFR_RNDN) == 0;
      exact_ &= mpfr_add(v, v, prod_, MPFR_RNDN) == 0;
    }
    *nearest = mpfr_get_d(v, MPFR_RNDN);
    double low = *nearest;
    for (int k = 0; k < 4; ++k) low = std::nextafter(low, -kInf);
    bool found = false;
    for (int k = 0; k < 8; ++k, low = std::nextafter(low, kInf)) {
      mpfr_set_d(m, low, MPFR_RNDN);
      exact_ &= mpfr_add_d(m, m, std::nextafter(low, kInf), MPFR_RNDN) == 0;
      exact_ &= mpfr_div_2ui(m, m, 1, MPFR_RNDN) == 0;
      exact_ &= mpfr_sub(m, m, v, MPFR_RNDN) == 0;  // m - V
      if (mpfr_div_d(m, m, alpha, MPFR_RNDN) != 0) continue;
      if (found && mpfr_cmpabs(m, q) >= 0) continue;
      mpfr_set(q, m, MPFR_RNDN);
      found = true;
    }
    *found_out = found;
    std::vector<double> terms;
    while (found && !mpfr_zero_p(q) && terms.size() < 64) {
      terms.push_back(mpfr_get_d(q, MPFR_RNDN));
      exact_ &= mpfr_sub_d(q, q, terms.back(), MPFR_RNDN) == 0;
    }
    exact_ &= !found || mpfr_zero_p(q) != 0;
    mpfr_clears(v, m, q, static_cast<mpfr_ptr>(nullptr));
    return terms;
  }
  // Whether |X - (s + c)| <= bound (compared exactly); *ratio = the
  // residual over the bound (rounded up).
  bool within(const Dot2 &d, double bound, double *ratio) {
    mpfr_set(work_, sum_, MPFR_RNDN);
    exact_ &= mpfr_sub_d(work_, work_, d.s, MPFR_RNDN) == 0;
    exact_ &= mpfr_sub_d(work_, work_, d.c, MPFR_RNDN) == 0;
    mpfr_abs(work_, work_, MPFR_RNDN);
    mpfr_set_d(bound_, bound, MPFR_RNDN);
    *ratio = mpfr_get_d(work_, MPFR_RNDU) / bound;
    return mpfr_cmp(work_, bound_) <= 0;
  }

 private:
  mpfr_t sum_, work_, prod_, bound_;
  bool exact_ = true;
};

struct TieCase {
  DotCase cs;
  bool exact_tie;      // the exact value is a midpoint of the (normal) double grid
  int distance_class;  // index of its offset from the midpoint (kOffsets)
};

bool scales_exactly(const std::vector<double> &v, int k) {
  for (double x : v)
    if (std::ldexp(std::ldexp(x, k), -k) != x) return false;
  return true;
}

std::vector<double> scaled(const std::vector<double> &v, int k) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::ldexp(x, k));
  return out;
}

double max_abs(const std::vector<double> &v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Whether the exact value of cs is a midpoint: RN of it plus and minus a
// far smaller product (2^-120 of the largest, formed by the oracle
// exactly, not rounded to a double) differ.
bool oracle_sees_tie(const DotCase &cs) {
  const double tx = std::ldexp(max_abs(cs.x), -60), ty = std::ldexp(max_abs(cs.y), -60);
  DotCase above = cs, below = cs;
  above.x.push_back(tx), above.y.push_back(ty);
  below.x.push_back(-tx), below.y.push_back(ty);
  return bits(oracle_value(above)) != bits(oracle_value(below));
}

TEST(NumericsExactDot, NearTiesAreNeverMisrounded) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  // Offsets from the midpoint, relative to the value: 0 (a tie), 2^-60 ulp
  // and a few times it, down to 2^-200, and up to 2^-70 (where certificates
  // become possible).
  const double kOffsets[] = {0.0,      0x1p-200, 0x1p-113, 0x1.8p-112, 0x1p-110, 0x1p-106,
                             0x1p-100, 0x1p-95,  0x1p-90,  0x1p-85,    0x1p-80,  0x1p-70};
  constexpr int kClasses = sizeof kOffsets / sizeof kOffsets[0];
  const int kScales[] = {0, 1, -1, 60, -60, 500, -500, 960, -900, 1010, -1010, -1050};
  std::vector<TieCase> cases;
  // Hand cases: 1 + 2^-53 (the midpoint above 1) and 1 - 2^-54 (below 1,
  // where the spacing halves), +- offset, every order of the three terms,
  // scaled by 2^k, either sign; also a tie formed only by beta c.
  for (int cls = 0; cls < kClasses; ++cls)
    for (double sign_tiny : {1.0, -1.0})
      for (double half : {0x1p-53, -0x1p-54})
        for (int k : kScales)
          for (double sign : {1.0, -1.0}) {
            if (cls == 0 && sign_tiny < 0) continue;
            std::vector<double> x = {1.0, half, sign_tiny * kOffsets[cls]};
            std::shuffle(x.begin(), x.end(), rng);
            TieCase t;
            t.cs.x = scaled(x, k);
            t.cs.y = {sign, sign, sign};
            const double alpha_scale = rng() % 2 ? 1.0 : 0x1p-3;
            t.cs.alpha = alpha_scale;
            t.exact_tie = cls == 0 && scales_exactly(x, k) && k - 3 >= -1021 && k <= 1022;
            t.distance_class = cls;
            cases.push_back(t);
            // The same midpoint with its small half as beta c.
            TieCase b = t;
            b.cs.x = scaled({1.0, sign_tiny * kOffsets[cls]}, k);
            b.cs.y = {sign, sign};
            b.cs.beta = 0.5 * alpha_scale;
            b.cs.c = std::ldexp(2.0 * half * sign, k);
            b.exact_tie = cls == 0 && scales_exactly({1.0, 2.0 * half}, k) &&
                          k - 3 >= -1021 && k <= 1022;
            cases.push_back(b);
          }
  // Random ties: integer products summing to S, an anchor 3 2^61 and a
  // correction put the exact value on a midpoint 512 (mod 1024) of the grid
  // of [2^62, 2^63); then an offset, a power-of-two scaling, a sign.
  for (int r = 0; r < 300; ++r) {
    const int n = 1 + int(rng() % 200);
    DotCase cs;
    std::int64_t s = 3 * (std::int64_t(1) << 61);
    for (int k = 0; k < n; ++k) {
      const std::int64_t a = std::int64_t(rng() % (1u << 21)) - (1 << 20);
      const std::int64_t b = std::int64_t(rng() % (1u << 21)) - (1 << 20);
      cs.x.push_back(double(a)), cs.y.push_back(double(b));
      s += a * b;
    }
    const std::int64_t correction = 512 - (((s % 1024) + 1024) % 1024);
    cs.x.push_back(3 * 0x1p61), cs.y.push_back(1.0);
    cs.x.push_back(double(correction)), cs.y.push_back(1.0);
    const int cls = r % kClasses;
    if (cls > 0) {
      cs.x.push_back((rng() % 2 ? 1.0 : -1.0) * kOffsets[cls] * 0x1.8p62);
      cs.y.push_back(1.0);
    }
    std::vector<std::size_t> perm = identity_order(cs.x.size());
    std::shuffle(perm.begin(), perm.end(), rng);
    const int k = int(rng() % 1700) - 900 - 62;  // products from ~2^-960 to 2^800
    const double sign = rng() % 2 ? 1.0 : -1.0;
    TieCase t;
    for (std::size_t i : perm) {
      t.cs.x.push_back(std::ldexp(cs.x[i], k));
      t.cs.y.push_back(sign * cs.y[i]);
    }
    t.cs.alpha = rng() % 2 ? 1.0 : -0x1p5;
    t.exact_tie =
        cls == 0 && scales_exactly(cs.x, k) && k + 62 + 5 <= 1022 && k + 62 >= -1021;
    t.distance_class = cls;
    cases.push_back(t);
  }

  // Ties with real rounding errors in (s, c): random data of up to 5000
  // products, moved exactly onto a midpoint by a few terms (computed in
  // MPFR), then an offset; (s, c) carries real errors (its bound is some
  // 2^-100 .. 2^-80 of the value), so the offsets straddle it. alpha is 1 or an odd
  // integer times a power of two (then alpha h and alpha l have low parts); every other
  // case adds beta c, up to 2^40 times larger than alpha X: then the TwoSum errors of
  // dot2_round's own sum of alpha (h + l) + beta c decide, not the bound.
  for (int r = 0; r < 480; ++r) {
    const double phi = r % 3 == 2 ? 4.0 : double(r % 3);
    DotCase cs;
    const std::int64_t n = random_length(5000, rng);
    for (std::int64_t k = 0; k < n; ++k)
      cs.x.push_back(random_entry(phi, rng)), cs.y.push_back(random_entry(phi, rng));
    if (r % 4 >= 2)
      cs.alpha = (rng() % 2 ? 1.0 : -1.0) *
                 std::ldexp(double(3 + 2 * (rng() % 3)), int(rng() % 41) - 20);
    ExactDot exact(cs);
    if (r % 2) {
      static const int kRatios[] = {0, 5, 20, 40};
      cs.beta = random_scalar(rng);
      cs.c = std::ldexp(random_entry(0.0, rng) * cs.alpha * exact.rounded() / cs.beta,
                        kRatios[rng() % 4]);
    }
    double nearest = 0.0;
    bool found = false;
    const std::vector<double> shift =
        exact.terms_to_midpoint(cs.alpha, cs.beta, cs.c, &nearest, &found);
    ASSERT_TRUE(exact.exact()) << "MPFR rounded: " << cs.describe();
    if (!found) continue;  // no midpoint a multiple of alpha away (at a power of two)
    for (double d : shift) cs.x.push_back(d), cs.y.push_back(1.0);
    const int cls = (r / 4) % kClasses;
    if (cls > 0) {
      cs.x.push_back((rng() % 2 ? 1.0 : -1.0) * kOffsets[cls] * nearest / cs.alpha);
      cs.y.push_back(1.0);
    }
    std::vector<std::size_t> perm = identity_order(cs.x.size());
    std::shuffle(perm.begin(), perm.end(), rng);
    TieCase t;
    for (std::size_t i : perm) t.cs.x.push_back(cs.x[i]), t.cs.y.push_back(cs.y[i]);
    t.cs.alpha = cs.alpha, t.cs.beta = cs.beta, t.cs.c = cs.c;
    t.exact_tie = cls == 0;
    t.distance_class = cls;
    cases.push_back(t);
  }

  Tally tally[kClasses];
  long ties = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const TieCase &t = cases[i];
    if (t.exact_tie) {
      // The generator's claim, checked by the oracle itself.
      ++ties;
      ASSERT_TRUE(oracle_sees_tie(t.cs))
          << "case " << i << " is no tie: " << t.cs.describe();
    }
    const double want = oracle_value(t.cs);
    std::vector<Accumulated> accs = accumulations(t.cs, rng);
    bool any_certified = false;
    const std::string msg =
        check_case(t.cs, accs, want, tally[t.distance_class], &any_certified);
    ASSERT_TRUE(msg.empty()) << "near-tie case " << i << ": " << msg;
    ASSERT_FALSE(t.exact_tie && any_certified)
        << "an exact tie was certified (case " << i << "): " << t.cs.describe();
  }
  std::printf("[ exact_dot ] %s; %ld exact ties, none certified\n",
              xn_test::describe_seed(seed).c_str(), ties);
  for (int cls = 0; cls < kClasses; ++cls)
    std::printf("[ exact_dot ] offset %-10s from a midpoint: certified %4ld / %4ld\n",
                hex(kOffsets[cls]).c_str(), tally[cls].certified, tally[cls].tried);
  EXPECT_GT(ties, 100);
}

// ------------------------------------------------------------ 3. the bound

// Orders meant to make the TwoSum errors large: products by decreasing
// magnitude, positives (largest first) before negatives (the partial sums
// then reach sum |p_i| / 2), every product its own part merged one by one.
std::vector<std::size_t> by_decreasing_magnitude(const DotCase &cs) {
  std::vector<std::size_t> order = identity_order(cs.x.size());
  std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
    return std::fabs(cs.x[i] * cs.y[i]) > std::fabs(cs.x[j] * cs.y[j]);
  });
  return order;
}

std::vector<std::size_t> positives_first(const DotCase &cs) {
  std::vector<std::size_t> order = by_decreasing_magnitude(cs);
  std::stable_partition(order.begin(), order.end(),
                        [&](std::size_t i) { return cs.x[i] * cs.y[i] > 0.0; });
  return order;
}

// x and y chosen one entry at a time among random candidates near 1,
// keeping the one whose dot2_add moves X - (s + c) furthest up among those
// whose leaves t + e are positive: c then grows like cabs and its rounding
// errors all push the same way: about a tenth of the bound (the
// derivation's own estimate, gamma_2N cabs, is two thirds of it). The
// increment is exactly r1 + r2: s + p = s' + t and c + (t + e) = c' + r1 + r2.
DotCase greedy_adversary(std::int64_t n, std::mt19937_64 &rng) {
  DotCase cs;
  Dot2 d;
  dot2_clear(d);
  for (std::int64_t k = 0; k < n; ++k) {
    double best_x = 1.0, best_y = 1.0, best_gain = -kInf;
    for (int trial = 0; trial < 64; ++trial) {
      const double x = 1.0 + double(rng() % (1u << 30)) * 0x1p-52;
      const double y = 1.0 + double(rng() % (1u << 30)) * 0x1p-52;
      const double p = x * y, e = std::fma(x, y, -p);
      double s, t, v, r1, cn, r2;
      xn::exact::two_sum(d.s, p, s, t);
      xn::exact::two_sum(t, e, v, r1);
      xn::exact::two_sum(d.c, v, cn, r2);
      const double gain = (r1 + r2) - (t + e > 0.0 ? 0.0 : 1.0);
      if (gain > best_gain) best_gain = gain, best_x = x, best_y = y;
    }
    cs.x.push_back(best_x), cs.y.push_back(best_y);
    dot2_add(d, best_x, best_y);
  }
  return cs;
}

TEST(NumericsExactDot, ErrorBoundHoldsInAnyOrder) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const char *const kOrders[] = {
      "sequential",      "random tree of parts", "chain of parts",  "decreasing |p|",
      "positives first", "singletons chained",   "greedy adversary"};
  constexpr int kOrderCount = sizeof kOrders / sizeof kOrders[0];
  double worst[kOrderCount] = {};
  long checked = 0;
  auto check = [&](const DotCase &cs, ExactDot &exact, int which, const Dot2 &d,
                   double ops) {
    const double bound = dot2_error_bound(d.cabs, ops);
    double ratio = 0.0;
    const bool ok = exact.within(d, bound, &ratio);
    ASSERT_TRUE(exact.exact()) << "MPFR rounded";
    ASSERT_TRUE(ok) << kOrders[which] << ": |X - (s + c)| = " << ratio << " x bound "
                    << hex(bound) << " (ops " << ops << ")\n  " << show(d) << "\n  "
                    << cs.describe();
    worst[which] = std::max(worst[which], ratio);
    ++checked;
  };
  for (int k = 0; k < 900; ++k) {
    DotCase cs = k % 3 == 2
                     ? random_case(kCancellation, 5000, rng)
                     : random_case(k % 3 ? kWideRange : kWellConditioned, 5000, rng);
    // Every fourth case has exact products (y = +-2^j): its only leaves are
    // TwoSum errors, those of the merges alone when singletons are chained.
    if (k % 4 == 3)
      for (double &v : cs.y) v = std::ldexp(v < 0.0 ? -1.0 : 1.0, int(rng() % 21) - 10);
    const std::size_t n = cs.x.size();
    ExactDot exact(cs);
    const std::vector<Accumulated> accs = accumulations(cs, rng);
    for (int a = 0; a < 3; ++a)
      check(cs, exact, a, accs[std::size_t(a)].d, accs[std::size_t(a)].ops);
    check(cs, exact, 3, accumulate(cs, by_decreasing_magnitude(cs), 0, n), double(n));
    check(cs, exact, 4, accumulate(cs, positives_first(cs), 0, n), double(n));
    Dot2 total;
    dot2_clear(total);
    for (std::size_t i : positives_first(cs)) {
      Dot2 one;
      dot2_clear(one);
      dot2_add(one, cs.x[i], cs.y[i]);
      dot2_merge(total, one);
    }
    check(cs, exact, 5, total, double(2 * n));
    if (HasFatalFailure()) return;
  }
  Tally unused;
  for (std::int64_t n : {64, 1000, 4096}) {
    const DotCase cs = greedy_adversary(n, rng);
    ExactDot exact(cs);
    check(cs, exact, 6, accumulate(cs, identity_order(cs.x.size()), 0, cs.x.size()),
          double(n));
    if (HasFatalFailure()) return;
    const std::string msg =
        check_case(cs, accumulations(cs, rng), oracle_value(cs), unused);
    ASSERT_TRUE(msg.empty()) << "greedy adversary: " << msg;
  }
  std::printf("[ exact_dot ] %s; %ld residuals within dot2_error_bound\n",
              xn_test::describe_seed(seed).c_str(), checked);
  for (int o = 0; o < kOrderCount; ++o)
    std::printf("[ exact_dot ] largest |X - (s + c)| / bound, %-22s %.3e\n", kOrders[o],
                worst[o]);
}

// ------------------------------------------------------------ 4. flags

TEST(NumericsExactDot, FlagsDeclineOnlyWhatTheBoundCannotCover) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  struct Factor {
    double a, x;
    std::uint32_t flags;
  };
  // clang-format off
  const Factor kFactors[] = {
      // Inf or NaN products (0 * Inf is NaN): their IEEE class.
      {kInf, 1.0, kDot2PosInf}, {1.0, -kInf, kDot2NegInf}, {-kInf, -0x1p-1074, kDot2PosInf},
      {kNaN, 1.0, kDot2NaN}, {0.0, kInf, kDot2NaN}, {-kInf, 0.0, kDot2NaN},
      {kInf, kNaN, kDot2NaN},
      // Overflow, and products above 2^1000.
      {1e200, 1e200, kDot2Uncovered}, {-1e200, 1e200, kDot2Uncovered},
      {0x1p1001, 1.0, kDot2Uncovered}, {0x1.0000000000001p1000, 1.0, kDot2Uncovered},
      // Nonzero factors, product below 2^-968 (zero, subnormal or normal).
      {1e-200, 1e-200, kDot2Uncovered}, {0x1p-970, 1.0, kDot2Uncovered},
      {-0x1p-969, 1.0, kDot2Uncovered}, {0x1p-1074, 0x1p100, kDot2Uncovered},
      {0x1p-1022, 0x1p50, kDot2Uncovered},
      // The limits themselves, and exact zeros of any sign with any factor.
      {0x1p1000, 1.0, 0}, {-0x1p500, 0x1p500, 0}, {0x1p-968, 1.0, 0},
      {0x1p-500, -0x1p-468, 0}, {0.0, 1e-300, 0}, {-0.0, 5.0, 0},
      {1e-300, 0.0, 0}, {0.0, 0.0, 0}, {-0.0, -0.0, 0}, {0.0, 1e300, 0},
      {0x1p-1074, -0.0, 0}, {1.0, 2.0, 0}};
  // clang-format on
  Tally tally;
  for (const Factor &f : kFactors) {
    SCOPED_TRACE("factors " + hex(f.a) + " * " + hex(f.x));
    Dot2 one;
    dot2_clear(one);
    dot2_add(one, f.a, f.x);
    EXPECT_EQ(one.flags, f.flags) << show(one);
    // The same product among ordinary ones, in every accumulation: the
    // flag survives merges; dot2_round declines an uncovered product and
    // decides an Inf or NaN one (check_case: as the oracle).
    for (int rep = 0; rep < 4; ++rep) {
      DotCase cs;
      const std::int64_t n = 1 + std::int64_t(rng() % 60);
      for (std::int64_t k = 0; k < n; ++k)
        cs.x.push_back(random_entry(1.0, rng)), cs.y.push_back(random_entry(1.0, rng));
      const std::size_t at = rng() % (cs.x.size() + 1);
      cs.x.insert(cs.x.begin() + std::ptrdiff_t(at), f.a);
      cs.y.insert(cs.y.begin() + std::ptrdiff_t(at), f.x);
      random_scalars(cs, rng);
      const std::vector<Accumulated> accs = accumulations(cs, rng);
      for (const Accumulated &a : accs) {
        EXPECT_EQ(a.d.flags, f.flags) << a.how << " " << show(a.d);
        double out = kNaN;
        const bool certified = dot2_round(a.d, a.ops, cs.alpha, cs.beta, cs.c, &out);
        if (f.flags == kDot2Uncovered) {
          EXPECT_FALSE(certified) << a.how << " certified " << hex(out) << "\n  " << cs.describe();
        } else if (f.flags != 0) {
          EXPECT_TRUE(certified) << a.how << "\n  " << cs.describe();
        }
      }
      const std::string msg = check_case(cs, accs, oracle_value(cs), tally);
      ASSERT_TRUE(msg.empty()) << msg;
    }
  }
  // Inf and NaN in the scalars (beta and c only count when beta != 0):
  // decided as IEEE says, with ordinary products (alpha = Inf needs X's
  // sign, certain here).
  DotCase cs;
  for (int k = 0; k < 20; ++k)
    cs.x.push_back(random_entry(1.0, rng)), cs.y.push_back(random_entry(1.0, rng));
  const Accumulated acc = sequential(cs, identity_order(cs.x.size()), "sequential");
  struct Scalars {
    double alpha, beta, c;
  };
  const Scalars kScalars[] = {{kInf, 0.0, 0.0},  {-kInf, 1.0, 2.0}, {kNaN, 0.0, 0.0},
                              {1.0, kInf, 1.0},  {1.0, kNaN, 1.0},  {1.0, 1.0, kInf},
                              {2.0, -1.0, kNaN}, {1.0, 0.0, kNaN},  {1.0, -0.0, kInf},
                              {1.0, 2.0, 0.0},   {kInf, 1.0, -kInf}, {-kInf, 0.0, kNaN},
                              {1.0, 0.0, kInf}};
  for (const Scalars &sc : kScalars) {
    cs.alpha = sc.alpha, cs.beta = sc.beta, cs.c = sc.c;
    double out = kNaN;
    EXPECT_TRUE(dot2_round(acc.d, acc.ops, sc.alpha, sc.beta, sc.c, &out)) << cs.describe();
    const std::string msg = check_case(cs, {acc}, oracle_value(cs), tally);
    EXPECT_TRUE(msg.empty()) << msg;
  }
}

// Exact zeros and Inf/NaN mixtures, where a fallback would read every
// operand again: dot2_round decides all of them itself, in every
// accumulation, with IEEE's sign of zero (-0 only when every product is
// -0, then P + Q) and classes (Inf - Inf and Inf * 0 are NaN).
TEST(NumericsExactDot, ZerosAndSpecialsAreDecidedInOnePass) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const double kSignedZeros[] = {0.0, -0.0};
  auto signed_zero = [&] { return kSignedZeros[rng() % 2]; };
  auto small_integer = [&] { return double(std::int64_t(rng() % 17) - 8); };
  enum Kind { kZeroX, kZeroBoth, kAllNegativeZero, kCancelling, kInfinities, kKinds };
  Tally tally;
  int negative_zeros = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const Kind kind = Kind(trial % kKinds);
    DotCase cs;
    const std::int64_t n = random_length(300, rng);
    for (std::int64_t k = 0; k < n; ++k) {
      double a = random_entry(1.0, rng), x = 0.0;
      switch (kind) {
        case kZeroX: x = signed_zero(); break;  // A @ 0: zeros of mixed signs
        case kZeroBoth: a = signed_zero(), x = signed_zero(); break;
        case kAllNegativeZero:  // every product -0 (a zero row of one sign)
          x = rng() % 2 ? -0.0 : 0.0;
          a = std::signbit(x) ? std::fabs(a) : -std::fabs(a);
          break;
        case kCancelling:  // small integers whose products cancel exactly
          a = small_integer(), x = small_integer();
          break;
        case kInfinities:
          x = random_entry(1.0, rng);
          if (rng() % 8 == 0) a = rng() % 2 ? kInf : -kInf;
          if (rng() % 16 == 0) x = rng() % 4 ? signed_zero() : kNaN;
          break;
        default: break;
      }
      cs.x.push_back(a), cs.y.push_back(x);
    }
    if (kind == kInfinities && rng() % 2) {
      // An Inf product beside products the bound cannot cover (above
      // 2^1000, below 2^-968): the Inf decides X alone.
      cs.x.push_back(rng() % 2 ? kInf : -kInf), cs.y.push_back(random_entry(1.0, rng));
      cs.x.push_back(rng() % 2 ? 1e305 : 1e-300), cs.y.push_back(3.0);
    }
    if (kind == kCancelling) {  // append the negated sum: X = 0 exactly
      double sum = 0.0;
      for (std::int64_t k = 0; k < n; ++k) sum += cs.x[std::size_t(k)] * cs.y[std::size_t(k)];
      cs.x.push_back(-sum), cs.y.push_back(1.0);
    }
    random_scalars(cs, rng);
    if (rng() % 4 == 0) {  // zero and special scalars too
      const double kOdd[] = {-0.0, 0.0, kInf, -kInf, kNaN};
      double *which[] = {&cs.alpha, &cs.beta, &cs.c};
      *which[rng() % 3] = kOdd[rng() % 5];
    }
    const std::vector<Accumulated> accs = accumulations(cs, rng);
    const double want = oracle_value(cs);
    if (want == 0.0 && std::signbit(want)) ++negative_zeros;
    for (const Accumulated &a : accs) {
      double out = kNaN;
      ASSERT_TRUE(dot2_round(a.d, a.ops, cs.alpha, cs.beta, cs.c, &out))
          << a.how << " declined " << show(a.d) << "\n  " << cs.describe();
    }
    const std::string msg = check_case(cs, accs, want, tally);
    ASSERT_TRUE(msg.empty()) << msg;
  }
  // The sign rule was exercised, not only +0.
  EXPECT_GT(negative_zeros, 100);
}

// ------------------------------------------------------------ 5. alpha == 0

TEST(NumericsExactDot, AlphaZeroIsBetaCAlone) {
  // An accumulator and operands no computation could use: only beta c may
  // decide the value.
  Dot2 junk;
  junk.s = kNaN, junk.c = kInf, junk.cabs = -1.0;
  junk.flags = kDot2Uncovered | kDot2NaN, junk.pad_ = 0;
  DotCase cs;
  cs.x = {kNaN, kInf, 1e300};
  cs.y = {1.0, -kInf, 1e300};
  struct BetaC {
    double beta, c;
  };
  const BetaC kCases[] = {{0.0, kNaN},
                          {-0.0, kNaN},
                          {0.0, kInf},
                          {2.0, 3.0},
                          {-1.0, 0.0},
                          {1.0, -0.0},
                          {1e300, 1e300},
                          {1e-300, 1e-300},
                          {0x1p-1000, 0x1.8p-70},
                          {3.0, kNaN},
                          {-kInf, 2.0},
                          {0.1, 0.3},
                          {0x1p-537, 0x1.0000000000001p-537}};
  for (double alpha : {0.0, -0.0})
    for (const BetaC &b : kCases) {
      cs.alpha = alpha, cs.beta = b.beta, cs.c = b.c;
      SCOPED_TRACE(cs.describe());
      double out = 12345.0;
      ASSERT_TRUE(dot2_round(junk, kNaN, alpha, b.beta, b.c, &out));
      const double want = oracle_value(cs);
      EXPECT_TRUE(same(out, want))
          << "dot2_round " << hex(out) << ", oracle " << hex(want);
      if (b.beta == 0.0) {
        EXPECT_EQ(bits(out), bits(0.0)) << hex(out);  // +0, c unread
      }
      const double exact = fallback_value(cs);
      EXPECT_TRUE(same(exact, want))
          << "exact_dot_entry " << hex(exact) << ", oracle " << hex(want);
    }
  // beta = 1: c itself, as BLAS's quick return leaves it (a signalling NaN
  // stays signalling; 1 c would quiet it), from every alpha = 0 path.
  const double signalling = xn_test::ex_double(0x7ff0000000000badull);
  for (const double c : {signalling, -0.0, 0x1p-1074, -kInf}) {
    double out = 12345.0;
    ASSERT_TRUE(dot2_round(junk, kNaN, 0.0, 1.0, c, &out));
    EXPECT_EQ(bits(out), bits(c)) << "dot2_round " << hex(out) << ", c " << hex(c);
    const double x[1] = {kNaN}, y[1] = {1.0};
    const double exact = exact_dot_entry(x, 1, y, 1, 1, -0.0, 1.0, &c);
    EXPECT_EQ(bits(exact), bits(c)) << "exact_dot_entry " << hex(exact) << ", c " << hex(c);
    EXPECT_EQ(bits(xn::exact::beta_times_c(1.0, c)), bits(c));
  }
}

}  // namespace
