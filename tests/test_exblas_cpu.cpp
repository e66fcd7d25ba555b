// test_exblas_cpu.cpp - the correctly rounded DGEMV and DDOT from the host
// (exdgemv_, cblas_exdgemv in both layouts, exddot_, cblas_exddot) on the
// CPU, bit for bit against the IEEE oracle (support/ieee_oracle.h): DGEMV is
// the m x 1 product alpha op(A) x + beta y and DDOT the 1 x 1 x n product
// x^T y with alpha = 1, beta = 0, on contiguous copies of the vectors this
// file makes itself from BLAS increments (element i of a vector of length
// len with increment inc < 0 is at (len - 1 - i) (-inc)). Equality is of
// bit patterns (signed zeros included; a NaN matches any NaN). Every call
// also leaves A, x and the slots of y between (and around) its elements
// bitwise as they were, and reports nothing through XERBLA. Inputs are fresh per run (XN_TEST_SEED replays).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/exdgemm_inputs.h"
#include "support/host_state.h"
#include "support/ieee_oracle.h"
#include "support/test_support.h"
#include "support/xerbla_log.h"
#include "xngemm.h"

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMaxDouble = std::numeric_limits<double>::max();
constexpr double kMinSub = 0x1p-1074;

// The host entry points read XN_DEVICE on every call: the CPU from the
// first call on, whatever the machine has.
const bool kCpuForced = [] { return setenv("XN_DEVICE", "cpu", 1) == 0; }();

std::uint64_t bits(double x) { return xn_test::ex_bits(x); }

constexpr auto &same = xn_test::ex_same_bits;

constexpr auto &hex = xn_test::ex_hex;

// ------------------------------------------------------------ BLAS vectors

// Where element i of a BLAS vector (length len, increment inc) lies from the
// pointer passed: negative increments start at the far end, 0 repeats the
// first element.
std::int64_t element_offset(std::int64_t i, std::int64_t len, int inc) {
  return inc >= 0 ? i * inc : (len - 1 - i) * std::int64_t(-inc);
}

// A distinctive value for a slot that is no element of a vector: NaNs with
// the slot in their payload, signed zeros, huge and subnormal values.
double poison(std::size_t slot) {
  switch (slot % 4) {
    case 0: {
      const std::uint64_t b = 0x7ff80000bad00000ull | slot;
      double x;
      std::memcpy(&x, &b, 8);
      return x;
    }
    case 1:
      return -0.0;
    case 2:
      return 0x1.5555555555555p+1000;
    default:
      return -0x0.0000000abcdefp-1022;
  }
}

// A BLAS vector in memory: its elements at their increments, the slots
// between them and kGuard slots on either side poisoned.
struct StridedVector {
  static constexpr std::int64_t kGuard = 2;
  int len = 0, inc = 1;
  std::vector<double> mem;
  std::vector<bool> is_element;
  double *data() { return mem.data() + kGuard; }
  const double *data() const { return mem.data() + kGuard; }
};

// The vector whose element i is value(i); with inc == 0 only value(0) is
// stored (BLAS reads the first element len times).
StridedVector make_strided(int len, int inc, const std::function<double(int)> &value) {
  StridedVector v;
  v.len = len;
  v.inc = inc;
  const std::int64_t span = len <= 0 ? 0 : 1 + std::int64_t(len - 1) * std::abs(inc);
  v.mem.resize(std::size_t(span + 2 * StridedVector::kGuard));
  v.is_element.assign(v.mem.size(), false);
  for (std::size_t s = 0; s < v.mem.size(); ++s) v.mem[s] = poison(s);
  for (int i = 0; i < len; ++i) {
    const std::size_t s = std::size_t(StridedVector::kGuard + element_offset(i, len, inc));
    if (v.is_element[s]) continue;  // inc == 0: the first element only
    v.mem[s] = value(i);
    v.is_element[s] = true;
  }
  return v;
}

StridedVector strided_from(const std::vector<double> &logical, int inc) {
  return make_strided(int(logical.size()), inc,
                      [&](int i) { return logical[std::size_t(i)]; });
}

// The vector's elements in logical order, contiguous.
std::vector<double> gather(const StridedVector &v) {
  std::vector<double> out(std::size_t(std::max(0, v.len)));
  for (int i = 0; i < v.len; ++i)
    out[std::size_t(i)] = v.data()[element_offset(i, v.len, v.inc)];
  return out;
}

// "" or where a slot that is no element changed (bitwise).
std::string gap_change(const StridedVector &before, const StridedVector &after) {
  for (std::size_t s = 0; s < before.mem.size(); ++s)
    if (!before.is_element[s] && bits(before.mem[s]) != bits(after.mem[s]))
      return "slot " + std::to_string(std::int64_t(s) - StridedVector::kGuard) +
             " (no element of y) changed from " + hex(before.mem[s]) + " to " +
             hex(after.mem[s]);
  return "";
}

bool same_bytes(const std::vector<double> &a, const std::vector<double> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 8) == 0;
}

// ------------------------------------------------------------ input values

// (u - 0.5) exp(phi randn), u with 53 random bits (Mukunoki et al., PMAA'18,
// §5): phi = 4 spreads the exponents over about +-40 binades.
double phi_value(double phi, std::mt19937_64 &rng) {
  std::normal_distribution<double> randn(0.0, 1.0);
  return (xn_test::u53(rng) - 0.5) * std::exp(phi * randn(rng));
}

bool coin(std::mt19937_64 &rng) { return rng() & 1; }
double signed_(double x, std::mt19937_64 &rng) { return coin(rng) ? -x : x; }

// A value of IEEE's special classes or at the ends of the range, or (one
// time in six) an ordinary one.
double special_value(std::mt19937_64 &rng) {
  switch (rng() % 12) {
    case 0:
      return 0.0;
    case 1:
      return -0.0;
    case 2:
      return signed_(kInf, rng);
    case 3:
      return kNaN;
    case 4:
      return signed_(kMinSub, rng);
    case 5:
      return std::ldexp(xn_test::u53(rng) - 0.5, -1022 - int(rng() % 52));
    case 6:
      return std::ldexp(xn_test::u53(rng) - 0.5, 1000 + int(rng() % 24));
    case 7:
      return signed_(kMaxDouble, rng);
    case 8:
      return signed_(0x1p-1022, rng);
    case 9:
      return std::ldexp(1.0 + xn_test::u53(rng), -600 + int(rng() % 1200));
    default:
      return phi_value(4, rng);
  }
}

template <class T>
const T &pick(const std::vector<T> &v, std::mt19937_64 &rng) {
  return v[std::size_t(rng() % v.size())];
}

const std::vector<double> kScalars = {0.0, 1.0, -1.0, 0.75, 3e-5};
const std::vector<double> kNonzeroScalars = {1.0, -1.0, 0.75, 3e-5};
const std::vector<std::pair<int, int>> kGemvIncs = {
    {1, 1}, {2, 1}, {1, 3}, {-1, 1}, {1, -1}, {-2, -1}, {3, -2}, {-1, 2}, {-2, -3}, {-1, -1}};

// ------------------------------------------------------------ DGEMV

enum class Api { Fortran, CblasCol, CblasRow };

const char *api_name(Api a) {
  switch (a) {
    case Api::Fortran:
      return "exdgemv_";
    case Api::CblasCol:
      return "cblas_exdgemv col-major";
    case Api::CblasRow:
      return "cblas_exdgemv row-major";
  }
  return "?";
}

const Api kApis[] = {Api::Fortran, Api::CblasCol, Api::CblasRow};

// One call: A (m x n) stored as the API takes it, padding NaN (never to be
// read), x and y at their increments.
struct GemvCase {
  Api api = Api::Fortran;
  char trans = 'N';  // 'N', 'T', 'C' (any case for the Fortran entry)
  int m = 0, n = 0, lda = 1;
  double alpha = 1, beta = 0;
  std::vector<double> A;
  StridedVector x, y;  // y: as on entry

  bool transposed() const { return !(trans == 'N' || trans == 'n'); }
  int len_x() const { return transposed() ? m : n; }
  int len_y() const { return transposed() ? n : m; }
  // A(i, j) of the m x n matrix, by the layout's meaning.
  double a(int i, int j) const {
    return api == Api::CblasRow ? A[std::size_t(std::int64_t(i) * lda + j)]
                                : A[std::size_t(i + std::int64_t(j) * lda)];
  }
  double op_a(int r, int c) const { return transposed() ? a(c, r) : a(r, c); }
  std::string describe() const {
    return std::string(api_name(api)) + " trans=" + trans + " m=" + std::to_string(m) +
           " n=" + std::to_string(n) + " lda=" + std::to_string(lda) +
           " incx=" + std::to_string(x.inc) + " incy=" + std::to_string(y.inc) +
           " alpha=" + hex(alpha) + " beta=" + hex(beta);
  }
};

using ValueFn = std::function<double(int, int)>;  // (row, column) or (i, 0)

// trans is upper case; the Fortran entry gets it in either case at random.
GemvCase make_gemv(Api api, char trans, int m, int n, int pad, int incx, int incy,
                   double alpha, double beta, const ValueFn &a_value,
                   const ValueFn &x_value, const ValueFn &y_value, std::mt19937_64 &rng) {
  GemvCase c;
  c.api = api;
  c.trans = api == Api::Fortran && coin(rng) ? char(std::tolower(trans)) : trans;
  c.m = m;
  c.n = n;
  c.alpha = alpha;
  c.beta = beta;
  const bool by_rows = api == Api::CblasRow;
  c.lda = std::max(1, by_rows ? n : m) + pad;
  c.A.assign(std::size_t(c.lda) * std::size_t(std::max(1, by_rows ? m : n)), kNaN);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      c.A[std::size_t(by_rows ? std::int64_t(i) * c.lda + j
                              : i + std::int64_t(j) * c.lda)] = a_value(i, j);
  c.x = make_strided(c.len_x(), incx, [&](int i) { return x_value(i, 0); });
  c.y = make_strided(c.len_y(), incy, [&](int i) { return y_value(i, 0); });
  return c;
}

void call_gemv(const GemvCase &c, StridedVector &y) {
  if (c.api == Api::Fortran) {
    exdgemv_(&c.trans, &c.m, &c.n, &c.alpha, c.A.data(), &c.lda, c.x.data(), &c.x.inc,
             &c.beta, y.data(), &y.inc);
    return;
  }
  const int t = c.trans == 'N' ? XnNoTrans : c.trans == 'T' ? XnTrans : XnConjTrans;
  cblas_exdgemv(c.api == Api::CblasRow ? XnRowMajor : XnColMajor, t, c.m, c.n, c.alpha,
                c.A.data(), c.lda, c.x.data(), c.x.inc, c.beta, y.data(), y.inc);
}

// op(A) as a dense len_y x len_x column-major matrix, from the stored A by
// the meaning of layout and trans.
std::vector<double> dense_op_a(const GemvCase &c) {
  const int ly = c.len_y(), lx = c.len_x();
  std::vector<double> op(std::size_t(ly) * std::size_t(lx));
  for (int col = 0; col < lx; ++col)
    for (int r = 0; r < ly; ++r) op[std::size_t(r + std::int64_t(col) * ly)] = c.op_a(r, col);
  return op;
}

// The contract's y: entry (i, 1) of alpha op(A) x + beta y (y not passed at
// all when beta == 0); m = 0 or n = 0: y as it was.
std::vector<double> gemv_expected(const GemvCase &c) {
  const std::vector<double> y0 = gather(c.y);
  if (c.m == 0 || c.n == 0) return y0;
  const int ly = c.len_y(), lx = c.len_x();
  const std::vector<double> op = dense_op_a(c), xs = gather(c.x);
  std::vector<double> out;
  xn_test::exact_gemm_ieee(false, false, ly, 1, lx, c.alpha, op.data(), ly, xs.data(), lx,
                           c.beta, c.beta == 0.0 ? nullptr : y0.data(), ly, out);
  return out;
}

// y_i by the naive loop in double (for showing that a case needs more).
double naive_entry(const GemvCase &c, int i) {
  const std::vector<double> xs = gather(c.x);
  double s = 0;
  for (int p = 0; p < c.len_x(); ++p) s += c.op_a(i, p) * xs[std::size_t(p)];
  return c.beta == 0.0 ? c.alpha * s : c.alpha * s + c.beta * gather(c.y)[std::size_t(i)];
}

std::string entry_inputs(const GemvCase &c, int i) {
  std::string s = "y0=" + hex(gather(c.y)[std::size_t(i)]) + " row of op(A) times x:";
  const std::vector<double> xs = gather(c.x);
  const int shown = std::min(c.len_x(), 8);
  for (int p = 0; p < shown; ++p)
    s += " " + hex(c.op_a(i, p)) + "*" + hex(xs[std::size_t(p)]);
  if (c.len_x() > shown) s += " ... (" + std::to_string(c.len_x() - shown) + " more)";
  return s;
}

// Runs the case; "" or what is wrong (the first wrong entry, in %a).
// `want` may be given (else the oracle's); `got_out` receives y's elements.
std::string check_gemv(const GemvCase &c, const std::vector<double> *want_given = nullptr,
                       std::vector<double> *got_out = nullptr) {
  const std::vector<double> A0 = c.A, x0 = c.x.mem;
  StridedVector y = c.y;
  xn_test::g_xerbla = xn_test::XerblaLog{};
  call_gemv(c, y);
  if (xn_test::g_xerbla.calls != 0)
    return c.describe() + ": rejected by xerbla as " + xn_test::g_xerbla.name + " " +
           std::to_string(xn_test::g_xerbla.info);
  const std::vector<double> want = want_given ? *want_given : gemv_expected(c);
  const std::vector<double> got = gather(y);
  if (got_out) *got_out = got;
  for (int i = 0; i < c.len_y(); ++i)
    if (!same(got[std::size_t(i)], want[std::size_t(i)]))
      return c.describe() + "\n  y[" + std::to_string(i) + "]: expected " +
             hex(want[std::size_t(i)]) + " got " + hex(got[std::size_t(i)]) + "\n  " +
             entry_inputs(c, i);
  const std::string gap = gap_change(c.y, y);
  if (!gap.empty()) return c.describe() + ": " + gap;
  if (!same_bytes(A0, c.A) || !same_bytes(x0, c.x.mem)) return c.describe() + ": A or x written";
  return "";
}

class ExblasCpu : public ::testing::Test {
 protected:
  ExblasCpu() : seed_(xn_test::fresh_seed()), rng_(seed_) {}
  void SetUp() override {
    ASSERT_TRUE(kCpuForced);
    RecordProperty("seed", std::to_string(seed_));
  }
  // Engine for the t-th call: automatic, FP64 slices, modular by turns (all
  // give the same bits).
  void set_engine(int t) {
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_EXDGEMM_ENGINE, std::int64_t(t % 3)),
              CUBLAS_STATUS_SUCCESS);
  }
  std::string seed_text() const { return xn_test::describe_seed(seed_); }

  const xn_test::HostStateGuard guard_{"cpu"};  // options and XN_DEVICE restored
  const std::uint64_t seed_;
  std::mt19937_64 rng_;
};

// Every shape with every transpose, API and exponent spread; increments,
// leading-dimension slack and scalars drawn per call.
TEST_F(ExblasCpu, GemvShapesTransposesIncrements) {
  SCOPED_TRACE(seed_text());
  const std::pair<int, int> shapes[] = {{1, 1},  {1, 2},  {2, 1},   {2, 7},   {7, 2},
                                        {7, 7},  {1, 31}, {31, 1},  {7, 31},  {31, 7},
                                        {31, 31}, {2, 97}, {97, 2}, {97, 31}, {31, 97},
                                        {257, 7}, {7, 257}, {97, 97}, {257, 257}};
  int t = 0;
  for (const auto &[m, n] : shapes)
    for (char trans : {'N', 'T', 'C'})
      for (Api api : kApis)
        for (double phi : {0.0, 4.0}) {
          set_engine(t++);
          const auto [incx, incy] = pick(kGemvIncs, rng_);
          const int pad = int(rng_() % 4);
          const auto value = [&](int, int) { return phi_value(phi, rng_); };
          const GemvCase c = make_gemv(api, trans, m, n, pad, incx, incy,
                                       pick(kNonzeroScalars, rng_), pick(kScalars, rng_),
                                       value, value, value, rng_);
          const std::string msg = check_gemv(c);
          ASSERT_TRUE(msg.empty()) << "phi=" << phi << " " << msg;
        }
  EXPECT_EQ(t, 19 * 3 * 3 * 2);
}

// Few outputs of many terms: the terms are cut into chunks whose parts
// merge in order (cpu_exact_dots), on several threads.
TEST_F(ExblasCpu, GemvFewLongOutputsInChunks) {
  SCOPED_TRACE(seed_text());
  const std::pair<int, int> shapes[] = {{70001, 3}, {3, 70001}, {65, 40000}};
  int t = 0;
  for (const auto &[m, n] : shapes)
    for (char trans : {'N', 'T'}) {
      set_engine(t++);
      const auto [incx, incy] = pick(kGemvIncs, rng_);
      const auto value = [&](int, int) { return phi_value(2.0, rng_); };
      const GemvCase c = make_gemv(kApis[t % 2], trans, m, n, 1, incx, incy,
                                   pick(kNonzeroScalars, rng_), pick(kScalars, rng_), value,
                                   value, value, rng_);
      const std::string msg = check_gemv(c);
      ASSERT_TRUE(msg.empty()) << msg;
    }
}

// Every pair of scalars (-0.0 too), every API, both transposes.
TEST_F(ExblasCpu, GemvEveryScalarPair) {
  SCOPED_TRACE(seed_text());
  std::vector<double> scalars = kScalars;
  scalars.push_back(-0.0);
  int t = 0;
  for (double alpha : scalars)
    for (double beta : scalars)
      for (Api api : kApis)
        for (char trans : {'N', 'T'}) {
          set_engine(t++);
          const auto [incx, incy] = pick(kGemvIncs, rng_);
          const auto value = [&](int, int) { return phi_value(4, rng_); };
          const GemvCase c = make_gemv(api, trans, 7, 13, int(rng_() % 3), incx, incy,
                                       alpha, beta, value, value, value, rng_);
          const std::string msg = check_gemv(c);
          ASSERT_TRUE(msg.empty()) << msg;
        }
}

// beta == 0 never reads y: y's elements are NaN and Inf, and the result is
// the oracle's without y (finite inputs: no NaN may come out).
TEST_F(ExblasCpu, GemvBetaZeroNeverReadsY) {
  SCOPED_TRACE(seed_text());
  int t = 0;
  for (double beta : {0.0, -0.0})
    for (double alpha : {1.0, -1.0, 0.75, 3e-5, 0.0})
      for (Api api : kApis)
        for (char trans : {'N', 'T', 'C'}) {
          const auto [incx, incy] = pick(kGemvIncs, rng_);
          const auto value = [&](int, int) { return phi_value(4, rng_); };
          const auto junk = [&](int i, int) { return i % 3 == 2 ? -kInf : kNaN; };
          const GemvCase c = make_gemv(api, trans, 1 + int(rng_() % 40),
                                       1 + int(rng_() % 40), int(rng_() % 3), incx, incy,
                                       alpha, beta, value, value, junk, rng_);
          std::vector<double> got;
          const std::string msg = check_gemv(c, nullptr, &got);
          ASSERT_TRUE(msg.empty()) << msg;
          for (std::size_t i = 0; i < got.size(); ++i)
            ASSERT_TRUE(std::isfinite(got[i])) << c.describe() << ": y[" << i << "] = "
                                               << hex(got[i]) << " (y was read)";
          ++t;
        }
  EXPECT_EQ(t, 2 * 5 * 3 * 3);
}

// alpha == 0 reads neither A nor x (all NaN here): y = beta y, one IEEE
// product (+0 when beta == 0), whatever y holds.
TEST_F(ExblasCpu, GemvAlphaZeroOnlyScalesY) {
  SCOPED_TRACE(seed_text());
  std::vector<double> betas = kScalars;
  betas.push_back(-0.0);
  for (double alpha : {0.0, -0.0})
    for (double beta : betas)
      for (Api api : kApis)
        for (char trans : {'N', 'T', 'C'}) {
          const auto [incx, incy] = pick(kGemvIncs, rng_);
          const auto nan = [](int, int) { return kNaN; };
          const auto y_value = [&](int, int) {
            return rng_() % 3 == 0 ? special_value(rng_) : phi_value(4, rng_);
          };
          const GemvCase c = make_gemv(api, trans, 1 + int(rng_() % 30),
                                       1 + int(rng_() % 30), int(rng_() % 3), incx, incy,
                                       alpha, beta, nan, nan, y_value, rng_);
          // The contract's value by hand, and the oracle's must agree.
          std::vector<double> want = gather(c.y);
          for (double &v : want) v = beta == 0.0 ? 0.0 : beta * v;
          const std::vector<double> oracle = gemv_expected(c);
          for (std::size_t i = 0; i < want.size(); ++i)
            ASSERT_TRUE(same(oracle[i], want[i]))
                << "oracle " << hex(oracle[i]) << " vs beta*y " << hex(want[i]);
          const std::string msg = check_gemv(c, &want);
          ASSERT_TRUE(msg.empty()) << msg;
        }
}

// m = 0 or n = 0: nothing is read or written, whatever trans makes y's
// length (reference DGEMV's quick return), nor with beta != 1.
TEST_F(ExblasCpu, GemvQuickReturnLeavesYUntouched) {
  SCOPED_TRACE(seed_text());
  const std::vector<double> nans(64, kNaN);
  for (const auto &[m, n] : {std::pair<int, int>{0, 5}, {5, 0}, {0, 0}})
    for (Api api : kApis)
      for (char trans : {'N', 'T', 'C'})
        for (double beta : {0.0, 0.75, -1.0})
          for (int incy : {1, -2}) {
            StridedVector y = make_strided(5, incy, [&](int) { return phi_value(4, rng_); });
            const StridedVector before = y;
            // A valid lda (m or n may be 0): the call must take the quick
            // return, not fail its checks.
            const int lda = std::max(1, api == Api::CblasRow ? n : m) + int(rng_() % 2) * 3;
            const double alpha = 1;
            const int incx = 1;
            xn_test::g_xerbla = xn_test::XerblaLog{};
            if (api == Api::Fortran) {
              exdgemv_(&trans, &m, &n, &alpha, nans.data(), &lda, nans.data(), &incx, &beta,
                       y.data(), &incy);
            } else {
              cblas_exdgemv(api == Api::CblasRow ? XnRowMajor : XnColMajor,
                            trans == 'N' ? XnNoTrans : trans == 'T' ? XnTrans : XnConjTrans,
                            m, n, alpha, nans.data(), lda, nans.data(), incx, beta, y.data(),
                            incy);
            }
            ASSERT_EQ(xn_test::g_xerbla.calls, 0) << "rejected as " << xn_test::g_xerbla.name
                                                  << " " << xn_test::g_xerbla.info;
            ASSERT_TRUE(same_bytes(before.mem, y.mem))
                << api_name(api) << " trans=" << trans << " m=" << m << " n=" << n
                << " beta=" << beta << " incy=" << incy << ": y written";
          }
}

// IEEE specials (Inf, NaN, signed zeros, subnormals, values near overflow)
// among ordinary values, in A, x, y and the scalars.
TEST_F(ExblasCpu, GemvIeeeSpecials) {
  SCOPED_TRACE(seed_text());
  const std::pair<int, int> shapes[] = {{1, 1}, {1, 5}, {5, 1}, {7, 9}, {31, 5}, {3, 40}};
  const std::vector<double> alphas = {1, -1, 0.75, 3e-5, kMinSub, 0x1p1000, -kInf};
  const std::vector<double> betas = {0, -0.0, 1, -1, 0.75, 3e-5, kMinSub, kInf, kNaN};
  int t = 0, nan_results = 0, finite_results = 0;
  for (double p_special : {0.03, 0.15, 0.5})
    for (const auto &[m, n] : shapes)
      for (int rep = 0; rep < 6; ++rep) {
        set_engine(t);
        const Api api = kApis[t % 3];
        const char trans = "NTC"[(t / 3) % 3];
        ++t;
        const auto [incx, incy] = pick(kGemvIncs, rng_);
        const auto value = [&](int, int) {
          return xn_test::u53(rng_) < p_special ? special_value(rng_) : phi_value(4, rng_);
        };
        const GemvCase c =
            make_gemv(api, trans, m, n, int(rng_() % 3), incx, incy, pick(alphas, rng_),
                      pick(betas, rng_), value, value, value, rng_);
        std::vector<double> got;
        const std::string msg = check_gemv(c, nullptr, &got);
        ASSERT_TRUE(msg.empty()) << "p_special=" << p_special << " " << msg;
        for (double v : got) {
          nan_results += std::isnan(v);
          finite_results += std::isfinite(v);
        }
      }
  // Both outcomes occur (the specials reached the results, and not all).
  EXPECT_GT(nan_results, 0);
  EXPECT_GT(finite_results, 0);
}

// Signed zeros: rows of zero products of either sign (an exact zero sum is
// -0 only when every product is -0), beta y of either sign of zero.
TEST_F(ExblasCpu, GemvSignedZeros) {
  SCOPED_TRACE(seed_text());
  int t = 0, negative_zeros = 0, positive_zeros = 0;
  for (int n : {1, 2, 3})
    for (double alpha : {1.0, -1.0, 0.75})
      for (double beta : {0.0, -0.0, 1.0, -1.0})
        for (Api api : kApis) {
          const char trans = "NT"[t % 2];
          set_engine(t++);
          const auto [incx, incy] = pick(kGemvIncs, rng_);
          const auto a_value = [&](int, int) {
            return rng_() % 5 == 0 ? std::ldexp(signed_(1.0, rng_), int(rng_() % 9) - 4)
                                   : signed_(0.0, rng_);
          };
          const auto x_value = [&](int, int) {
            return coin(rng_) ? signed_(0.0, rng_) : signed_(1.5, rng_);
          };
          const auto y_value = [&](int, int) { return signed_(0.0, rng_); };
          // trans T: op(A) is n x m, so keep the inner length small both ways.
          const int m = trans == 'N' ? 9 : n, cols = trans == 'N' ? n : 9;
          const GemvCase c = make_gemv(api, trans, m, cols, int(rng_() % 2), incx, incy,
                                       alpha, beta, a_value, x_value, y_value, rng_);
          std::vector<double> got;
          const std::string msg = check_gemv(c, nullptr, &got);
          ASSERT_TRUE(msg.empty()) << msg;
          for (double v : got) {
            negative_zeros += v == 0.0 && std::signbit(v);
            positive_zeros += v == 0.0 && !std::signbit(v);
          }
        }
  EXPECT_GT(negative_zeros, 0);
  EXPECT_GT(positive_zeros, 0);
}

// Results in the subnormal range (rounded once at 2^-1074) and near
// overflow (rounded to DBL_MAX or +-Inf), with cancellation between rows'
// products.
TEST_F(ExblasCpu, GemvSubnormalAndOverflowRanges) {
  SCOPED_TRACE(seed_text());
  int t = 0, subnormal_results = 0, infinite_results = 0;
  for (int range = 0; range < 2; ++range)
    for (Api api : kApis)
      for (char trans : {'N', 'T', 'C'})
        for (int rep = 0; rep < 3; ++rep) {
          set_engine(t++);
          const auto [incx, incy] = pick(kGemvIncs, rng_);
          // Low: products 2^-1080..2^-1000; high: 2^1010..2^1030 (some rows
          // overflow, others cancel back below DBL_MAX).
          const auto a_value = [&](int, int) {
            return range == 0 ? std::ldexp(xn_test::u53(rng_) - 0.5, -1000 - int(rng_() % 60))
                              : std::ldexp(xn_test::u53(rng_) - 0.5, 1010 + int(rng_() % 14));
          };
          const auto x_value = [&](int, int) {
            return std::ldexp(xn_test::u53(rng_) - 0.5, int(rng_() % 12));
          };
          const auto y_value = [&](int, int) {
            return range == 0 ? std::ldexp(xn_test::u53(rng_) - 0.5, -1060)
                              : std::ldexp(xn_test::u53(rng_) - 0.5, 1023);
          };
          const double beta = range == 0 ? pick(std::vector<double>{0.0, 1.0, 0.75}, rng_)
                                         : pick(std::vector<double>{0.0, 1.0, -1.0}, rng_);
          const GemvCase c = make_gemv(api, trans, 1 + int(rng_() % 12), 1 + int(rng_() % 6),
                                       int(rng_() % 3), incx, incy,
                                       range == 0 ? 0.75 : 1.0, beta, a_value, x_value,
                                       y_value, rng_);
          std::vector<double> got;
          const std::string msg = check_gemv(c, nullptr, &got);
          ASSERT_TRUE(msg.empty()) << msg;
          for (double v : got) {
            subnormal_results += std::fpclassify(v) == FP_SUBNORMAL;
            infinite_results += std::isinf(v);
          }
        }
  EXPECT_GT(subnormal_results, 0);
  EXPECT_GT(infinite_results, 0);
}

// Rows whose products cancel almost entirely: pairs +H, -H (H up to 2^100
// times the rest) around small terms. The naive double loop gets such rows
// wrong, which is checked too: these cases can fail.
TEST_F(ExblasCpu, GemvIllConditionedRows) {
  SCOPED_TRACE(seed_text());
  int t = 0, naive_wrong = 0, entries = 0;
  for (int n : {4, 9, 31, 97})
    for (Api api : kApis)
      for (char trans : {'N', 'T'}) {
        set_engine(t++);
        const auto [incx, incy] = pick(kGemvIncs, rng_);
        const int rows = 11;
        // x: powers of two, so A(i, p) = H / x_p is exact.
        std::vector<double> xs(static_cast<std::size_t>(n));
        for (double &v : xs) v = signed_(std::ldexp(1.0, int(rng_() % 41) - 20), rng_);
        // op(A) row by row: positions paired at random carry +H/x_p, -H/x_q.
        std::vector<double> op(std::size_t(rows) * std::size_t(n));
        for (int i = 0; i < rows; ++i) {
          std::vector<int> perm(static_cast<std::size_t>(n));
          for (int p = 0; p < n; ++p) perm[std::size_t(p)] = p;
          std::shuffle(perm.begin(), perm.end(), rng_);
          const int pairs = n / 3;
          for (int q = 0; q < pairs; ++q) {
            const double h = std::ldexp(1.0 + xn_test::u53(rng_), 40 + int(rng_() % 60));
            const int p1 = perm[std::size_t(2 * q)], p2 = perm[std::size_t(2 * q + 1)];
            op[std::size_t(i + p1 * rows)] = h / xs[std::size_t(p1)];
            op[std::size_t(i + p2 * rows)] = -h / xs[std::size_t(p2)];
          }
          for (int q = 2 * pairs; q < n; ++q)
            op[std::size_t(i + perm[std::size_t(q)] * rows)] = phi_value(1, rng_);
        }
        // Stored so that op(A) is what the API sees: A = op(A) or op(A)^T.
        const int m = trans == 'N' ? rows : n, cols = trans == 'N' ? n : rows;
        const auto a_value = [&](int i, int j) {
          return trans == 'N' ? op[std::size_t(i + j * rows)] : op[std::size_t(j + i * rows)];
        };
        const auto x_value = [&](int i, int) { return xs[std::size_t(i)]; };
        const auto y_value = [&](int, int) { return phi_value(1, rng_); };
        const GemvCase c = make_gemv(api, trans, m, cols, int(rng_() % 3), incx, incy,
                                     pick(kNonzeroScalars, rng_), pick(kScalars, rng_),
                                     a_value, x_value, y_value, rng_);
        const std::vector<double> want = gemv_expected(c);
        for (int i = 0; i < rows; ++i) {
          naive_wrong += !same(naive_entry(c, i), want[std::size_t(i)]);
          ++entries;
        }
        const std::string msg = check_gemv(c, &want);
        ASSERT_TRUE(msg.empty()) << msg;
      }
  // The naive loop is wrong on most of these rows.
  EXPECT_GT(naive_wrong, entries / 4) << naive_wrong << " of " << entries;
}

// ------------------------------------------------------------ DDOT

const std::vector<std::pair<int, int>> kDotIncs = {
    {1, 1}, {2, 1},  {1, 3},  {-1, 1}, {1, -1}, {-2, -1}, {3, -2},
    {-1, 2}, {0, 1}, {1, 0},  {0, 0},  {0, -2}, {-3, 0},  {-1, -1}};

// The contract's DDOT: the 1 x 1 x n product x^T y, alpha = 1, beta = 0.
double dot_expected(const StridedVector &x, const StridedVector &y) {
  const std::vector<double> xs = gather(x), ys = gather(y);
  if (xs.empty()) return 0.0;
  return xn_test::exact_gemm_entry_ieee(false, false, std::int64_t(xs.size()), 1.0,
                                        xs.data(), 1, ys.data(), std::int64_t(ys.size()), 0.0,
                                        nullptr, 1, 0, 0);
}

double naive_dot(const StridedVector &x, const StridedVector &y) {
  const std::vector<double> xs = gather(x), ys = gather(y);
  double s = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) s += xs[i] * ys[i];
  return s;
}

double call_dot(bool fortran, int n, const StridedVector &x, const StridedVector &y) {
  return fortran ? exddot_(&n, x.data(), &x.inc, y.data(), &y.inc)
                 : cblas_exddot(n, x.data(), x.inc, y.data(), y.inc);
}

std::string describe_dot(bool fortran, const StridedVector &x, const StridedVector &y) {
  std::string s = std::string(fortran ? "exddot_" : "cblas_exddot") +
                  " n=" + std::to_string(x.len) + " incx=" + std::to_string(x.inc) +
                  " incy=" + std::to_string(y.inc);
  const std::vector<double> xs = gather(x), ys = gather(y);
  const std::size_t shown = std::min<std::size_t>(xs.size(), 8);
  s += "\n  x*y:";
  for (std::size_t i = 0; i < shown; ++i) s += " " + hex(xs[i]) + "*" + hex(ys[i]);
  if (xs.size() > shown) s += " ... (" + std::to_string(xs.size() - shown) + " more)";
  return s;
}

// Runs one dot; "" or what is wrong. x and y must stay as they were.
std::string check_dot(bool fortran, const StridedVector &x, const StridedVector &y,
                      double want) {
  const std::vector<double> x0 = x.mem, y0 = y.mem;
  const double got = call_dot(fortran, x.len, x, y);
  if (!same(got, want))
    return describe_dot(fortran, x, y) + "\n  expected " + hex(want) + " got " + hex(got);
  if (!same_bytes(x0, x.mem) || !same_bytes(y0, y.mem))
    return describe_dot(fortran, x, y) + ": x or y written";
  return "";
}

TEST_F(ExblasCpu, DotRandomLengthsAndIncrements) {
  SCOPED_TRACE(seed_text());
  int t = 0;
  for (int n : {1, 2, 7, 31, 97, 257, 1000, 70001})  // 70001: terms in chunks
    for (const auto &[incx, incy] : kDotIncs)
      for (double phi : {0.0, 4.0}) {
        set_engine(t);
        const bool fortran = t++ % 2 == 0;
        const auto value = [&](int) { return phi_value(phi, rng_); };
        const StridedVector x = make_strided(n, incx, value), y = make_strided(n, incy, value);
        const std::string msg = check_dot(fortran, x, y, dot_expected(x, y));
        ASSERT_TRUE(msg.empty()) << "phi=" << phi << " " << msg;
      }
}

// n <= 0: exactly +0, nothing read (the vectors are NaN, or NULL for n = 0).
TEST_F(ExblasCpu, DotNonPositiveLengthIsPlusZero) {
  const std::vector<double> nans(16, kNaN);
  for (int n : {0, -1, -7})
    for (int inc : {1, 0, -2})
      for (bool fortran : {true, false}) {
        const double r = fortran ? exddot_(&n, nans.data(), &inc, nans.data(), &inc)
                                 : cblas_exddot(n, nans.data(), inc, nans.data(), inc);
        EXPECT_EQ(bits(r), bits(0.0)) << "n=" << n << " inc=" << inc << ": " << hex(r);
      }
  const int zero = 0, one = 1;
  EXPECT_EQ(bits(exddot_(&zero, nullptr, &one, nullptr, &one)), bits(0.0));
  EXPECT_EQ(bits(cblas_exddot(0, nullptr, 1, nullptr, 1)), bits(0.0));
}

// Values stated by hand (the contract's rules), each checked against the
// oracle too and run through both entries with increments; several defeat
// the naive loop, which is checked.
TEST_F(ExblasCpu, DotStatedValuesAndSpecials) {
  SCOPED_TRACE(seed_text());
  struct Stated {
    const char *what;
    std::vector<double> x, y;
    double want;
  };
  const double big = 0x1p70, h = 0x1p1023;
  const std::vector<Stated> cases = {
      {"cancellation 2^70 + 3 - 2^70", {big, 3, -big}, {1, 1, 1}, 3},
      {"cancellation keeps 2^-60", {1, 0x1p-60, -1}, {1, 1, 1}, 0x1p-60},
      {"2^1023 + 2^1023 - 2^1023 (no overflow on the way)", {h, h, -h}, {1, 1, 1}, h},
      {"2^1023 + 2^1023 overflows", {h, h}, {1, 1}, kInf},
      {"DBL_MAX + 2^969 rounds down", {kMaxDouble, 0x1p969}, {1, 1}, kMaxDouble},
      {"DBL_MAX + 2^970 is the overflow tie", {kMaxDouble, 0x1p970}, {1, 1}, kInf},
      {"-DBL_MAX - 2^970", {kMaxDouble, 0x1p970}, {-1, -1}, -kInf},
      {"1 + 2^-53 ties to even", {1, 0x1p-53}, {1, 1}, 1},
      {"1 + 2^-53 + 2^-105 rounds up", {1, 0x1p-53, 0x1p-105}, {1, 1, 1},
       0x1.0000000000001p0},
      {"(-0) * 1 is -0", {-0.0}, {1}, -0.0},
      {"all products -0", {-0.0, 0.0, 2}, {1, -1, -0.0}, -0.0},
      {"+0 and -0 products give +0", {0.0, -0.0}, {1, 1}, 0.0},
      {"(-0)(-1) is +0", {-0.0}, {-1}, 0.0},
      {"exact cancellation gives +0", {1.5, -1.5}, {2, 2}, 0.0},
      {"Inf + finite", {kInf, kMaxDouble}, {1, kMaxDouble}, kInf},
      {"Inf - Inf", {kInf, kInf}, {1, -1}, kNaN},
      {"Inf * 0", {kInf}, {0.0}, kNaN},
      {"NaN among finite", {1, kNaN, 2}, {1, 1, 1}, kNaN},
      {"-Inf times a tiny value", {-kInf}, {kMinSub}, -kInf},
      {"2^-1075 ties to +0", {kMinSub}, {0.5}, 0.0},
      {"-2^-1075 ties to -0", {-kMinSub}, {0.5}, -0.0},
      {"2^-1075 + 2^-1075 is 2^-1074", {kMinSub, kMinSub}, {0.5, 0.5}, kMinSub},
      {"0.75 * 2^-1074 rounds up", {kMinSub}, {0.75}, kMinSub},
      {"3 * 2^-1075 ties up to even", {kMinSub, kMinSub, kMinSub}, {0.5, 0.5, 0.5},
       0x1p-1073},
      {"subnormal sum reaching DBL_MIN", {0x1p-1023, 0x1p-1023}, {1, 1}, 0x1p-1022},
  };
  int naive_wrong = 0;
  for (const Stated &s : cases) {
    const int n = int(s.x.size());
    const StridedVector x0 = strided_from(s.x, 1), y0 = strided_from(s.y, 1);
    const double oracle = dot_expected(x0, y0);
    ASSERT_TRUE(same(oracle, s.want))
        << s.what << ": the oracle says " << hex(oracle) << ", stated " << hex(s.want);
    naive_wrong += !same(naive_dot(x0, y0), s.want);
    for (int t = 0; t < 4; ++t) {
      // Increments other than 0 (a repeated element would change the value).
      const std::pair<int, int> incs[] = {{1, 1}, {-1, 2}, {3, -2}, {-2, -1}};
      const StridedVector x = strided_from(s.x, incs[t].first);
      const StridedVector y = strided_from(s.y, incs[t].second);
      const std::string msg = check_dot(t % 2 == 0, x, y, s.want);
      ASSERT_TRUE(msg.empty()) << s.what << " (n=" << n << "): " << msg;
    }
  }
  EXPECT_GE(naive_wrong, 5);
}

// Cancelling pairs +H, -H around small terms, shuffled, with every kind of
// increment; the naive loop must be wrong on some of them.
TEST_F(ExblasCpu, DotIllConditioned) {
  SCOPED_TRACE(seed_text());
  int t = 0, naive_wrong = 0, cases = 0;
  for (int n : {3, 4, 31, 257})
    for (const auto &[incx, incy] : kDotIncs) {
      if (incx == 0 || incy == 0) continue;  // a repeated element cannot cancel
      set_engine(t);
      const bool fortran = t++ % 2 == 0;
      std::vector<double> xs(static_cast<std::size_t>(n)), ys(static_cast<std::size_t>(n));
      for (double &v : ys) v = signed_(std::ldexp(1.0, int(rng_() % 41) - 20), rng_);
      std::vector<int> perm(static_cast<std::size_t>(n));
      for (int p = 0; p < n; ++p) perm[std::size_t(p)] = p;
      std::shuffle(perm.begin(), perm.end(), rng_);
      const int pairs = std::max(1, n / 3);
      for (int q = 0; q < pairs; ++q) {
        const double hv = std::ldexp(1.0 + xn_test::u53(rng_), 40 + int(rng_() % 60));
        const int p1 = perm[std::size_t(2 * q)], p2 = perm[std::size_t(2 * q + 1)];
        xs[std::size_t(p1)] = hv / ys[std::size_t(p1)];
        xs[std::size_t(p2)] = -hv / ys[std::size_t(p2)];
      }
      for (int q = 2 * pairs; q < n; ++q) xs[std::size_t(perm[std::size_t(q)])] = phi_value(1, rng_);
      const StridedVector x = strided_from(xs, incx), y = strided_from(ys, incy);
      const double want = dot_expected(x, y);
      naive_wrong += !same(naive_dot(x, y), want);
      ++cases;
      const std::string msg = check_dot(fortran, x, y, want);
      ASSERT_TRUE(msg.empty()) << msg;
    }
  EXPECT_GT(naive_wrong, cases / 4) << naive_wrong << " of " << cases;
}

// Random specials among ordinary values, every increment pair (zero ones
// included).
TEST_F(ExblasCpu, DotIeeeSpecials) {
  SCOPED_TRACE(seed_text());
  int t = 0, nan_results = 0, finite_results = 0;
  for (double p_special : {0.05, 0.3})
    for (int n : {1, 3, 17})
      for (const auto &[incx, incy] : kDotIncs) {
        set_engine(t);
        const bool fortran = t++ % 2 == 0;
        const auto value = [&](int) {
          return xn_test::u53(rng_) < p_special ? special_value(rng_) : phi_value(4, rng_);
        };
        const StridedVector x = make_strided(n, incx, value), y = make_strided(n, incy, value);
        const double want = dot_expected(x, y);
        nan_results += std::isnan(want);
        finite_results += std::isfinite(want);
        const std::string msg = check_dot(fortran, x, y, want);
        ASSERT_TRUE(msg.empty()) << "p_special=" << p_special << " " << msg;
      }
  EXPECT_GT(nan_results, 0);
  EXPECT_GT(finite_results, 0);
}

}  // namespace
