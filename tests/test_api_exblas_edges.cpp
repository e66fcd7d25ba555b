// test_api_exblas_edges.cpp - edge cases of the correctly rounded host BLAS
// entry points (exdgemv_, cblas_exdgemv, exddot_, cblas_exddot, exdgemm_,
// cblas_exdgemm) on the CPU path, against reference BLAS / CBLAS where the
// library follows them and against the exact IEEE oracle
// (support/ieee_oracle.h) for the values:
//
//  - quick returns (reference DGEMV: m = 0, n = 0, or alpha == 0 with
//    beta == 1 return before touching y; reference DGEMM likewise for
//    m = 0, n = 0, or (alpha == 0 or k == 0) with beta == 1): y / C must be
//    bitwise unchanged, signalling NaNs included;
//  - beta == 0 never reads y / C, also where the value needs the exact
//    (slow) path;
//  - negative and zero increments as reference BLAS reads them;
//  - XERBLA positions and names (reference DGEMV / DGEMM, reference CBLAS
//    cblas_dgemv / cblas_dgemm), checked before any quick return;
//  - specials in the scalars (NaN, +-Inf, extreme values), signed zeros,
//    overflow and subnormal boundaries, each value stated by hand and / or
//    compared with the oracle bit for bit (NaN matches any NaN).
//
// Reference sources quoted below: Reference-LAPACK/lapack BLAS/SRC/dgemv.f,
// dgemm.f, ddot.f, CBLAS/src/cblas_dgemv.c, cblas_xerbla.c, xerbla.c.
// Inputs are random per run (xn_test::fresh_seed; XN_TEST_SEED replays).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/bad_gemm_args.h"
#include "support/exdgemm_inputs.h"
#include "support/host_state.h"
#include "support/ieee_oracle.h"
#include "support/test_support.h"
#include "support/xerbla_log.h"
#include "xngemm.h"

namespace {

using xn_test::g_xerbla;
using xn_test::XerblaLog;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMax = std::numeric_limits<double>::max();
constexpr double kMinSub = 0x1p-1074;

// The host entry points read XN_DEVICE on every call: the CPU from the first
// call on, whatever the machine has.
const bool kCpuForced = [] { return setenv("XN_DEVICE", "cpu", 1) == 0; }();

std::uint64_t bits(double x) { return xn_test::ex_bits(x); }
constexpr auto &from_bits = xn_test::ex_double;
// A signalling NaN (quiet bit clear, payload nonzero): any arithmetic on it
// (1 * sNaN included) returns a quiet NaN, so it shows whether a value was
// left alone or multiplied by 1.
const double kSNaN = from_bits(0x7ff0000000000badull);
// A quiet NaN with a payload and the sign bit set.
const double kNegQNaN = from_bits(0xfff80000deadbeefull);

constexpr auto &same = xn_test::ex_same_bits;

constexpr auto &hex = xn_test::ex_hex;

bool same_bytes(const std::vector<double> &a, const std::vector<double> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 8) == 0;
}

// A value a call must never produce and never change: NaNs with payloads
// (a signalling one too), signed zeros, infinities, a subnormal.
double poison(std::size_t i) {
  switch (i % 6) {
    case 0:
      return kSNaN;
    case 1:
      return -0.0;
    case 2:
      return kNegQNaN;
    case 3:
      return -kInf;
    case 4:
      return -0x0.0000000abcdefp-1022;
    default:
      return from_bits(0x7ff8000000000000ull | (0xc0ffeeull + i));
  }
}

std::vector<double> poisoned(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = poison(i);
  return v;
}

// Offset from the pointer passed of element i of a BLAS vector of length len
// with increment inc (reference BLAS: a negative increment starts at
// 1 - (len - 1) inc, so element i is at (len - 1 - i) |inc|; 0 repeats the
// first element).
std::int64_t offset_of(std::int64_t i, std::int64_t len, int inc) {
  return inc >= 0 ? i * inc : (len - 1 - i) * std::int64_t(-std::int64_t(inc));
}

// Storage for a BLAS vector (elements from `value`, every other slot
// poisoned) and its logical elements.
std::vector<double> store_vector(const std::vector<double> &logical, int inc) {
  const std::int64_t len = std::int64_t(logical.size());
  const std::int64_t span = len == 0 ? 1 : 1 + (len - 1) * std::abs(std::int64_t(inc));
  std::vector<double> mem = poisoned(std::size_t(span));
  for (std::int64_t i = len - 1; i >= 0; --i)  // inc == 0: element 0 wins
    mem[std::size_t(offset_of(i, len, inc))] = logical[std::size_t(i)];
  return mem;
}

std::vector<double> load_vector(const std::vector<double> &mem, std::int64_t len, int inc) {
  std::vector<double> out(static_cast<std::size_t>(std::max<std::int64_t>(0, len)));
  for (std::int64_t i = 0; i < len; ++i) out[std::size_t(i)] = mem[std::size_t(offset_of(i, len, inc))];
  return out;
}

// ------------------------------------------------------------------ DGEMV

enum class Api { Fortran, CblasCol, CblasRow };
const Api kApis[] = {Api::Fortran, Api::CblasCol, Api::CblasRow};
const char *api_name(Api a) {
  return a == Api::Fortran ? "exdgemv_" : a == Api::CblasCol ? "cblas_exdgemv(col)"
                                                             : "cblas_exdgemv(row)";
}

// One DGEMV: the logical m x n matrix A (a(i, j)), stored as the API takes
// it (column-major with lda >= m, or row-major with lda >= n) with poisoned
// padding; x and y stored at their increments with poisoned gaps.
struct Gemv {
  Api api = Api::Fortran;
  bool trans = false;
  int m = 0, n = 0, lda = 1, incx = 1, incy = 1;
  double alpha = 1, beta = 0;
  std::vector<double> A, xmem, ymem;  // ymem: as on entry
  std::vector<double> xs, ys;         // logical x and y (y as on entry)

  int len_x() const { return trans ? m : n; }
  int len_y() const { return trans ? n : m; }
  double a(int i, int j) const {
    return api == Api::CblasRow ? A[std::size_t(std::int64_t(i) * lda + j)]
                                : A[std::size_t(i + std::int64_t(j) * lda)];
  }
  double op_a(int r, int c) const { return trans ? a(c, r) : a(r, c); }
  std::string describe() const {
    return std::string(api_name(api)) + (trans ? " T" : " N") + " m=" + std::to_string(m) +
           " n=" + std::to_string(n) + " lda=" + std::to_string(lda) +
           " incx=" + std::to_string(incx) + " incy=" + std::to_string(incy) +
           " alpha=" + hex(alpha) + " beta=" + hex(beta);
  }
};

using Fn2 = std::function<double(int, int)>;

Gemv make_gemv(Api api, bool trans, int m, int n, int pad, int incx, int incy, double alpha,
               double beta, const Fn2 &a_value, const std::function<double(int)> &x_value,
               const std::function<double(int)> &y_value) {
  Gemv g;
  g.api = api;
  g.trans = trans;
  g.m = m;
  g.n = n;
  g.incx = incx;
  g.incy = incy;
  g.alpha = alpha;
  g.beta = beta;
  const bool rows = api == Api::CblasRow;
  g.lda = std::max(1, rows ? n : m) + pad;
  g.A = poisoned(std::size_t(g.lda) * std::size_t(std::max(1, rows ? m : n)));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      g.A[std::size_t(rows ? std::int64_t(i) * g.lda + j : i + std::int64_t(j) * g.lda)] =
          a_value(i, j);
  g.xs.resize(std::size_t(g.len_x()));
  for (int i = 0; i < g.len_x(); ++i) g.xs[std::size_t(i)] = x_value(i);
  g.ys.resize(std::size_t(g.len_y()));
  for (int i = 0; i < g.len_y(); ++i) g.ys[std::size_t(i)] = y_value(i);
  g.xmem = store_vector(g.xs, incx);
  g.ymem = store_vector(g.ys, incy);
  return g;
}

void call_gemv(Api api, bool trans, int m, int n, double alpha, const double *A, int lda,
               const double *x, int incx, double beta, double *y, int incy) {
  if (api == Api::Fortran) {
    const char t = trans ? "TtCc"[std::rand() % 4] : "Nn"[std::rand() % 2];
    exdgemv_(&t, &m, &n, &alpha, A, &lda, x, &incx, &beta, y, &incy);
  } else {
    cblas_exdgemv(api == Api::CblasRow ? XnRowMajor : XnColMajor,
                  trans ? (std::rand() % 2 ? XnTrans : XnConjTrans) : XnNoTrans, m, n, alpha,
                  A, lda, x, incx, beta, y, incy);
  }
}

// The run: y's storage after the call.
std::vector<double> run_gemv(const Gemv &g) {
  std::vector<double> y = g.ymem;
  call_gemv(g.api, g.trans, g.m, g.n, g.alpha, g.A.data(), g.lda, g.xmem.data(), g.incx,
            g.beta, y.data(), g.incy);
  return y;
}

// The contract's y (entry (i, 1) of alpha op(A) x + beta y by the oracle;
// y not passed when beta == 0).
std::vector<double> oracle_gemv(const Gemv &g) {
  const int ly = g.len_y(), lx = g.len_x();
  std::vector<double> op(std::size_t(ly) * std::size_t(std::max(lx, 1)));
  for (int c = 0; c < lx; ++c)
    for (int r = 0; r < ly; ++r) op[std::size_t(r + std::int64_t(c) * ly)] = g.op_a(r, c);
  std::vector<double> out;
  xn_test::exact_gemm_ieee(false, false, ly, 1, lx, g.alpha, op.data(), std::max(ly, 1),
                           g.xs.data(), std::max(lx, 1), g.beta,
                           g.beta == 0.0 ? nullptr : g.ys.data(), std::max(ly, 1), out);
  return out;
}

// "" or the first difference from `want` (logical y), then any gap of y
// written, then an XERBLA report.
std::string check_gemv(const Gemv &g, const std::vector<double> &want,
                       std::vector<double> *got_out = nullptr) {
  g_xerbla = XerblaLog{};
  const std::vector<double> y = run_gemv(g);
  if (g_xerbla.calls != 0)
    return g.describe() + ": XERBLA " + g_xerbla.name + " " + std::to_string(g_xerbla.info);
  const std::vector<double> got = load_vector(y, g.len_y(), g.incy);
  if (got_out) *got_out = got;
  for (int i = 0; i < g.len_y(); ++i)
    if (!same(got[std::size_t(i)], want[std::size_t(i)])) {
      std::string s = g.describe() + "\n  y[" + std::to_string(i) + "] expected " +
                      hex(want[std::size_t(i)]) + " got " + hex(got[std::size_t(i)]) +
                      "\n  y0=" + hex(g.ys[std::size_t(i)]) + " row:";
      for (int p = 0; p < std::min(g.len_x(), 6); ++p)
        s += " " + hex(g.op_a(i, p)) + "*" + hex(g.xs[std::size_t(p)]);
      return s;
    }
  // Slots of y that are no element keep their bits.
  std::vector<double> expect_mem = g.ymem;
  for (int i = 0; i < g.len_y(); ++i)
    expect_mem[std::size_t(offset_of(i, g.len_y(), g.incy))] = y[std::size_t(offset_of(i, g.len_y(), g.incy))];
  if (!same_bytes(expect_mem, y)) return g.describe() + ": a slot of y between elements was written";
  return "";
}

class ExblasEdges : public ::testing::Test {
 protected:
  ExblasEdges() : seed_(xn_test::fresh_seed()), rng_(seed_) {}
  void SetUp() override {
    ASSERT_TRUE(kCpuForced);
    std::srand(unsigned(seed_));
    RecordProperty("seed", std::to_string(seed_));
  }
  std::string seed_text() const { return xn_test::describe_seed(seed_); }
  double u53() { return xn_test::u53(rng_); }
  double ordinary(double spread = 4) {
    std::normal_distribution<double> randn(0.0, 1.0);
    return (u53() - 0.5) * std::exp(spread * randn(rng_));
  }
  int pick_inc() {
    static const int incs[] = {1, 2, 3, -1, -2, -3};
    return incs[rng_() % 6];
  }
  const xn_test::HostStateGuard guard_{"cpu"};
  const std::uint64_t seed_;
  std::mt19937_64 rng_;
};

// Reference DGEMV, dgemv.f: "IF ((M.EQ.0) .OR. (N.EQ.0) .OR. ((ALPHA.EQ.ZERO)
// .AND. (BETA.EQ.ONE))) RETURN" comes before "y := beta*y": y is not
// touched at all, so a signalling NaN, a NaN payload and -0 stay bit for bit
// (and A and x, all NaN here, are not read).
TEST_F(ExblasEdges, GemvQuickReturnsLeaveYBitwise) {
  SCOPED_TRACE(seed_text());
  for (Api api : kApis)
    for (bool trans : {false, true})
      for (int shape = 0; shape < 4; ++shape) {
        // (alpha 0 or -0, beta 1, m n > 0), (m = 0), (n = 0), (both 0), the
        // last three with beta = 0 and alpha = 1 (the return precedes y :=
        // 0 there too).
        const int m = shape == 1 || shape == 3 ? 0 : 1 + int(rng_() % 9);
        const int n = shape == 2 || shape == 3 ? 0 : 1 + int(rng_() % 9);
        const double alpha = shape == 0 ? (rng_() % 2 ? 0.0 : -0.0) : 1.0;
        const double beta = shape == 0 ? 1.0 : 0.0;
        const int incy = pick_inc();
        const int ly = trans ? n : m;
        std::vector<double> ymem = poisoned(std::size_t(1 + std::max(ly, 5) * std::abs(incy)));
        const std::vector<double> before = ymem;
        const std::vector<double> nan(std::size_t(100), kSNaN);
        const int lda = std::max(1, api == Api::CblasRow ? n : m);
        g_xerbla = XerblaLog{};
        call_gemv(api, trans, m, n, alpha, nan.data(), lda, nan.data(), pick_inc(), beta,
                  ymem.data(), incy);
        EXPECT_EQ(g_xerbla.calls, 0) << api_name(api) << " m=" << m << " n=" << n;
        EXPECT_TRUE(same_bytes(before, ymem))
            << api_name(api) << (trans ? " T" : " N") << " m=" << m << " n=" << n
            << " alpha=" << hex(alpha) << " beta=" << hex(beta) << " incy=" << incy
            << ": y changed (reference DGEMV returns before touching y)";
        EXPECT_EQ(xnGetLastHostStatus(), 0);
      }
}

// beta == 0 (and -0) never reads y, also for the outputs the certified
// one-pass rounding leaves to the exact path (exact_dot_entry): rows with
// subnormal results, huge cancellation and products outside
// [2^-968, 2^1000]. y holds signalling NaNs and -Inf; every result must be
// the oracle's value computed without y, never a NaN.
TEST_F(ExblasEdges, GemvBetaZeroNeverReadsYOnTheExactPath) {
  SCOPED_TRACE(seed_text());
  for (int kind = 0; kind < 3; ++kind)
    for (Api api : kApis)
      for (bool trans : {false, true})
        for (double beta : {0.0, -0.0}) {
          const int rows = 1 + int(rng_() % 7), len = 2 + int(rng_() % 30);
          const int m = trans ? len : rows, n = trans ? rows : len;
          // Per output row r of op(A): pairs +H, -H and a small rest (kind
          // 0), subnormal products (kind 1), products near 2^1010 that
          // cancel back below DBL_MAX (kind 2).
          std::vector<double> op(std::size_t(rows) * std::size_t(len));
          std::vector<double> xs(static_cast<std::size_t>(len));
          for (double &v : xs) v = std::ldexp(rng_() % 2 ? 1.0 : -1.0, int(rng_() % 9) - 4);
          for (int r = 0; r < rows; ++r)
            for (int p = 0; p < len; ++p) {
              double v;
              if (kind == 0) {
                const double h = std::ldexp(1.0 + u53(), 60 + int(rng_() % 40));
                v = p % 3 == 0 ? h : p % 3 == 1 ? -h * xs[std::size_t(p - 1)] /
                                                       xs[std::size_t(p)]
                                                 : ordinary(1);
              } else if (kind == 1) {
                v = std::ldexp(u53() - 0.5, -1020 - int(rng_() % 50));
              } else {
                v = std::ldexp(u53() - 0.5, 1010 + int(rng_() % 12));
              }
              op[std::size_t(r + p * rows)] = v;
            }
          const Fn2 a_value = [&](int i, int j) {
            return trans ? op[std::size_t(j + i * rows)] : op[std::size_t(i + j * rows)];
          };
          const Gemv g = make_gemv(
              api, trans, m, n, int(rng_() % 3), pick_inc(), pick_inc(),
              kind == 1 ? 0.75 : (rng_() % 2 ? 1.0 : -1.0), beta, a_value,
              [&](int i) { return xs[std::size_t(i)]; },
              [&](int i) { return i % 2 ? -kInf : kSNaN; });
          const std::vector<double> want = oracle_gemv(g);
          std::vector<double> got;
          const std::string msg = check_gemv(g, want, &got);
          ASSERT_TRUE(msg.empty()) << "kind " << kind << ": " << msg;
          for (std::size_t i = 0; i < got.size(); ++i)
            ASSERT_FALSE(std::isnan(got[i])) << g.describe() << ": y read (NaN came out)";
        }
}

// alpha == 0 and beta == 0 with NaN A, x and y: y := ZERO (dgemv.f
// "IF (BETA.EQ.ZERO) ... Y(I) = ZERO", then "IF (ALPHA.EQ.ZERO) RETURN"):
// +0 bitwise, nothing read.
TEST_F(ExblasEdges, GemvAlphaZeroBetaZeroGivesPlusZero) {
  SCOPED_TRACE(seed_text());
  for (Api api : kApis)
    for (bool trans : {false, true})
      for (double alpha : {0.0, -0.0})
        for (double beta : {0.0, -0.0}) {
          const auto nan = [](int) { return kSNaN; };
          const Gemv g = make_gemv(api, trans, 1 + int(rng_() % 9), 1 + int(rng_() % 9),
                                   int(rng_() % 2), pick_inc(), pick_inc(), alpha, beta,
                                   [](int, int) { return kNaN; }, nan, nan);
          const std::vector<double> want(static_cast<std::size_t>(g.len_y()), 0.0);
          const std::string msg = check_gemv(g, want);
          EXPECT_TRUE(msg.empty()) << msg;
        }
}

// Negative increments by a worked example: reference DGEMV starts x at
// KX = 1 - (LENX-1)*INCX and y at KY = 1 - (LENY-1)*INCY.
TEST_F(ExblasEdges, GemvNegativeIncrementsStartAtTheFarEnd) {
  // A = [1 10 100; 2 20 200] (2 x 3), x storage {1, 2, 3}.
  const std::vector<double> A = {1, 2, 10, 20, 100, 200};  // column-major, lda 2
  const std::vector<double> Arow = {1, 10, 100, 2, 20, 200};
  const std::vector<double> x = {1, 2, 3};
  const int m = 2, n = 3, lda = 2, ldr = 3;
  const double one = 1, zero = 0;
  struct Case {
    int incx, incy;
    double y_at0, y_at_far;  // storage y[0] and y[|incy|]
  };
  // incx = 1: Ax = (321, 642); incx = -1: x is (3, 2, 1): Ax = (123, 246).
  // incy = -2: y(1) is storage slot 2, y(2) is slot 0.
  const Case cases[] = {{1, 2, 321, 642}, {-1, 2, 123, 246}, {1, -2, 642, 321},
                        {-1, -2, 246, 123}};
  for (const Case &c : cases)
    for (Api api : kApis) {
      std::vector<double> y = poisoned(3);
      const std::vector<double> before = y;
      g_xerbla = XerblaLog{};
      if (api == Api::Fortran) {
        exdgemv_("N", &m, &n, &one, A.data(), &lda, x.data(), &c.incx, &zero, y.data(),
                 &c.incy);
      } else if (api == Api::CblasCol) {
        cblas_exdgemv(XnColMajor, XnNoTrans, m, n, 1.0, A.data(), lda, x.data(), c.incx,
                      0.0, y.data(), c.incy);
      } else {
        cblas_exdgemv(XnRowMajor, XnNoTrans, m, n, 1.0, Arow.data(), ldr, x.data(), c.incx,
                      0.0, y.data(), c.incy);
      }
      SCOPED_TRACE(std::string(api_name(api)) + " incx=" + std::to_string(c.incx) +
                   " incy=" + std::to_string(c.incy));
      EXPECT_EQ(g_xerbla.calls, 0);
      EXPECT_EQ(y[0], c.y_at0);
      EXPECT_EQ(y[2], c.y_at_far);
      EXPECT_EQ(bits(y[1]), bits(before[1])) << "the gap of y was written";
    }
  // Transposed: y = A^T x (length 3) from x (length 2) read backwards.
  const int incx = -1, incy = -1;
  std::vector<double> y(3, kNaN);
  exdgemv_("T", &m, &n, &one, A.data(), &lda, x.data(), &incx, &zero, y.data(), &incy);
  // x logical = (2, 1): A^T x = (1*2 + 2*1, 10*2 + 20*1, 100*2 + 200*1) =
  // (4, 40, 400), stored backwards.
  EXPECT_EQ(y[0], 400.0);
  EXPECT_EQ(y[1], 40.0);
  EXPECT_EQ(y[2], 4.0);
}

// Every TRANS character: reference DGEMV accepts N, T, C in either case
// (LSAME), anything else is INFO = 1, name as the library documents
// ("EXDGEMV", DGEMV's positions), y untouched, and the thread's status -1.
TEST_F(ExblasEdges, GemvEveryTransCharacter) {
  const std::vector<double> A(16, 1.0), x(16, 1.0);
  const std::vector<double> pattern = poisoned(16);
  const int m = 3, n = 4, lda = 3, inc = 1;
  const double alpha = 1, beta = 0;
  int valid = 0;
  for (int ch = 0; ch < 256; ++ch) {
    const char t = char(ch);
    std::vector<double> y = pattern;
    g_xerbla = XerblaLog{};
    exdgemv_(&t, &m, &n, &alpha, A.data(), &lda, x.data(), &inc, &beta, y.data(), &inc);
    const bool ok = std::strchr("NnTtCc", ch) != nullptr && ch != 0;
    valid += ok;
    if (ok) {
      EXPECT_EQ(g_xerbla.calls, 0) << "trans " << ch;
      EXPECT_EQ(y[0], (ch == 'N' || ch == 'n') ? 4.0 : 3.0) << "trans " << ch;
    } else {
      EXPECT_EQ(g_xerbla.calls, 1) << "trans " << ch;
      EXPECT_EQ(g_xerbla.name, "EXDGEMV") << "trans " << ch;
      EXPECT_EQ(g_xerbla.info, 1) << "trans " << ch;
      EXPECT_EQ(xnGetLastHostStatus(), -1) << "trans " << ch;
      EXPECT_TRUE(same_bytes(y, pattern)) << "trans " << ch << ": y written";
    }
  }
  EXPECT_EQ(valid, 6);
}

// A bad argument's report (info > 0): one XERBLA call under `name` with
// that position, the thread's status -info, the output (y or C) unwritten;
// info 0: none.
void expect_reported(const char *name, int info, const std::vector<double> &y,
                     const std::vector<double> &pattern) {
  if (info == 0) {
    EXPECT_EQ(g_xerbla.calls, 0);
    return;
  }
  EXPECT_EQ(g_xerbla.calls, 1);
  EXPECT_EQ(g_xerbla.name, name);
  EXPECT_EQ(g_xerbla.info, info);
  EXPECT_EQ(xnGetLastHostStatus(), -info);
  EXPECT_TRUE(same_bytes(y, pattern)) << "output written after a bad argument";
}

// Reference DGEMV checks every argument before the quick return: incx = 0
// is INFO 8 and incy = 0 INFO 11 even with m = n = 0 or alpha = 0, beta =
// 1; lda < MAX(1, M) is INFO 6 whatever TRANS is (lda = 0 with m = 0 too).
// Reference CBLAS (cblas_dgemv.c; xerbla.c adds 1 to DGEMV's INFO;
// cblas_xerbla.c swaps 3 and 4 for a row-major gemv): row-major A needs
// lda >= max(1, n) (DGEMV sees the n x m transpose), n is checked first.
TEST_F(ExblasEdges, GemvArgumentPositionsBeforeQuickReturn) {
  const std::vector<double> A(64, 1.0), x(64, 1.0);
  const std::vector<double> pattern = poisoned(64);
  struct F77 {
    char trans;
    int m, n, lda, incx, incy;
    double alpha, beta;
    int info;
  };
  const F77 f77[] = {
      {'N', 0, 0, 1, 0, 1, 1, 0, 8},   {'T', 0, 5, 1, 1, 0, 1, 0, 11},
      {'N', 3, 0, 3, 0, 0, 0, 1, 8},   {'C', 3, 4, 3, 1, 0, 0, 1, 11},
      {'N', 0, 4, 0, 1, 1, 1, 0, 6},   {'T', 5, 2, 4, 1, 1, 1, 0, 6},
      {'t', 2, 5, 2, 1, 1, 1, 0, 0},   {'N', -1, 0, 1, 0, 0, 1, 0, 2},
      {'N', 0, -1, 0, 0, 0, 1, 0, 3},  {'n', 4, 4, -4, 1, 1, 1, 0, 6},
      {'N', 1, 1, 1, INT_MIN, INT_MAX, 1, 0, 0},  // m = n = 1: one element each
  };
  for (const F77 &c : f77) {
    std::vector<double> y = pattern;
    g_xerbla = XerblaLog{};
    exdgemv_(&c.trans, &c.m, &c.n, &c.alpha, A.data(), &c.lda, x.data(), &c.incx, &c.beta,
             y.data(), &c.incy);
    SCOPED_TRACE(std::string("exdgemv_ trans=") + c.trans + " m=" + std::to_string(c.m) +
                 " n=" + std::to_string(c.n) + " lda=" + std::to_string(c.lda) +
                 " incx=" + std::to_string(c.incx) + " incy=" + std::to_string(c.incy));
    expect_reported("EXDGEMV", c.info, y, pattern);
  }

  struct Cb {
    int layout, trans, m, n, lda, incx, incy;
    int pos;
  };
  const int R = XnRowMajor, C = XnColMajor;
  const Cb cb[] = {
      {R, XnNoTrans, 6, 2, 2, 1, 1, 0},    // row-major: lda = n < m is enough
      {C, XnNoTrans, 6, 2, 2, 1, 1, 7},    // column-major: lda >= m
      {R, XnTrans, 2, 6, 2, 1, 1, 7},      // row-major: lda = m < n is not
      {R, XnNoTrans, 0, 0, 1, 0, 1, 9},    // incx before the quick return
      {R, XnNoTrans, 0, 0, 1, 1, 0, 12},   // incy before the quick return
      {C, XnConjTrans, 0, 3, 1, 1, 0, 12},
      {R, XnNoTrans, -1, -1, 1, 1, 1, 4},  // row-major: n first
      {C, XnNoTrans, -1, -1, 1, 1, 1, 3},  // column-major: m first
      {R, XnNoTrans, -1, 3, 3, 1, 1, 3},
      {R, XnNoTrans, 3, -1, 3, 1, 1, 4},
      {R, XnNoTrans, 3, 0, 0, 1, 1, 7},    // lda >= max(1, n) = 1
      {R, 110, 3, 3, 3, 1, 1, 2},
      {C, 114, 3, 3, 3, 1, 1, 2},
      {R, 'N', 3, 3, 3, 1, 1, 2},
      {0, XnNoTrans, 3, 3, 3, 1, 1, 1},
      {103, 999, -1, -1, 0, 0, 0, 1},
  };
  for (const Cb &c : cb) {
    std::vector<double> y = pattern;
    g_xerbla = XerblaLog{};
    cblas_exdgemv(c.layout, c.trans, c.m, c.n, 1.0, A.data(), c.lda, x.data(), c.incx, 0.0,
                  y.data(), c.incy);
    SCOPED_TRACE("cblas_exdgemv layout=" + std::to_string(c.layout) +
                 " trans=" + std::to_string(c.trans) + " m=" + std::to_string(c.m) +
                 " n=" + std::to_string(c.n) + " lda=" + std::to_string(c.lda) +
                 " incx=" + std::to_string(c.incx) + " incy=" + std::to_string(c.incy));
    expect_reported("cblas_exdgemv", c.pos, y, pattern);
  }
}

// Scalars of every IEEE class against the oracle: alpha NaN, +Inf, -Inf,
// DBL_MAX, +-2^-1074; beta NaN, +-Inf, DBL_MAX, -2^-1074, 2; data with
// some specials.
TEST_F(ExblasEdges, GemvSpecialScalarsMatchTheOracle) {
  SCOPED_TRACE(seed_text());
  const double alphas[] = {kNaN, kInf, -kInf, kMax, kMinSub, -kMinSub, -0x1p-1000};
  const double betas[] = {kNaN, kInf, -kInf, kMax, -kMinSub, 2.0, 0.0, 1.0};
  int nan_out = 0, finite_out = 0;
  for (double alpha : alphas)
    for (double beta : betas)
      for (int rep = 0; rep < 2; ++rep) {
        const Api api = kApis[rng_() % 3];
        const bool trans = rng_() % 2;
        const double p_special = rep == 0 ? 0.0 : 0.1;
        const auto value = [&](int) {
          if (u53() >= p_special) return ordinary();
          const double s[] = {0.0, -0.0, kInf, -kInf, kNaN, kMinSub, kMax};
          return s[rng_() % 7];
        };
        const Gemv g = make_gemv(api, trans, 1 + int(rng_() % 8), 1 + int(rng_() % 8),
                                 int(rng_() % 2), pick_inc(), pick_inc(), alpha, beta,
                                 [&](int, int) { return value(0); }, value, value);
        std::vector<double> got;
        const std::string msg = check_gemv(g, oracle_gemv(g), &got);
        ASSERT_TRUE(msg.empty()) << msg;
        for (double v : got) {
          nan_out += std::isnan(v);
          finite_out += std::isfinite(v);
        }
      }
  EXPECT_GT(nan_out, 0);
  EXPECT_GT(finite_out, 0);
}

// Values stated by hand where the naive evaluation is wrong: beta y or
// alpha X beyond DBL_MAX that the other term brings back (the contract: a
// finite P or Q never overflows on the way), beta y and alpha X below the
// subnormal grid that add up (rounded once), and the overflow threshold
// 2^1024 - 2^970 from either side. op(A)'s row is (a, 0) and x is (xv, 3),
// so every row has two products.
TEST_F(ExblasEdges, GemvIntermediatesNeverOverflowOrUnderflow) {
  SCOPED_TRACE(seed_text());
  struct Stated {
    const char *what;
    double a, xv, alpha, beta, y, want;
  };
  const Stated cases[] = {
      {"-DBL_MAX + 2 DBL_MAX", kMax, 1, -1, 2, kMax, kMax},
      {"2 DBL_MAX - DBL_MAX", kMax, 1, 2, -1, kMax, kMax},
      {"0.5 (2^1023 4) - 2^1023", 0x1p1023, 4, 0.5, -1, 0x1p1023, 0x1p1023},
      {"2^-1076 + 2^-1075 rounds to 2^-1074", kMinSub, 1, 0.25, 0.5, kMinSub, kMinSub},
      {"-(2^-1076 + 2^-1075) rounds to -2^-1074", kMinSub, -1, 0.25, 0.5, -kMinSub,
       -kMinSub},
      {"2^-1076 - 2^-1075 = -2^-1076 rounds to -0", kMinSub, 1, 0.25, -0.5, kMinSub, -0.0},
      {"DBL_MAX + 2^970 (the tie) overflows", kMax, 1, 1, 0x1p-53, 0x1p1023, kInf},
      {"DBL_MAX + 2^970 - 2^917 stays DBL_MAX", kMax, 1, 1, 0x1p-53,
       0x1.fffffffffffffp1022, kMax},
      {"-DBL_MAX - 2^970 overflows to -Inf", kMax, -1, 1, -0x1p-53, 0x1p1023, -kInf},
  };
  for (const Stated &s : cases)
    for (Api api : kApis)
      for (bool trans : {false, true}) {
        const Gemv g = make_gemv(
            api, trans, trans ? 2 : 1, trans ? 1 : 2, int(rng_() % 2), pick_inc(),
            pick_inc(), s.alpha, s.beta,
            [&](int i, int j) { return (trans ? i : j) == 0 ? s.a : 0.0; },
            [&](int i) { return i == 0 ? s.xv : 3.0; }, [&](int) { return s.y; });
        const std::vector<double> oracle = oracle_gemv(g);
        ASSERT_TRUE(same(oracle[0], s.want))
            << s.what << ": the oracle says " << hex(oracle[0]) << ", stated " << hex(s.want);
        const std::string msg = check_gemv(g, oracle);
        EXPECT_TRUE(msg.empty()) << s.what << ": " << msg;
      }
  // DBL_MAX + 2^970 -+ 2^-1074 (three products): just below the threshold
  // stays DBL_MAX, just above is +Inf.
  for (double tail : {-kMinSub, kMinSub})
    for (Api api : kApis) {
      const Gemv g = make_gemv(
          api, false, 1, 3, 0, pick_inc(), pick_inc(), 1.0, 0.0,
          [&](int, int j) { return j == 0 ? kMax : j == 1 ? 0x1p970 : tail; },
          [](int) { return 1.0; }, [](int) { return 0.0; });
      const double want = tail < 0 ? kMax : kInf;
      const std::vector<double> oracle = oracle_gemv(g);
      ASSERT_TRUE(same(oracle[0], want)) << "oracle " << hex(oracle[0]);
      const std::string msg = check_gemv(g, oracle);
      EXPECT_TRUE(msg.empty()) << msg;
    }
}

// Signed zeros of DGEMV under the library's documented contract (xngemm.h,
// xnExdgemm: "An exact zero is -0 only if P and Q are both -0 (or P is -0
// and beta == 0)"), which differs from reference DGEMV: dgemv.f sets
// Y(I) = ZERO for beta == 0 and then adds, so it never returns -0 there,
// and it skips columns with X(JX) == 0 (no NaN from 0 * Inf). These checks
// pin the documented behaviour (reported as deviations, not failures).
TEST_F(ExblasEdges, GemvSignedZerosFollowTheDocumentedContract) {
  SCOPED_TRACE(seed_text());
  struct Stated {
    const char *what;
    std::vector<double> row, x;
    double alpha, beta, y, want;
  };
  const std::vector<Stated> cases = {
      {"cancelling row, alpha 1, beta 0: +0", {1, 1}, {1, -1}, 1, 0, kNaN, 0.0},
      {"cancelling row, alpha -1, beta 0: P = -0 (reference: +0)", {1, 1}, {1, -1}, -1, 0,
       kNaN, -0.0},
      {"all products -0, beta 0: -0 (reference: +0)", {-0.0, 0.0}, {1, -1}, 1, 0, kNaN, -0.0},
      {"all products -0, beta 1, y -0: -0", {-0.0}, {1}, 1, 1, -0.0, -0.0},
      {"all products -0, beta 1, y +0: +0", {-0.0}, {1}, 1, 1, 0.0, 0.0},
      {"cancelling row, beta 1, y -0: +0", {2, 2}, {1, -1}, 1, 1, -0.0, 0.0},
      {"P cancels Q exactly: +0", {2}, {3}, -1, 3, 2, 0.0},
      {"-P cancels Q exactly: +0", {2}, {-3}, 1, 3, 2, 0.0},
      {"Inf * 0 is NaN (reference DGEMV N skips x = 0)", {kInf, 1}, {0.0, 2}, 1, 0, 0, kNaN},
  };
  for (const Stated &s : cases)
    for (Api api : kApis) {
      const int len = int(s.row.size());
      const Gemv g = make_gemv(api, false, 1, len, int(rng_() % 2), pick_inc(), pick_inc(),
                               s.alpha, s.beta,
                               [&](int, int j) { return s.row[std::size_t(j)]; },
                               [&](int i) { return s.x[std::size_t(i)]; },
                               [&](int) { return s.y; });
      const std::vector<double> oracle = oracle_gemv(g);
      ASSERT_TRUE(same(oracle[0], s.want)) << s.what << ": oracle " << hex(oracle[0]);
      const std::string msg = check_gemv(g, oracle);
      EXPECT_TRUE(msg.empty()) << s.what << ": " << msg;
    }
}

// ------------------------------------------------------------------- DDOT

double call_dot(bool fortran, int n, const double *x, int incx, const double *y, int incy) {
  return fortran ? exddot_(&n, x, &incx, y, &incy) : cblas_exddot(n, x, incx, y, incy);
}

double oracle_dot(const std::vector<double> &xs, const std::vector<double> &ys) {
  if (xs.empty()) return 0.0;
  return xn_test::exact_gemm_entry_ieee(false, false, std::int64_t(xs.size()), 1.0,
                                        xs.data(), 1, ys.data(), std::int64_t(ys.size()), 0.0,
                                        nullptr, 1, 0, 0);
}

// DDOT has no argument checks (ddot.f: "IF (N.LE.0) RETURN" with DDOT = 0):
// n <= 0 is +0 exactly and reads nothing, whatever the increments; nothing
// goes to XERBLA; the thread's status is 0.
TEST_F(ExblasEdges, DotNonPositiveLengthIsPlusZeroWithoutReading) {
  for (int n : {0, -1, INT_MIN})
    for (int inc : {1, 0, -1, INT_MIN, INT_MAX})
      for (bool fortran : {true, false}) {
        g_xerbla = XerblaLog{};
        const int incy = inc == INT_MIN ? INT_MAX : -inc;
        const double r = call_dot(fortran, n, nullptr, inc, nullptr, incy);
        EXPECT_EQ(bits(r), bits(0.0)) << "n=" << n << " inc=" << inc << ": " << hex(r);
        EXPECT_EQ(g_xerbla.calls, 0);
        EXPECT_EQ(xnGetLastHostStatus(), 0);
      }
}

// Zero increments: ddot.f reads DX(1) N times (IX stays 1 when INCX = 0), so
// the value is x0 sum(y) or x0 y0 N, rounded once; and n = 1 with any
// increment (even INT_MIN: KX = 1 - 0 * INCX) reads element 0 only.
TEST_F(ExblasEdges, DotZeroAndExtremeIncrements) {
  SCOPED_TRACE(seed_text());
  for (int rep = 0; rep < 40; ++rep) {
    const bool fortran = rep % 2 == 0;
    const int n = 1 + int(rng_() % 50);
    std::vector<double> xs(static_cast<std::size_t>(n)), ys(static_cast<std::size_t>(n));
    const double x0 = ordinary();
    for (double &v : ys) v = ordinary(8);
    // Cancellation: a big pair in y.
    if (n >= 3) {
      ys[0] = 0x1p80 * (1 + u53());
      ys[std::size_t(n - 1)] = -ys[0];
    }
    for (double &v : xs) v = x0;
    const int incy = pick_inc();
    const std::vector<double> ymem = store_vector(ys, incy);
    const std::vector<double> xmem = {x0, kSNaN};
    const double want = oracle_dot(xs, ys);
    const double got = call_dot(fortran, n, xmem.data(), 0, ymem.data(), incy);
    EXPECT_TRUE(same(got, want)) << "incx=0 incy=" << incy << " n=" << n << ": expected "
                                 << hex(want) << " got " << hex(got);
    // Both increments zero: x0 y0 n rounded once.
    const double y0 = ordinary();
    const std::vector<double> both_x(std::size_t(n), x0), both_y(std::size_t(n), y0);
    const double want0 = oracle_dot(both_x, both_y);
    const double got0 = call_dot(!fortran, n, &x0, 0, &y0, 0);
    EXPECT_TRUE(same(got0, want0)) << "incx=incy=0 n=" << n << " x0=" << hex(x0)
                                   << " y0=" << hex(y0) << ": expected " << hex(want0)
                                   << " got " << hex(got0);
  }
  const double a = 3, b = -0.5;
  for (int inc : {INT_MIN, INT_MAX, -1, 0})
    for (bool fortran : {true, false})
      EXPECT_EQ(call_dot(fortran, 1, &a, inc, &b, inc == INT_MIN ? INT_MAX : -inc), -1.5)
          << "n=1 inc=" << inc;
  // Negative increments: x(1) at the far end.
  const std::vector<double> x = {1, 10, 100}, y = {1, 2, 3};
  EXPECT_EQ(call_dot(true, 3, x.data(), -1, y.data(), 1), 100 + 20 + 3.0);
  EXPECT_EQ(call_dot(false, 3, x.data(), 1, y.data(), -1), 3 + 20 + 100.0);
  EXPECT_EQ(call_dot(false, 3, x.data(), -1, y.data(), -1), 1 + 20 + 300.0);
  EXPECT_EQ(call_dot(true, 2, x.data(), -2, y.data(), 2), 100 * 1 + 1 * 3.0);
}

// Signed zeros of DDOT (the 1 x 1 x n product under the library's contract:
// IEEE 754 6.3, a sum is -0 only when every addend is -0): mixed-sign exact
// cancellation gives +0, at every length (the long ones take the chunked,
// multi-threaded path); only all -0 products give -0. (Reference ddot.f
// starts DTEMP = 0.0d0 and would return +0 for all -0 products; the library
// documents the IEEE sign instead: include/xngemm.h, docs/design.md.)
TEST_F(ExblasEdges, DotSignedZerosOfExactZeroSums) {
  SCOPED_TRACE(seed_text());
  for (int n : {2, 3, 64, 1000, 70000, 200001}) {
    // Cancelling pairs +v, -v of random magnitude, shuffled.
    std::vector<double> xs(static_cast<std::size_t>(n)), ys(std::size_t(n), 1.0);
    for (int i = 0; i + 1 < n; i += 2) {
      xs[std::size_t(i)] = ordinary(20);
      xs[std::size_t(i + 1)] = -xs[std::size_t(i)];
    }
    if (n % 2) xs[std::size_t(n - 1)] = rng_() % 2 ? 0.0 : -0.0;
    std::shuffle(xs.begin(), xs.end(), rng_);
    for (bool fortran : {true, false}) {
      const int inc = pick_inc();
      const std::vector<double> xm = store_vector(xs, inc);
      const double got = call_dot(fortran, n, xm.data(), inc, ys.data(), 1);
      EXPECT_EQ(bits(got), bits(0.0)) << "cancelling n=" << n << " incx=" << inc << ": "
                                      << hex(got);
    }
    // All products -0 (a zero times a value of the other sign): -0.
    std::vector<double> zx(static_cast<std::size_t>(n)), zy(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const double v = std::fabs(ordinary()) + 0.5;
      switch (rng_() % 4) {
        case 0:  zx[std::size_t(i)] = -0.0; zy[std::size_t(i)] = v;    break;
        case 1:  zx[std::size_t(i)] = 0.0;  zy[std::size_t(i)] = -v;   break;
        case 2:  zx[std::size_t(i)] = v;    zy[std::size_t(i)] = -0.0; break;
        default: zx[std::size_t(i)] = 0.0;  zy[std::size_t(i)] = -0.0; break;
      }
    }
    for (bool fortran : {true, false}) {
      const double got = call_dot(fortran, n, zx.data(), 1, zy.data(), 1);
      EXPECT_EQ(bits(got), bits(-0.0)) << "all products -0, n=" << n << ": " << hex(got);
    }
    // One +0 product among -0 ones: +0.
    const std::size_t k = std::size_t(rng_() % std::uint64_t(n));
    zx[k] = 0.0;
    zy[k] = 5.0;
    for (bool fortran : {true, false}) {
      const double got = call_dot(fortran, n, zx.data(), -1, zy.data(), -1);
      EXPECT_EQ(bits(got), bits(0.0)) << "one +0 product, n=" << n << ": " << hex(got);
    }
  }
}

// Overflow at the exact value: products of exactly 2^1000 (the largest the
// one-pass bound covers) repeated by a zero increment. 2^1000 (2^24 - 1) is
// a double below DBL_MAX and must come out exactly; 2^1000 2^24 = 2^1024 is
// beyond the threshold 2^1024 - 2^970 and must be +-Inf. The partial sums
// overflow on the way there, which the certified path must not take for a
// value.
TEST_F(ExblasEdges, DotOverflowThresholdWithRepeatedElements) {
  const double big = 0x1p1000, one = 1, minus = -1;
  const int below = (1 << 24) - 1, at = 1 << 24;
  EXPECT_EQ(call_dot(true, below, &big, 0, &one, 0), std::ldexp(double(below), 1000));
  EXPECT_EQ(call_dot(false, below, &big, 0, &minus, 0), -std::ldexp(double(below), 1000));
  EXPECT_EQ(call_dot(true, at, &big, 0, &one, 0), kInf);
  EXPECT_EQ(call_dot(false, at, &big, 0, &minus, 0), -kInf);
  // DBL_MAX + 2^970 -+ 2^-1074: either side of the threshold.
  const std::vector<double> x = {kMax, 0x1p970, kMinSub}, ypos = {1, 1, 1},
                            yneg = {1, 1, -1};
  EXPECT_EQ(call_dot(true, 3, x.data(), 1, ypos.data(), 1), kInf);
  EXPECT_EQ(call_dot(false, 3, x.data(), -1, yneg.data(), -1), kMax);
  // Products beyond 2^1000 that cancel back below: 2^1023 (2 + 2 - 3).
  const std::vector<double> h = {0x1p1023, 0x1p1023, 0x1p1023}, c = {2, 2, -3};
  EXPECT_EQ(call_dot(true, 3, h.data(), 1, c.data(), 1), 0x1p1023);
}

// Subnormal results rounded once at 2^-1074 (design.md's example:
// 2^-1022 - 2^-1075 - 2^-1130 is 2^-1022 - 2^-1074; rounded to 53 bits
// first it would tie up to 2^-1022), and values around 2^-1075.
TEST_F(ExblasEdges, DotSubnormalResultsRoundedOnce) {
  struct Stated {
    const char *what;
    std::vector<double> x, y;
    double want;
  };
  const std::vector<Stated> cases = {
      {"2^-1022 - 2^-1075 - 2^-1130", {1, 0x1p-600, 0x1p-600},
       {0x1p-1022, -0x1p-475, -0x1p-530}, 0x1p-1022 - kMinSub},
      {"2^-1075 + 2^-1200 rounds up to 2^-1074", {0x1p-600, 0x1p-600}, {0x1p-475, 0x1p-600},
       kMinSub},
      {"2^-1075 - 2^-1200 rounds to +0", {0x1p-600, -0x1p-600}, {0x1p-475, 0x1p-600}, 0.0},
      {"-2^-1075 + 2^-1200 rounds to -0", {-0x1p-600, 0x1p-600}, {0x1p-475, 0x1p-600}, -0.0},
      {"3 2^-1076 rounds to 2^-1074", {0x1p-600, 0x1p-600}, {0x1p-476, 0x1p-475}, kMinSub},
      {"2^-1074 - 2^-1076 - 2^-1077 - 2^-1200 rounds to 2^-1074",
       {1, -0x1p-600, -0x1p-600, -0x1p-600},
       {kMinSub, 0x1p-476, 0x1p-477, 0x1p-600},
       kMinSub},
      {"DBL_MIN - 2^-1074 from a normal and a subnormal", {0x1p-1021, -1}, {0.5, kMinSub},
       0x1p-1022 - kMinSub},
  };
  for (const Stated &s : cases) {
    const double oracle = oracle_dot(s.x, s.y);
    ASSERT_TRUE(same(oracle, s.want))
        << s.what << ": the oracle says " << hex(oracle) << ", stated " << hex(s.want);
    const int n = int(s.x.size());
    for (bool fortran : {true, false}) {
      const double got = call_dot(fortran, n, s.x.data(), 1, s.y.data(), 1);
      EXPECT_EQ(bits(got), bits(s.want)) << s.what << ": got " << hex(got);
    }
  }
}

// Long dot products (the terms cut into chunks merged across threads) over
// the whole exponent range: subnormal and tiny products (outside the range
// where TwoProd is exact), products beyond 2^1000, exact cancellation of
// huge pairs, at negative and zero increments, against the oracle; and a
// DGEMV whose few outputs have as many terms (op = T, the chunked path too).
TEST_F(ExblasEdges, LongSumsOverTheWholeRangeMatchTheOracle) {
  SCOPED_TRACE(seed_text());
  const auto value = [&](int mix) {
    switch (rng_() % 8) {
      case 0:
        return std::ldexp(u53() - 0.5, -1000 - int(rng_() % 74));  // tiny, subnormal
      case 1:
        return mix ? std::ldexp(u53() - 0.5, 990 + int(rng_() % 30)) : ordinary();
      default:
        return ordinary(3);
    }
  };
  for (int n : {40000, 70001})
    for (int mix : {0, 1}) {
      std::vector<double> xs(static_cast<std::size_t>(n)), ys(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) {
        xs[std::size_t(i)] = value(mix);
        ys[std::size_t(i)] = mix ? std::ldexp(1.0, int(rng_() % 5) - 2) : value(0);
      }
      // Huge cancelling pairs (x_i y_i = -x_j y_j exactly).
      for (int q = 0; q < 50; ++q) {
        const std::size_t i = std::size_t(rng_() % std::uint64_t(n)),
                          j = std::size_t(rng_() % std::uint64_t(n));
        if (i == j) continue;
        ys[i] = 1;
        ys[j] = -2;
        xs[i] = std::ldexp(1 + u53(), 900);
        xs[j] = xs[i] / 2;
      }
      const double want = oracle_dot(xs, ys);
      for (bool fortran : {true, false}) {
        const int incx = pick_inc(), incy = pick_inc();
        const std::vector<double> xm = store_vector(xs, incx), ym = store_vector(ys, incy);
        const double got = call_dot(fortran, n, xm.data(), incx, ym.data(), incy);
        EXPECT_TRUE(same(got, want)) << "n=" << n << " mix=" << mix << " incx=" << incx
                                     << " incy=" << incy << ": expected " << hex(want)
                                     << " got " << hex(got);
      }
    }
  for (Api api : kApis) {
    const int rows = 3, len = 40000;
    const Gemv g = make_gemv(api, true, len, rows, int(rng_() % 2), pick_inc(), pick_inc(),
                             rng_() % 2 ? 1.0 : -0.75, rng_() % 2 ? 0.0 : 0.5,
                             [&](int, int) { return value(1); },
                             [&](int) { return std::ldexp(1.0, int(rng_() % 5) - 2); },
                             [&](int) { return value(0); });
    const std::string msg = check_gemv(g, oracle_gemv(g));
    EXPECT_TRUE(msg.empty()) << msg;
  }
}

// ------------------------------------------------------------------ DGEMM

// Reference DGEMM, dgemm.f: "IF ((M.EQ.0) .OR. (N.EQ.0) .OR. (((ALPHA.EQ.ZERO)
// .OR. (K.EQ.0)) .AND. (BETA.EQ.ONE))) RETURN": with beta = 1 and alpha = 0
// or k = 0, C is not touched at all, so a signalling NaN in C stays
// signalling (C * 1 would quiet it).
TEST_F(ExblasEdges, GemmQuickReturnLeavesCBitwise) {
  SCOPED_TRACE(seed_text());
  const std::vector<double> nan(256, kSNaN);
  for (int api = 0; api < 3; ++api)
    for (int shape = 0; shape < 3; ++shape) {
      const int m = 1 + int(rng_() % 6), n = 1 + int(rng_() % 6);
      const int k = shape == 0 ? 0 : 1 + int(rng_() % 6);
      const double alpha = shape == 0 ? 1.0 : shape == 1 ? 0.0 : -0.0;
      const double beta = 1.0;
      const bool ta = rng_() % 2, tb = rng_() % 2;
      const bool row = api == 2;
      const int ldc = std::max(1, row ? n : m) + int(rng_() % 2);
      std::vector<double> C = poisoned(std::size_t(ldc) * std::size_t(row ? m : n));
      const std::vector<double> before = C;
      const int lda = 8, ldb = 8;  // >= every row count here
      g_xerbla = XerblaLog{};
      if (api == 0) {
        exdgemm_(ta ? "T" : "N", tb ? "T" : "N", &m, &n, &k, &alpha, nan.data(), &lda,
                 nan.data(), &ldb, &beta, C.data(), &ldc);
      } else {
        cblas_exdgemm(row ? XnRowMajor : XnColMajor, ta ? XnTrans : XnNoTrans,
                      tb ? XnTrans : XnNoTrans, m, n, k, alpha, nan.data(), lda, nan.data(),
                      ldb, beta, C.data(), ldc);
      }
      EXPECT_EQ(g_xerbla.calls, 0);
      std::string first;
      for (std::size_t i = 0; i < C.size() && first.empty(); ++i)
        if (bits(C[i]) != bits(before[i]))
          first = "C[" + std::to_string(i) + "] " + hex(before[i]) + " (bits " +
                  std::to_string(bits(before[i])) + ") became " + hex(C[i]) + " (bits " +
                  std::to_string(bits(C[i])) + ")";
      EXPECT_TRUE(first.empty())
          << (api == 0 ? "exdgemm_" : row ? "cblas_exdgemm(row)" : "cblas_exdgemm(col)")
          << " m=" << m << " n=" << n << " k=" << k << " alpha=" << hex(alpha)
          << " beta=1: reference DGEMM returns without touching C, but " << first;
    }
}

// beta == 0 never reads C: with k = 0 or alpha = 0, C := ZERO (dgemm.f:
// "IF (BETA.EQ.ZERO) ... C(I,J) = ZERO"), +0 bitwise over NaN and -0; with
// beta = -1 and k = 0, C := beta C (one IEEE product: -0 becomes +0).
TEST_F(ExblasEdges, GemmScalingOnlyCalls) {
  SCOPED_TRACE(seed_text());
  const std::vector<double> nan(256, kNaN);
  for (int api = 0; api < 3; ++api)
    for (int shape = 0; shape < 4; ++shape) {
      const int m = 1 + int(rng_() % 6), n = 1 + int(rng_() % 6);
      const int k = shape % 2 == 0 ? 0 : 3;
      const double alpha = shape % 2 == 0 ? 2.0 : 0.0;
      const double beta = shape < 2 ? (rng_() % 2 ? 0.0 : -0.0) : -1.0;
      const bool row = api == 2;
      const int ldc = std::max(1, row ? n : m);
      std::vector<double> C(std::size_t(ldc) * std::size_t(row ? m : n));
      for (std::size_t i = 0; i < C.size(); ++i)
        C[i] = i % 3 == 0 ? -0.0 : i % 3 == 1 ? 0x1.8p-3 * double(i) : kNaN;
      const std::vector<double> before = C;
      const int ld8 = 8;
      if (api == 0) {
        exdgemm_("N", "T", &m, &n, &k, &alpha, nan.data(), &ld8, nan.data(), &ld8, &beta,
                 C.data(), &ldc);
      } else {
        cblas_exdgemm(row ? XnRowMajor : XnColMajor, XnNoTrans, XnTrans, m, n, k, alpha,
                      nan.data(), ld8, nan.data(), ld8, beta, C.data(), ldc);
      }
      for (std::size_t i = 0; i < C.size(); ++i) {
        const double want = beta == 0.0 ? 0.0 : beta * before[i];
        EXPECT_TRUE(same(C[i], want))
            << "api " << api << " k=" << k << " alpha=" << alpha << " beta=" << hex(beta)
            << " C[" << i << "]: expected " << hex(want) << " got " << hex(C[i]);
      }
    }
}

// exdgemm_ / cblas_exdgemm report bad arguments as reference DGEMM / CBLAS
// cblas_dgemm (support/bad_gemm_args.h, the cases the other host GEMMs are
// checked with), under the names the header documents, C untouched.
TEST_F(ExblasEdges, GemmBadArgumentsThroughXerbla) {
  const std::vector<double> A(64, 1.0), B(64, 1.0);
  const std::vector<double> pattern = xn_test::c_pattern<double>();
  const double one = 1, zero = 0;
  for (const xn_test::BadF77 &b : xn_test::kBadF77) {
    std::vector<double> C = pattern;
    g_xerbla = XerblaLog{};
    exdgemm_(&b.ta, &b.tb, &b.m, &b.n, &b.k, &one, A.data(), &b.lda, B.data(), &b.ldb,
             &zero, C.data(), &b.ldc);
    SCOPED_TRACE(std::string("exdgemm_ ta=") + b.ta + " tb=" + b.tb +
                 " m=" + std::to_string(b.m) + " n=" + std::to_string(b.n) +
                 " k=" + std::to_string(b.k) + " lda=" + std::to_string(b.lda) +
                 " ldb=" + std::to_string(b.ldb) + " ldc=" + std::to_string(b.ldc));
    expect_reported("EXDGEMM", b.info, C, pattern);
  }
  for (const xn_test::BadCblas &b : xn_test::kBadCblas) {
    std::vector<double> C = pattern;
    g_xerbla = XerblaLog{};
    cblas_exdgemm(b.layout, b.ta, b.tb, b.m, b.n, b.k, 1.0, A.data(), b.lda, B.data(), b.ldb,
                  0.0, C.data(), b.ldc);
    SCOPED_TRACE("cblas_exdgemm layout=" + std::to_string(b.layout) +
                 " ta=" + std::to_string(b.ta) + " tb=" + std::to_string(b.tb) +
                 " m=" + std::to_string(b.m) + " n=" + std::to_string(b.n) +
                 " k=" + std::to_string(b.k) + " lda=" + std::to_string(b.lda) +
                 " ldb=" + std::to_string(b.ldb) + " ldc=" + std::to_string(b.ldc));
    expect_reported("cblas_exdgemm", b.pos, C, pattern);
  }
  // Checked before the quick returns: a bad ldc with m = 0 is still INFO 13
  // (dgemm.f tests LDC.LT.MAX(1,M) before "Quick return if possible").
  std::vector<double> C = pattern;
  const int m0 = 0, n = 3, k = 0, lda = 1, ldb = 1, ldc0 = 0;
  g_xerbla = XerblaLog{};
  exdgemm_("N", "N", &m0, &n, &k, &one, A.data(), &lda, B.data(), &ldb, &one, C.data(),
           &ldc0);
  EXPECT_EQ(g_xerbla.calls, 1);
  EXPECT_EQ(g_xerbla.info, 13);
  EXPECT_TRUE(same_bytes(C, pattern));
}

}  // namespace
