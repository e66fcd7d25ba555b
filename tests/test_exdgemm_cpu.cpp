// test_exdgemm_cpu.cpp - the correctly rounded DGEMM on the CPU backend
// against the exact MPFR oracle: every entry must equal the exact value of
// alpha op(A) op(B) + beta C rounded once to nearest (zero entries differing,
// compared bit for bit), over the PMAA'18 (Mukunoki et al.) phi family, ill-conditioned
// products, integers, extreme exponents, subnormals, rows/columns of zeros, mixed
// huge/tiny rows, overflow, non-finite inputs, all transposes, k = 1, random
// alpha/beta; and bitwise equality across block sizes and budgets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "backend/cpu/cpu_exdgemm.h"
#include "numerics/exdgemm_entry.h"
#include "numerics/ozaki_split.h"
#include "support/exdgemm_inputs.h"
#include "support/mpfr_oracle.h"
#include "support/test_support.h"
#include "xngemm.h"

namespace {

using xn_test::ExKind;

using xn_test::ex_same;
std::uint64_t bits(double x) { return xn_test::ex_bits(x); }
bool same(double got, double want) { return ex_same(got, want); }

struct Case {
  bool ta, tb;
  std::int64_t m, n, k, lda, ldb, ldc;
  double alpha, beta;
};

// Runs cpu_exdgemm with one engine and checks every entry against the
// oracle. Returns the result for further comparisons.
std::vector<double> run_engine(const Case &c, const std::vector<double> &a,
                               const std::vector<double> &b,
                               const std::vector<double> &c0, std::int64_t block,
                               std::size_t budget, const std::string &what,
                               xn::ExEngine engine, xn::ExdgemmReport *info_out) {
  std::vector<double> got = c0;
  xn::ExdgemmReport info{};
  const xn::Status st =
      xn::cpu_exdgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), c.lda, b.data(),
                      c.ldb, c.beta, got.data(), c.ldc, budget, block, &info, engine);
  EXPECT_EQ(st, xn::Status::Ok) << what;
  if (info_out) *info_out = info;
  std::vector<xn_test::ExactEntry> want;
  xn_test::exact_gemm<double>(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), c.lda,
                              b.data(), c.ldb, c.beta, c0.data(), c.ldc, want);
  int bad = 0;
  for (std::int64_t j = 0; j < c.n; ++j)
    for (std::int64_t i = 0; i < c.m; ++i) {
      const double g = got[std::size_t(i + j * c.ldc)];
      const double w = want[std::size_t(i + j * c.m)].hi;
      if (!same(g, w) && bad++ < 5)
        ADD_FAILURE() << what << ": entry (" << i << "," << j << ") got " << std::hexfloat
                      << g << " want " << w << std::defaultfloat;
    }
  EXPECT_EQ(bad, 0) << what << " (" << bad << " entries differ)";
  // Padding rows of C untouched.
  for (std::int64_t j = 0; j < c.n; ++j)
    for (std::int64_t i = c.m; i < c.ldc; ++i)
      EXPECT_TRUE(bits(got[std::size_t(i + j * c.ldc)]) ==
                  bits(c0[std::size_t(i + j * c.ldc)]))
          << what << ": padding of C written";
  return got;
}

// Every case runs both engines: the FP64-slice engine (whose report is
// returned) and the modular engine (forced; where the inputs' range needs
// more moduli than it has, it runs the slices itself), each against the
// oracle, and the two bit for bit.
std::vector<double> run_and_check(const Case &c, const std::vector<double> &a,
                                  const std::vector<double> &b,
                                  const std::vector<double> &c0, std::int64_t block,
                                  std::size_t budget, const std::string &what,
                                  xn::ExdgemmReport *info_out = nullptr) {
  const std::vector<double> slices = run_engine(
      c, a, b, c0, block, budget, what + " [slices]", xn::ExEngine::Slices, info_out);
  xn::ExdgemmReport mod{};
  const std::vector<double> modular = run_engine(
      c, a, b, c0, block, budget, what + " [modular]", xn::ExEngine::Modular, &mod);
  EXPECT_EQ(std::memcmp(slices.data(), modular.data(), slices.size() * 8), 0)
      << what << ": the engines differ";
  // 0: no product formed: the BLAS quick return (alpha = 0), or an operand
  // without a nonzero finite entry (then no slices either).
  EXPECT_EQ(mod.engine == 0, c.alpha == 0.0 || (info_out && info_out->max_slices_a == 0 &&
                                                  info_out->slice_products == 0))
      << what;
  return slices;
}

std::vector<double> make_c(std::int64_t m, std::int64_t n, std::int64_t ldc, double beta,
                           std::mt19937_64 &rng) {
  std::vector<double> c(std::size_t(ldc * n), std::numeric_limits<double>::quiet_NaN());
  if (beta != 0.0)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i)
        c[std::size_t(i + j * ldc)] = xn_test::u53(rng) - 0.5;
  return c;  // beta == 0: C is NaN and must not be read
}

TEST(ExdgemmSplit, SliceWidthIsExactBound) {
  for (std::int64_t k :
       {1LL, 2LL, 3LL, 5LL, 100LL, 8192LL, 16384LL, 65536LL, 1LL << 30}) {
    const int w = xn::exact::slice_width(k);
    // k (2^w - 1)^2 <= 2^53 < k (2^(w+1) - 1)^2, in long double (64-bit mantissa).
    const long double d = std::ldexp(1.0L, w) - 1, d1 = std::ldexp(1.0L, w + 1) - 1;
    EXPECT_LE(k * d * d, std::ldexp(1.0L, 53)) << k;
    EXPECT_GT(k * d1 * d1, std::ldexp(1.0L, 53)) << k;
    // Never narrower than the papers' 53 - ceil((53 + log2 k) / 2).
    const int seed_w = 53 - int(std::ceil((53 + std::log2(double(k))) / 2));
    EXPECT_GE(w, seed_w) << k;
  }
  EXPECT_EQ(xn::exact::slice_width(8192), 20);
  EXPECT_EQ(xn::exact::slice_width(16384), 19);
}

TEST(ExdgemmSplit, DigitsReassembleExactly) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  for (int t = 0; t < 20000; ++t) {
    const double x = std::ldexp(xn_test::u53(rng) - 0.5, int(rng() % 2100) - 1075);
    const auto d = xn::exact::decode(x);
    if (d.zero) continue;
    const int w = 11 + int(rng() % 16), e = d.top + 1 + int(rng() % 30);
    double rebuilt = 0;
    std::uint64_t mask[xn::exact::kMaskWords] = {};
    xn::exact::mark_nonzero_digits(d, e, w, mask);
    const int s = xn::exact::slice_count(d.top, d.low, w) + (e - d.top - 1) / w + 1;
    for (int r = 0; r < s && r < xn::exact::kMaxSlices; ++r) {
      const double dig = xn::exact::slice_digit(d, e, r, w);
      EXPECT_LT(std::fabs(dig), std::ldexp(1.0, w));
      EXPECT_EQ(dig != 0.0, ((mask[r >> 6] >> (r & 63)) & 1) != 0);
      // Accumulate from the top: all partial sums are exact in double since
      // together they are bits of x.
      rebuilt += std::ldexp(dig, e - (r + 1) * w);
    }
    EXPECT_EQ(bits(rebuilt), bits(x)) << std::hexfloat << x << " w=" << w << " e=" << e;
  }
}

struct FamilyParam {
  ExKind kind;
  double phi;
};

class ExdgemmFamily : public ::testing::TestWithParam<FamilyParam> {};

TEST_P(ExdgemmFamily, AllTransposesMatchOracle) {
  const FamilyParam p = GetParam();
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  const std::int64_t sizes[][3] = {{23, 17, 31}, {40, 33, 64}, {7, 5, 1}, {64, 65, 63}};
  for (int t = 0; t < 4; ++t)
    for (const auto &sz : sizes) {
      Case c{bool(t & 1), bool(t & 2), sz[0], sz[1], sz[2], 0, 0, 0, 0, 0};
      c.lda = (c.ta ? c.k : c.m) + 3;
      c.ldb = (c.tb ? c.n : c.k) + 2;
      c.ldc = c.m + 1;
      std::uniform_real_distribution<double> ab(-2, 2);
      c.alpha = (t == 0) ? 1.0 : ab(rng);
      c.beta = (t == 1) ? 0.0 : ab(rng);
      std::vector<double> a, b;
      xn_test::ex_fill(p.kind, p.phi, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
      const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
      std::ostringstream what;
      what << ex_kind_name(p.kind) << " phi=" << p.phi << " ta=" << c.ta << " tb=" << c.tb
           << " " << c.m << "x" << c.n << "x" << c.k << " alpha=" << c.alpha
           << " beta=" << c.beta;
      run_and_check(c, a, b, c0, 0, 0, what.str());
    }
}

INSTANTIATE_TEST_SUITE_P(
    Families, ExdgemmFamily,
    ::testing::Values(FamilyParam{ExKind::Phi, 0}, FamilyParam{ExKind::Phi, 1},
                      FamilyParam{ExKind::Phi, 2}, FamilyParam{ExKind::Phi, 4},
                      FamilyParam{ExKind::Phi, 8}, FamilyParam{ExKind::Phi, 16},
                      FamilyParam{ExKind::Integer, 0}, FamilyParam{ExKind::Extreme, 0},
                      FamilyParam{ExKind::Subnormal, 0},
                      FamilyParam{ExKind::MixedRange, 0},
                      FamilyParam{ExKind::ZeroLines, 1},
                      FamilyParam{ExKind::Overflow, 0}),
    [](const ::testing::TestParamInfo<FamilyParam> &i) {
      return ex_kind_name(i.param.kind) + "_" + std::to_string(int(i.param.phi));
    });

TEST(Exdgemm, IllConditionedMatchesOracle) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  for (std::int64_t k : {2, 9, 64, 200}) {
    Case c{false, false, 30, 20, k, 30, k, 30, 1.0, 0.0};
    std::vector<double> a, b;
    xn_test::ex_fill_illcond(c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
    std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
    run_and_check(c, a, b, c0, 0, 0, "illcond k=" + std::to_string(k));
    c.beta = -0.75;
    c.alpha = 3.0;
    c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
    run_and_check(c, a, b, c0, 0, 0, "illcond with beta, k=" + std::to_string(k));
  }
}

// beta * c against a product far away in magnitude, and the exact midpoint.
TEST(Exdgemm, ScalesFarApartAndTies) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  Case c{false, false, 12, 9, 11, 12, 11, 12, 0x1p-900, 0x1p+900};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 1, false, false, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  run_and_check(c, a, b, c0, 0, 0, "beta*c dominates by 2^1800");
  std::swap(c.alpha, c.beta);
  c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  run_and_check(c, a, b, c0, 0, 0, "alpha*AB dominates by 2^1800");
  // Ties: 1 * 1 + (2^-53) * 1 is the midpoint between 1 and 1 + 2^-52 (rounds
  // to 1, even); with 3 * 2^-53 above 1 it rounds up. k = 2, all ones in A.
  Case t{false, false, 1, 2, 2, 1, 2, 1, 1.0, 0.0};
  std::vector<double> ta = {1.0, 1.0}, tb = {1.0, 0x1p-53, 1.0, 0x1.8p-52};
  std::vector<double> tc(2, std::numeric_limits<double>::quiet_NaN());
  const std::vector<double> r = run_and_check(t, ta, tb, tc, 0, 0, "ties");
  EXPECT_EQ(r[0], 1.0);
  EXPECT_EQ(r[1], 1.0 + 0x1p-51);
  // Near ties that a compensated (twice-the-precision) sum gets wrong: the
  // tie 1 + 2^-53 tipped by a term 2^-53 further down, either way, and the
  // same hidden under a cancelling pair. Columns of op(B); A is all ones.
  Case u{false, false, 1, 4, 5, 1, 5, 1, 1.0, 0.0};
  std::vector<double> ua(5, 1.0);
  std::vector<double> ub = {
      1.0,    0x1p-53,  0x1p-106,  0.0,     0.0,        // up: 1 + 2^-52
      1.0,    0x1p-53,  -0x1p-106, 0.0,     0.0,        // down: 1
      -1.0,   -0x1p-53, -0x1p-106, 0.0,     0.0,        // -(1 + 2^-52)
      0x1p60, 1.0,      -0x1p60,   0x1p-53, 0x1p-106};  // up, cancelled
  std::vector<double> uc(4, std::numeric_limits<double>::quiet_NaN());
  const std::vector<double> v = run_and_check(u, ua, ub, uc, 0, 0, "near ties");
  EXPECT_EQ(v[0], 1.0 + 0x1p-52);
  EXPECT_EQ(v[1], 1.0);
  EXPECT_EQ(v[2], -(1.0 + 0x1p-52));
  EXPECT_EQ(v[3], 1.0 + 0x1p-52);
}

TEST(Exdgemm, NonFiniteInputs) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Case c{false, true, 9, 8, 7, 9, 8, 9, 1.5, -0.5};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 1, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  a[0 + 2 * 9] = inf;   // row 0 of A
  a[3 + 4 * 9] = -inf;  // row 3
  a[3 + 5 * 9] = inf;   // row 3: +Inf and -Inf terms can meet (NaN)
  a[5 + 1 * 9] = nan;   // row 5
  b[2 + 6 * 8] = 0.0;   // op(B)(6, 2) = 0: 0 * Inf in no row (row 0 uses p = 2)
  b[4 + 2 * 8] = 0.0;   // op(B)(2, 4) = 0: Inf * 0 = NaN at (0, 4)
  b[6 + 0 * 8] = -inf;  // column 6 of op(B)
  std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  c0[7 + 7 * 9] = inf;  // beta * Inf
  c0[8 + 1 * 9] = nan;
  run_and_check(c, a, b, c0, 0, 0, "non-finite");
  // alpha = 0: A and B are not read (NaN in them does not propagate).
  Case z = c;
  z.alpha = 0.0;
  run_and_check(z, a, b, c0, 0, 0, "alpha = 0");
}

TEST(Exdgemm, BlockingAndBudgetDoNotChangeBits) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  Case c{true, false, 200, 150, 90, 90, 90, 201, -1.25, 0.5};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 2, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  xn::ExdgemmReport big{}, small{};
  const auto r0 = run_and_check(c, a, b, c0, 0, 0, "one block", &big);
  const auto r1 = run_and_check(c, a, b, c0, 64, 0, "64 blocks", &small);
  EXPECT_EQ(big.blocks, 1);
  EXPECT_EQ(small.blocks, 4 * 3);
  EXPECT_EQ(std::memcmp(r0.data(), r1.data(), r0.size() * 8), 0);
  // A budget that forces small blocks without naming them.
  xn::ExdgemmReport tight{};
  const auto r2 = run_and_check(c, a, b, c0, 0, std::size_t(3) << 20, "3 MiB", &tight);
  EXPECT_GT(tight.blocks, 1);
  EXPECT_LE(tight.workspace_bytes, std::size_t(3) << 20);
  EXPECT_EQ(std::memcmp(r0.data(), r2.data(), r0.size() * 8), 0);
  // A budget that cannot hold even the smallest block: ALLOC_FAILED, C untouched.
  std::vector<double> untouched = c0;
  EXPECT_EQ(xn::cpu_exdgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), c.lda, b.data(),
                            c.ldb, c.beta, untouched.data(), c.ldc, 1024, 0, nullptr),
            xn::Status::AllocFailed);
  EXPECT_EQ(std::memcmp(untouched.data(), c0.data(), c0.size() * 8), 0);
}

TEST(Exdgemm, SliceCountsReported) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  // Small integers (|x| <= 1000, 10 bits): one slice each side.
  Case c{false, false, 50, 40, 30, 50, 30, 50, 1.0, 0.0};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Integer, 0, false, false, c.m, c.n, c.k, a, c.lda, b, c.ldb,
                   rng);
  xn::ExdgemmReport info{};
  run_and_check(c, a, b, make_c(c.m, c.n, c.ldc, 0.0, rng), 0, 0, "integers", &info);
  EXPECT_EQ(info.max_slices_a, 1);
  EXPECT_EQ(info.max_slices_b, 1);
  EXPECT_DOUBLE_EQ(info.slice_products, 1.0);
  // 53-bit uniforms: ceil((53 + spread) / w) slices, at least 3 with w = 22.
  xn_test::ex_fill(ExKind::Phi, 0, false, false, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  run_and_check(c, a, b, make_c(c.m, c.n, c.ldc, 0.0, rng), 0, 0, "phi 0", &info);
  EXPECT_GE(info.max_slices_a, 3);
  EXPECT_GE(info.max_slices_b, 3);
  // Rows of zeros in a block are skipped: a zero op(A) gives no products.
  std::fill(a.begin(), a.end(), 0.0);
  run_and_check(c, a, b, make_c(c.m, c.n, c.ldc, 0.0, rng), 0, 0, "zero A", &info);
  EXPECT_EQ(info.max_slices_a, 0);
  EXPECT_EQ(info.slice_products, 0.0);
}

// Which engine runs: the modular one where forced and the range allows, with
// the moduli its range needs; the slices where the range needs more moduli
// than there are (rows spanning ~1000 binades) or its workspace does not fit
// the budget; the same bits every time (run_and_check).
TEST(Exdgemm, EngineChoiceAndFallbacks) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  Case c{false, true, 70, 66, 100, 70, 66, 71, 0.75, 0.0};
  std::vector<double> a, b;
  auto run = [&](std::size_t budget, xn::ExEngine engine, const char *what) {
    xn::ExdgemmReport info{};
    run_engine(c, a, b, make_c(c.m, c.n, c.ldc, c.beta, rng), 0, budget, what, engine,
               &info);
    return info;
  };
  // 53-bit uniforms: spans of at most 53 bits, 1 + 7 + 53 + 53 = 114 bits.
  xn_test::ex_fill(ExKind::Phi, 0, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  xn::ExdgemmReport r = run(0, xn::ExEngine::Modular, "phi 0, modular");
  EXPECT_EQ(r.engine, int(xn::ExEngine::Modular));
  EXPECT_GE(r.moduli, 1);
  EXPECT_LE(r.moduli, xn::exact::moduli_for_bits(1 + 7 + 53 + 53));
  EXPECT_EQ(run(0, xn::ExEngine::Slices, "phi 0, slices").engine,
            int(xn::ExEngine::Slices));
  // On the CPU a modular product costs a slice product: automatic takes
  // whichever needs fewer (here the s t = 9 slice products).
  r = run(0, xn::ExEngine::Auto, "phi 0, automatic");
  EXPECT_EQ(r.engine, r.moduli > 0 && r.moduli < r.max_slices_a * r.max_slices_b
                          ? int(xn::ExEngine::Modular)
                          : int(xn::ExEngine::Slices));
  // Small integers: one slice each, one modulus or two: both cheap.
  xn_test::ex_fill(ExKind::Integer, 0, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb,
                   rng);
  EXPECT_EQ(run(0, xn::ExEngine::Modular, "integers").engine, int(xn::ExEngine::Modular));
  // Rows from 2^-500 to 2^500: the range needs far more than 48 moduli.
  xn_test::ex_fill(ExKind::MixedRange, 0, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb,
                   rng);
  EXPECT_EQ(run(0, xn::ExEngine::Modular, "mixed range").engine,
            int(xn::ExEngine::Slices));
  // A budget the slice engine fits in 64 x 64 blocks and the modular one does
  // not: the slices run (the call never fails for the engine's sake).
  xn_test::ex_fill(ExKind::Phi, 0, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  const std::size_t head = xn::ex_detail::head_bytes(c.m, c.n);
  const std::size_t slices64 =
      head + xn::ex_detail::body_bytes(64, 64, c.n, c.k, 3, 3, false);
  r = run(slices64 + 1024, xn::ExEngine::Modular, "tight budget");
  EXPECT_EQ(r.engine, int(xn::ExEngine::Slices));
  EXPECT_LE(r.workspace_bytes, slices64 + 1024);
}

// The modular engine with k cut into chunks (XN_OPT_EXDGEMM_K_CHUNK): one
// slot (the CPU's own choice: every chunk accumulated into it, reduced to
// symmetric residues between chunks, as the GPU does past 2^17), or several
// (forced, as the GPU splits skinny products): chunk c into slot c mod
// slots, rounds of `slots` chunks with a partial last one, the slots folded
// into the first before the reconstruction; with blocks of C of 64 and edge
// blocks smaller
// that share the full block's product stride. The bits are the oracle's
// and the slice engine's; the report counts the chunks and slots.
TEST(Exdgemm, ModularChunksOfKKeepTheBits) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  struct Shape {
    bool ta, tb;
    std::int64_t m, n, k, chunk;
    double phi;
    int slots;            // forced slots (0: the CPU's one)
    std::int64_t block;   // XN_OPT_EXDGEMM_BLOCK (0: from the budget)
  };
  const Shape shapes[] = {{false, false, 37, 29, 500, 48, 0, 0, 0},
                          {true, false, 20, 31, 333, 16, 1, 0, 0},
                          {false, true, 64, 65, 1000, 112, 0, 0, 0},
                          {true, true, 9, 70, 47, 16, 1, 0, 0},
                          {false, false, 130, 70, 500, 48, 0, 3, 64},
                          {true, true, 67, 129, 1000, 96, 1, 4, 64},
                          {false, true, 30, 20, 200, 16, 0, 64, 0}};
  for (const Shape &sh : shapes) {
    Case c{sh.ta, sh.tb, sh.m, sh.n, sh.k, 0, 0, sh.m + 3, -1.25, sh.phi == 0 ? 0.0 : 0.5};
    c.lda = (c.ta ? c.k : c.m) + 2;
    c.ldb = (c.tb ? c.n : c.k) + 1;
    std::vector<double> a, b;
    xn_test::ex_fill(ExKind::Phi, sh.phi, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb,
                     rng);
    const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
    std::ostringstream what;
    what << c.m << "x" << c.n << "x" << c.k << " chunk " << sh.chunk << " slots "
         << sh.slots << " block " << sh.block;
    xn::Options opt;
    opt.exdgemm_engine = std::int64_t(xn::ExEngine::Modular);
    opt.exdgemm_k_chunk = sh.chunk;
    opt.exdgemm_block = sh.block;
    xn::testing::set_modular_slots(sh.slots);
    std::vector<double> chunked = c0;
    xn::ExdgemmReport info{};
    const xn::Status st =
        xn::cpu_exdgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), c.lda, b.data(),
                        c.ldb, c.beta, chunked.data(), c.ldc, opt, &info);
    xn::testing::set_modular_slots(0);
    ASSERT_EQ(st, xn::Status::Ok) << what.str();
    const std::int64_t chunks = (c.k + sh.chunk - 1) / sh.chunk;
    EXPECT_EQ(info.engine, int(xn::ExEngine::Modular)) << what.str();
    EXPECT_EQ(info.k_chunks, chunks) << what.str();
    EXPECT_EQ(info.k_slots, std::min<std::int64_t>(chunks, std::max(sh.slots, 1)))
        << what.str();
    if (sh.slots > 0 && sh.slots < chunks) {
      EXPECT_GT(info.k_chunks, info.k_slots) << what.str() << ": more than one round";
      EXPECT_NE(chunks % sh.slots, 0) << what.str() << ": a partial last round";
    }
    if (sh.block > 0) {
      EXPECT_GT(info.blocks, 1) << what.str();
    }
    const std::vector<double> slices = run_engine(c, a, b, c0, 0, 0, what.str() + " [slices]",
                                                  xn::ExEngine::Slices, nullptr);
    EXPECT_EQ(std::memcmp(slices.data(), chunked.data(), slices.size() * 8), 0)
        << what.str() << ": chunked modular differs from the slices (oracle-checked)";
  }
}

// Rows of op(A) spanning exactly 160 bits and columns of op(B) 161 (each
// holds 1 and (1 + 2^-52) 2^-107 or 2^-108, the rest 53-bit uniforms
// between), k = 150: X needs 1 + 8 + 321 = 330 bits, which only all 48
// moduli hold (47 hold 327). The modular engine runs with 48 and gives the
// oracle's bits, which the slices also give.
TEST(Exdgemm, ModularEngineWithAllFortyEightModuli) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  Case c{false, true, 70, 66, 150, 72, 67, 71, -0.75, 0.5};
  std::vector<double> a(std::size_t(c.lda * c.k)), b(std::size_t(c.ldb * c.k));
  for (double &x : a) x = std::ldexp(xn_test::u53(rng) - 0.5, -int(rng() % 100));
  for (double &x : b) x = std::ldexp(xn_test::u53(rng) - 0.5, -int(rng() % 100));
  for (std::int64_t i = 0; i < c.m; ++i) {  // op(A) = A: row i at a[i + p lda]
    a[std::size_t(i)] = 1.0;
    a[std::size_t(i + c.lda)] = std::ldexp(1.0 + 0x1p-52, -107);
  }
  for (std::int64_t j = 0; j < c.n; ++j) {  // op(B) = B^T: column j at b[j + p ldb]
    b[std::size_t(j)] = 1.0;
    b[std::size_t(j + c.ldb)] = std::ldexp(1.0 + 0x1p-52, -108);
  }
  ASSERT_EQ(xn::exact::moduli_for_bits(1 + 8 + 160 + 161), 48);
  ASSERT_EQ(xn::exact::kMaxModuli, 48);
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  xn::ExdgemmReport mod{}, sl{};
  const std::vector<double> modular =
      run_engine(c, a, b, c0, 0, 0, "wide rows [modular]", xn::ExEngine::Modular, &mod);
  const std::vector<double> slices =
      run_engine(c, a, b, c0, 0, 0, "wide rows [slices]", xn::ExEngine::Slices, &sl);
  EXPECT_EQ(mod.engine, int(xn::ExEngine::Modular));
  EXPECT_EQ(mod.moduli, 48);
  EXPECT_EQ(mod.span_bits, 160 + 161);
  EXPECT_EQ(std::memcmp(slices.data(), modular.data(), slices.size() * 8), 0);
}

// XN_OPT_EXDGEMM_PHASE_TIMES: with it, every phase of either engine has a
// time and the bits are the same; without it, no time is reported. Two
// blocks of C, so the phases of both are summed.
TEST(Exdgemm, PhaseTimesCoverEveryPhaseAndChangeNoBit) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  Case c{true, false, 150, 90, 120, 120, 120, 151, -1.5, 0.5};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 1, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  for (const xn::ExEngine engine : {xn::ExEngine::Slices, xn::ExEngine::Modular}) {
    xn::Options opt;
    opt.exdgemm_engine = std::int64_t(engine);
    opt.exdgemm_block = 128;
    std::vector<double> plain = c0, timed = c0;
    xn::ExdgemmReport pi{}, ti{};
    ASSERT_EQ(xn::cpu_exdgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), c.lda,
                              b.data(), c.ldb, c.beta, plain.data(), c.ldc, opt, &pi),
              xn::Status::Ok);
    opt.exdgemm_phase_times = 1;
    ASSERT_EQ(xn::cpu_exdgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), c.lda,
                              b.data(), c.ldb, c.beta, timed.data(), c.ldc, opt, &ti),
              xn::Status::Ok);
    EXPECT_EQ(ti.engine, int(engine));
    EXPECT_EQ(ti.blocks, 2);
    EXPECT_EQ(std::memcmp(plain.data(), timed.data(), plain.size() * 8), 0);
    for (int p = 0; p < xn::kExPhaseCount; ++p) {
      EXPECT_GT(ti.phase_ms[p], 0.0) << "engine " << int(engine) << " phase " << p;
      EXPECT_EQ(pi.phase_ms[p], 0.0) << "engine " << int(engine) << " phase " << p;
    }
  }
}

// The modular engine's driver stops at the first failed step: a failed
// residue or product step never reaches the sums (which would write C from
// products never made). A recording backend fails each step in turn, with
// both operands' residues stored (FusedCols = TileRows = 0), op(A)'s made
// inside the products (FusedCols = 8) or both operands' (TileRows = 8).
template <int FusedCols, int TileRows = 0>
struct FailingModularBackend {
  static constexpr int kFusedMaxCols = FusedCols, kFusedMaxModuli = FusedCols ? 48 : 0;
  static constexpr int kTileMaxRows = TileRows;
  static constexpr xn::index_t kModularBlockCap = 0;
  int fail_at = -1;  // the step (0-based, in call order) that fails
  int steps = 0, sums = 0, fused = 0;
  std::vector<char> ws = std::vector<char>(1 << 20);
  std::size_t residue_bytes() const { return 1; }
  std::size_t product_bytes() const { return 4; }
  xn::index_t modular_max_chunk() const { return 4; }  // k = 8: two rounds
  int modular_slots(xn::index_t, xn::index_t, int) const { return 1; }
  int modular_tile_slots(xn::index_t, xn::index_t, int) const { return 2; }
  void *body_space(std::size_t bytes) { return bytes <= ws.size() ? ws.data() : nullptr; }
  void *head_address() { return ws.data(); }
  xn::Status wait() { return xn::Status::Ok; }
  xn::Status step() {
    return steps++ == fail_at ? xn::Status::ExecutionFailed : xn::Status::Ok;
  }
  xn::Status modular_residues(xn::MatView<const double>, const xn::exact::VectorInfo *,
                              xn::index_t, xn::index_t, int, int,
                              const xn::ex_detail::ModularSplit &, void *) {
    return step();
  }
  xn::Status modular_products(const void *, const void *, int, xn::index_t, xn::index_t,
                              xn::index_t, xn::index_t, void *, xn::index_t, bool) {
    return step();
  }
  xn::Status modular_fused_products(xn::MatView<const double>, const xn::exact::VectorInfo *,
                                    xn::index_t, xn::index_t, const void *, xn::index_t,
                                    xn::index_t, int, const xn::ex_detail::ModularSplit &,
                                    void *, xn::index_t) {
    ++fused;
    return step();
  }
  xn::Status modular_tile_products(xn::MatView<const double>, const xn::exact::VectorInfo *,
                                   xn::index_t, xn::index_t, xn::MatView<const double>,
                                   const xn::exact::VectorInfo *, xn::index_t, xn::index_t,
                                   int, const xn::ex_detail::ModularSplit &, void *,
                                   xn::index_t) {
    ++fused;
    return step();
  }
  xn::Status modular_reduce(void *, int, int, xn::index_t, xn::index_t) { return step(); }
  xn::Status modular_fold_slots(void *, int, int, xn::index_t, xn::index_t) {
    return step();
  }
  xn::Status modular_sum_block(xn::MatView<const double>, xn::MatView<const double>,
                               xn::MatView<double>, const xn::exact::VectorInfo *,
                               const xn::exact::VectorInfo *, xn::index_t, xn::index_t,
                               xn::index_t, xn::index_t, int, xn::index_t, int, int,
                               const void *, double, double, std::int64_t *) {
    ++sums;
    return step();
  }
};

// Runs the modular driver over FailingModularBackend<FusedCols, TileRows>
// failing at step `fail_at` (8 x 8 x 8, 3 moduli, k in two chunks of 4);
// *fused: the report's fused_operands.
template <int FusedCols, int TileRows = 0>
FailingModularBackend<FusedCols, TileRows> run_failing(int fail_at, xn::Status *st,
                                                       int *fused) {
  static const std::vector<double> a(8 * 8, 1.0);
  const xn::MatView<const double> A{a.data(), 8, 8, 8, false};
  const xn::MatView<const double> Bt{a.data(), 8, 8, 8, true};
  std::vector<double> cw(8 * 8, 0.0);
  const xn::MatView<double> C{cw.data(), 8, 8, 8, false};
  xn::ExdgemmLimits lim;
  lim.workspace_bytes = 1 << 20;
  FailingModularBackend<FusedCols, TileRows> be;
  be.fail_at = fail_at;
  xn::ExdgemmReport info{};
  xn::PhaseClock<FailingModularBackend<FusedCols, TileRows>> clock(be, false, info.phase_ms);
  *st = xn::modular_run(be, A, Bt, Bt, C, 3, xn::ModularSpans{1, 1}, true, 0, 1.0, 0.0,
                        lim, clock, &info);
  *fused = info.fused_operands;
  return be;
}

TEST(Exdgemm, AFailedModularStepStopsTheCall) {
  xn::Status st;
  int fused = -1;
  // Steps of one block, k = 8 in two chunks of 4 (one slot): residues of
  // op(B), of op(A), the first chunk's products, the reduction, the second
  // chunk's products, sums.
  for (int fail_at = 0; fail_at < 6; ++fail_at) {
    const auto be = run_failing<0>(fail_at, &st, &fused);
    EXPECT_EQ(fused, 0);
    EXPECT_EQ(st, xn::Status::ExecutionFailed) << "step " << fail_at;
    EXPECT_EQ(be.steps, fail_at + 1) << "steps run after step " << fail_at << " failed";
    EXPECT_EQ(be.sums, fail_at == 5 ? 1 : 0) << "step " << fail_at;
    EXPECT_EQ(be.fused, 0) << "step " << fail_at;
  }
  // Fused (op(B) of 8 <= kFusedMaxCols columns): residues of op(B), the
  // fused products over all of k, sums; nothing else (fail_at = 3: none fails).
  for (int fail_at = 0; fail_at < 4; ++fail_at) {
    const auto be = run_failing<8>(fail_at, &st, &fused);
    EXPECT_EQ(fused, 1);
    EXPECT_EQ(st, fail_at < 3 ? xn::Status::ExecutionFailed : xn::Status::Ok)
        << "fused, step " << fail_at;
    EXPECT_EQ(be.steps, std::min(fail_at + 1, 3)) << "fused: steps run, failing at " << fail_at;
    EXPECT_EQ(be.fused, fail_at >= 1 ? 1 : 0) << "fused, step " << fail_at;
    EXPECT_EQ(be.sums, fail_at >= 2 ? 1 : 0) << "fused, step " << fail_at;
  }
  // Both fused (8 x 8 <= kTileMaxRows): no residues stored; the tile
  // products over two slots (folded inside them), sums.
  for (int fail_at = 0; fail_at < 3; ++fail_at) {
    const auto be = run_failing<0, 8>(fail_at, &st, &fused);
    EXPECT_EQ(fused, 2);
    EXPECT_EQ(st, fail_at < 2 ? xn::Status::ExecutionFailed : xn::Status::Ok)
        << "tiles, step " << fail_at;
    EXPECT_EQ(be.steps, std::min(fail_at + 1, 2)) << "tiles: steps run, failing at " << fail_at;
    EXPECT_EQ(be.fused, 1) << "tiles, step " << fail_at;
    EXPECT_EQ(be.sums, fail_at >= 1 ? 1 : 0) << "tiles, step " << fail_at;
  }
}

// The direct terms (a graph-captured call's entries whose range no modular
// plan covers: read from the operands, O(k) each) round like the engines:
// exact_entry over DirectTerms gives the driver's bits for every entry, on
// rows spanning up to 2000 binades, subnormals, zeros of both signs, Inf
// and NaN, with and without beta c.
// The exponent scans' summary from bit patterns (vector_summary, which the
// GPU's scans run on each thread's run of entries) is the decode's, entry
// class by class: normal, subnormal, +-0, Inf, NaN, and runs mixing them,
// empty runs, one entry, negative strides.
TEST(ExdgemmScan, BitPatternSummaryIsTheDecodes) {
  std::mt19937_64 rng(20261128);
  auto from_bits = [](std::uint64_t b) { return xn::exact::wide_detail::bits_to_double(b); };
  // Every class (all_classes), or only those the bit patterns decide alone:
  // zeros and normal numbers, with a subnormal among them at times.
  auto any_double = [&](bool all_classes) {
    const std::uint64_t sign = (rng() & 1) << 63;
    const std::uint64_t pick = rng() % 16;
    switch (all_classes ? pick : (pick == 3 || pick == 4 ? 8 : pick)) {
      case 0: return from_bits(sign);                      // +-0
      case 1: return from_bits(sign | (rng() >> 12));      // subnormal
      case 2: return from_bits(sign | 1);                  // tiniest
      case 3: return from_bits(sign | 0x7ff0000000000000ull);  // Inf
      case 4: return from_bits(sign | 0x7ff8000000000000ull | (rng() >> 13));  // NaN
      case 5:  // few significant bits, anywhere
        return from_bits(sign | ((rng() % 2046 + 1) << 52) |
                                                  ((rng() % 16) << (rng() % 49)));
      case 6: return from_bits(sign | 0x0010000000000000ull);  // smallest normal
      case 7: return from_bits(sign | 0x7fefffffffffffffull);  // largest
      default:  // any normal number
        return from_bits(sign | ((rng() % 2046 + 1) << 52) |
                                                  (rng() >> 12));
    }
  };
  auto same = [](const xn::exact::VectorInfo &a, const xn::exact::VectorInfo &b) {
    return a.top == b.top && a.low == b.low && a.nonfinite == b.nonfinite && a.signs == b.signs;
  };
  std::vector<double> x(64);
  int fallbacks = 0, checked = 0;
  for (int round = 0; round < 20000; ++round) {
    const int n = round % 41;
    for (double &v : x) v = any_double(round % 4 == 0);
    for (int inc : {1, 2, -1}) {
      const int reach = n == 0 ? 0 : (n - 1) * (inc < 0 ? -inc : inc);
      if (reach >= int(x.size())) continue;
      const double *p = inc < 0 ? x.data() + reach : x.data();
      xn::exact::VectorInfo want;
      xn::exact::vector_info_init(want);
      xn::exact::VectorBits bits_seen;
      for (int i = 0; i < n; ++i) {
        xn::exact::vector_info_add(want, xn::exact::decode(p[i * inc]));
        xn::exact::vector_bits_add(bits_seen, p[i * inc]);
      }
      fallbacks += !xn::exact::vector_bits_exact(bits_seen);
      const xn::exact::VectorInfo got = xn::exact::vector_summary(p, n, inc);
      ++checked;
      ASSERT_TRUE(same(got, want))
          << "round " << round << " n " << n << " inc " << inc << ": top " << got.top << "/"
          << want.top << " low " << got.low << "/" << want.low << " nonfinite "
          << got.nonfinite << "/" << want.nonfinite << " signs " << got.signs << "/"
          << want.signs;
    }
  }
  // Both paths ran: the bit patterns decided most runs, the decode the rest.
  EXPECT_GT(fallbacks, checked / 20);
  EXPECT_LT(fallbacks, checked / 2);
}

TEST(Exdgemm, DirectTermsGiveTheEnginesBits) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> ex(-1070, 1000);
  for (int round = 0; round < 40; ++round) {
    const int m = 7, n = 6, k = 1 + int(rng() % 40);
    std::vector<double> a(std::size_t(m * k)), b(std::size_t(k * n)), c(std::size_t(m * n));
    for (double &x : a) x = rng() % 5 == 0 ? 0.0 : std::ldexp(u(rng), ex(rng) / (1 + round % 3));
    for (double &x : b) x = rng() % 5 == 0 ? -0.0 : std::ldexp(u(rng), ex(rng) / (1 + round % 3));
    for (double &x : c) x = std::ldexp(u(rng), ex(rng));
    if (round % 7 == 3) a[std::size_t(rng() % a.size())] = INFINITY;
    if (round % 11 == 5) b[std::size_t(rng() % b.size())] = NAN;
    const double alpha = round % 5 == 0 ? -0x1p-40 : 1.25, beta = round % 2 ? -0.5 : 0.0;
    std::vector<double> want = c;
    ASSERT_EQ(xn::cpu_exdgemm(false, false, m, n, k, alpha, a.data(), m, b.data(), k, beta,
                              want.data(), m, std::size_t(0), 0, nullptr),
              xn::Status::Ok);
    std::vector<xn::exact::VectorInfo> ia(static_cast<std::size_t>(m)),
        ib(static_cast<std::size_t>(n));
    for (auto &v : ia) xn::exact::vector_info_init(v);
    for (auto &v : ib) xn::exact::vector_info_init(v);
    for (int p = 0; p < k; ++p) {
      for (int i = 0; i < m; ++i)
        xn::exact::vector_info_add(ia[std::size_t(i)],
                                   xn::exact::decode(a[std::size_t(i + p * m)]));
      for (int j = 0; j < n; ++j)
        xn::exact::vector_info_add(ib[std::size_t(j)],
                                   xn::exact::decode(b[std::size_t(p + j * k)]));
    }
    const xn::MatView<const double> A{a.data(), m, k, m, false}, B{b.data(), k, n, k, false};
    std::vector<double> scratch(16);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const xn::exact::EntryOperands E = xn::exact::entry_operands(
            A, B, ia[std::size_t(i)], ib[std::size_t(j)], i, j);
        bool wide = false;
        const double got = xn::exact::exact_entry(
            xn::exact::DirectTerms{E}, E, alpha, beta, &c[std::size_t(i + j * m)],
            scratch.data(), int(scratch.size()), &wide);
        const double w = want[std::size_t(i + j * m)];
        EXPECT_TRUE(std::isnan(w) ? std::isnan(got) : bits(got) == bits(w))
            << "round " << round << " (" << i << "," << j << "): direct " << std::hexfloat
            << got << ", engines " << w;
      }
  }
}

// The workspace query (xnGetExdgemmWorkspaceSize, no handle needed): the
// cublasDgemm statuses for bad arguments, 0 for an empty product, and a
// budget of the reported size runs well-scaled data (phi = 0) in one block,
// with the same bits as any other budget; a budget set through the option
// shrinks the report to the blocks it allows.
TEST(ExdgemmWorkspace, QueryCoversWellScaledDataInOneBlock) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::size_t bytes = 7;
  EXPECT_EQ(
      xnGetExdgemmWorkspaceSize(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, nullptr),
      CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(
      xnGetExdgemmWorkspaceSize(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, -1, 8, 8, &bytes),
      CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(xnGetExdgemmWorkspaceSize(nullptr, cublasOperation_t(9), CUBLAS_OP_N, 8, 8, 8,
                                      &bytes),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(bytes, 7u);
  ASSERT_EQ(xnGetExdgemmWorkspaceSize(nullptr, CUBLAS_OP_T, CUBLAS_OP_N, 5, 0, 8, &bytes),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(bytes, 0u);

  Case c{true, false, 150, 130, 120, 120, 120, 151, 1.5, 0.25};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 0, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  ASSERT_EQ(xnGetExdgemmWorkspaceSize(nullptr, CUBLAS_OP_T, CUBLAS_OP_N, int(c.m),
                                      int(c.n), int(c.k), &bytes),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_GT(bytes, 0u);
  const std::size_t budget = bytes;
  xn::ExdgemmReport info{};
  const auto r0 = run_and_check(c, a, b, c0, 0, budget, "the query's budget", &info);
  EXPECT_EQ(info.blocks, 1);
  EXPECT_LE(info.workspace_bytes, budget);
  EXPECT_LE(info.max_slices_a, xn::exdgemm_typical_slices(c.k));
  EXPECT_LE(info.max_slices_b, xn::exdgemm_typical_slices(c.k));
  const auto r1 = run_and_check(c, a, b, c0, 64, 0, "64 blocks", nullptr);
  EXPECT_EQ(std::memcmp(r0.data(), r1.data(), r0.size() * 8), 0);

  // The option's budget caps the report (never below the smallest block).
  struct Restore {
    std::int64_t saved = 0;
    Restore() { xnGetOption(nullptr, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, &saved); }
    ~Restore() { xnSetOption(nullptr, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, saved); }
  } restore;
  ASSERT_EQ(
      xnSetOption(nullptr, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, std::int64_t(budget / 3)),
      CUBLAS_STATUS_SUCCESS);
  std::size_t capped = 0;
  EXPECT_EQ(xnGetExdgemmWorkspaceSize(nullptr, CUBLAS_OP_T, CUBLAS_OP_N, int(c.m),
                                      int(c.n), int(c.k), &capped),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_LE(capped, budget / 3);
  EXPECT_GT(capped, 0u);
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, 1),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(xnGetExdgemmWorkspaceSize(nullptr, CUBLAS_OP_T, CUBLAS_OP_N, int(c.m),
                                      int(c.n), int(c.k), &capped),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_GT(capped, 1u) << "the smallest block's need, not the budget";
}

// A backend's block cap (CudaExBackend::kModularBlockCap: cuBLAS's INT8
// products are slower beyond 8192 x 8192) bounds the block where both m and
// n exceed it, whatever the budget; a dimension at or below it keeps the
// budget's block.
TEST(ExdgemmBlocking, BlockCapAppliesWhereBothDimensionsExceedIt) {
  const auto body = [](xn::index_t bm, xn::index_t bn, bool) {
    return std::size_t(bm) * std::size_t(bn);
  };
  const std::size_t any = SIZE_MAX / 2;
  auto b = xn::ex_detail::choose_block(16384, 16384, 0, any, 0, body, 8192);
  EXPECT_EQ(b.bm, 8192);
  EXPECT_EQ(b.bn, 8192);
  b = xn::ex_detail::choose_block(16384, 16384, 0, any, 0, body);
  EXPECT_EQ(b.bm, 16384) << "no cap: the budget's block";
  b = xn::ex_detail::choose_block(12000, 9000, 0, any, 0, body, 8192);
  EXPECT_EQ(b.bm, 8192);
  EXPECT_EQ(b.bn, 8192);
  b = xn::ex_detail::choose_block(32768, 4096, 0, any, 0, body, 8192);
  EXPECT_EQ(b.bm, 32768) << "one dimension within the cap: not capped";
  EXPECT_EQ(b.bn, 4096);
  b = xn::ex_detail::choose_block(16384, 16384, 0, std::size_t(4096) * 4096, 0, body, 8192);
  EXPECT_EQ(b.bm, 4096) << "the budget still rules below the cap";
  b = xn::ex_detail::choose_block(16384, 16384, 0, any, 12288, body, 8192);
  EXPECT_EQ(b.bm, 12288) << "a forced block (XN_OPT_EXDGEMM_BLOCK) is kept";
}

// The public host API (no GPU here, or XN_DEVICE=cpu): both layouts, Fortran.
TEST(ExdgemmHost, CblasBothLayoutsAndFortran) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  const int m = 13, n = 11, k = 17;
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 4, false, false, m, n, k, a, m, b, k, rng);
  std::vector<double> c0 = make_c(m, n, m, 0.5, rng);
  std::vector<xn_test::ExactEntry> want;
  xn_test::exact_gemm<double>(false, false, m, n, k, 2.0, a.data(), m, b.data(), k, 0.5,
                              c0.data(), m, want);
  std::vector<double> col = c0;
  cblas_exdgemm(XnColMajor, XnNoTrans, XnNoTrans, m, n, k, 2.0, a.data(), m, b.data(), k,
                0.5, col.data(), m);
  // Row-major: the same matrices stored transposed.
  std::vector<double> ar(std::size_t(m * k)), br(std::size_t(k * n)),
      cr(std::size_t(m * n));
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) ar[std::size_t(i * k + p)] = a[std::size_t(i + p * m)];
  for (int p = 0; p < k; ++p)
    for (int j = 0; j < n; ++j) br[std::size_t(p * n + j)] = b[std::size_t(p + j * k)];
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) cr[std::size_t(i * n + j)] = c0[std::size_t(i + j * m)];
  cblas_exdgemm(XnRowMajor, XnNoTrans, XnNoTrans, m, n, k, 2.0, ar.data(), k, br.data(),
                n, 0.5, cr.data(), n);
  std::vector<double> f = c0;
  const double alpha = 2.0, beta = 0.5;
  exdgemm_("N", "N", &m, &n, &k, &alpha, a.data(), &m, b.data(), &k, &beta, f.data(), &m);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const double w = want[std::size_t(i + j * m)].hi;
      EXPECT_TRUE(same(col[std::size_t(i + j * m)], w)) << i << "," << j;
      EXPECT_TRUE(same(cr[std::size_t(i * n + j)], w)) << i << "," << j;
      EXPECT_TRUE(same(f[std::size_t(i + j * m)], w)) << i << "," << j;
    }
  xnExdgemmInfo_t info{};
  ASSERT_EQ(xnGetLastExdgemmInfo(nullptr, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_GE(info.max_slices_a, 1);
  EXPECT_EQ(info.blocks, 1);
}

}  // namespace
