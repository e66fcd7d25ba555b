// test_exblas_edges_gpu.cpp - xnExdgemv, xnExddot, xnExdgemmStridedBatched
// and xnExdgemmBatched (label gpu, skipped without a device) differentially
// against cuBLAS's routines of the same parameter lists, same handle, both
// pointer modes: bad arguments and NULL pointers (the status cuBLAS returns,
// never hard-coded; the output bitwise untouched when ours fails), quick
// returns and zero sizes (untouched where reference BLAS returns at once, a
// signalling NaN included; +0 as cuBLAS's bits for beta = 0; what cuBLAS
// does is printed as NOTE); and the values on a non-blocking stream with
// negative and zero increments and lda > m, bit for bit the host entries'
// (cblas_exdgemv, cblas_exddot on the CPU), from a fresh seed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/exdgemm_inputs.h"
#include "support/gpu_support.h"
#include "xngemm.h"

namespace {

using xn_test::DeviceBuffer;

// The host entry points read XN_DEVICE at every call: the CPU from the first.
const bool kCpuForced = [] { return setenv("XN_DEVICE", "cpu", 1) == 0; }();

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr cublasOperation_t kN = CUBLAS_OP_N, kT = CUBLAS_OP_T, kC = CUBLAS_OP_C;
constexpr cublasOperation_t kOp7 = cublasOperation_t(7), kConjg = CUBLAS_OP_CONJG;

// cuBLAS's routine or ours (deduction fails unless the types are the same).
template <class F>
F pick(bool ours, F cublas, F xn) {
  return ours ? xn : cublas;
}
template <class... T>
std::string str(const T &...v) {
  std::ostringstream o;
  (o << ... << v);
  return o.str();
}
std::string name(int s) {
  const char *n = cublasGetStatusName(cublasStatus_t(s));
  return str(n ? n : "?", " (", s, ")");
}
constexpr auto &hex = xn_test::ex_hex;
void note(const std::string &s) { std::cout << "[     NOTE ] " << s << std::endl; }
cublasPointerMode_t mode(bool device) {
  return device ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST;
}

// An output's prior contents: a signalling NaN (any arithmetic, 1 * y
// included, quiets it), a negative quiet NaN with a payload, -0, +-Inf, the
// smallest subnormal, then ordinary values.
std::vector<double> poison(std::size_t n) {
  static const std::uint64_t head[] = {0x7ff0000000000badull, 0xfff80000deadbeefull,
                                       0x8000000000000000ull, 0x7ff0000000000000ull,
                                       0xfff0000000000000ull, 1};
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = 0.25 + double(i);
    if (i < 6) std::memcpy(&v[i], &head[i], 8);
  }
  return v;
}
// The first element whose bits differ, or -1 (the vectors are as long).
long diff(const std::vector<double> &got, const std::vector<double> &want) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], 8) != 0) return long(i);
  return -1;
}
std::string at_diff(const std::vector<double> &got, const std::vector<double> &want) {
  const long d = diff(got, want);
  return d < 0 ? "" : str("[", d, "] = ", hex(got[d]), ", want ", hex(want[d]));
}

// (u - 1/2) 2^e, e in [-40, 40], every 11th entry 2^+-70 further out: the
// sums cancel and round (plain double arithmetic is wrong somewhere).
double draw1(std::mt19937_64 &rng, std::size_t i = 0) {
  int e = int(rng() % 81) - 40;
  if (i % 11 == 3) e += (rng() & 1) ? 70 : -70;
  return std::ldexp(xn_test::u53(rng) - 0.5, e);
}
std::vector<double> draw(std::size_t n, std::mt19937_64 &rng) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = draw1(rng, i);
  return v;
}
// Element i of a BLAS vector of n with increment inc (negative: from the
// far end); the doubles its storage spans.
std::size_t at(int i, int n, int inc) {
  return std::size_t(inc >= 0 ? std::int64_t(i) * inc : std::int64_t(n - 1 - i) * -inc);
}
std::size_t storage(int n, int inc) {
  return n <= 0 ? 1 : std::size_t(std::int64_t(n - 1) * std::abs(inc) + 1);
}

// Stream-ordered copies into buffers allocated up front (a cudaMalloc or
// cudaFree would synchronise the device); get waits for `s` alone.
template <class T>
void put(DeviceBuffer<T> &d, const std::vector<T> &h, cudaStream_t s) {
  ASSERT_LE(h.size(), d.size());
  XN_CUDA_OK(cudaMemcpyAsync(d.get(), h.data(), h.size() * sizeof(T),
                             cudaMemcpyHostToDevice, s));
}
std::vector<double> get(const DeviceBuffer<double> &d, std::size_t n, cudaStream_t s) {
  std::vector<double> h(n);
  EXPECT_EQ(cudaMemcpyAsync(h.data(), d.get(), n * 8, cudaMemcpyDeviceToHost, s),
            cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  return h;
}

// alpha and beta where the handle's pointer mode reads them.
struct Scalars {
  const double *alpha, *beta;
};
Scalars scalars(bool device, const double (&host)[2], DeviceBuffer<double> &dev,
                cudaStream_t s = nullptr) {
  if (!device) return {&host[0], &host[1]};
  put(dev, std::vector<double>{host[0], host[1]}, s);
  return {dev.get(), dev.get() + 1};
}

struct GemmArgs {
  cublasOperation_t ta, tb;
  int m, n, k, lda, ldb, ldc, count;
};
// Two products: A = 0.5, B = -2 (strides 64), C (64 doubles, stride 32),
// also as device pointer arrays; ours and cuBLAS's C apart. run: the
// strided or the pointer-array routine, cuBLAS's or ours; `drop` makes C
// (1), Aarray (2) or Carray (4) NULL.
struct SmallBatch {
  DeviceBuffer<double> A{256}, B{256}, C{64}, Cc{64};
  DeviceBuffer<const double *> pa{2}, pb{2};
  DeviceBuffer<double *> pc{2}, pcc{2};
  SmallBatch() {
    A.upload(std::vector<double>(256, 0.5));
    B.upload(std::vector<double>(256, -2.0));
    pa.upload({A.get(), A.get() + 64});
    pb.upload({B.get(), B.get() + 64});
    pc.upload({C.get(), C.get() + 32});
    pcc.upload({Cc.get(), Cc.get() + 32});
  }
  cublasStatus_t run(bool ours, bool strided, cublasHandle_t h, const GemmArgs &g,
                     const double *alpha, const double *beta, unsigned drop = 0) const {
    double *c = (drop & 1) ? nullptr : (ours ? C : Cc).get();
    const double *const *a = (drop & 2) ? nullptr : pa.get();
    double *const *cs = (drop & 4) ? nullptr : (ours ? pc : pcc).get();
    if (strided)
      return pick(ours, &cublasDgemmStridedBatched, &xnExdgemmStridedBatched)(
          h, g.ta, g.tb, g.m, g.n, g.k, alpha, A.get(), g.lda, 64, B.get(), g.ldb, 64,
          beta, c, g.ldc, 32, g.count);
    return pick(ours, &cublasDgemmBatched, &xnExdgemmBatched)(
        h, g.ta, g.tb, g.m, g.n, g.k, alpha, a, g.lda, pb.get(), g.ldb, beta, cs, g.ldc,
        g.count);
  }
};

// Row flags. kStricter: xngemm.h documents INVALID_VALUE where cuBLAS 13.1
// returns SUCCESS (and computes): ours is INVALID_VALUE when cuBLAS says
// SUCCESS, else cuBLAS's status. kHostOnly: host scalars only. kUntouched:
// a quick return, the output bitwise as before. kZeros: the output's
// elements become +0 (beta = 0, alpha or k = 0), cuBLAS's bits too.
enum : unsigned { kStricter = 1, kHostOnly = 2, kUntouched = 4, kZeros = 8 };
constexpr unsigned kHostQuick = kHostOnly | kUntouched, kHostZeros = kHostOnly | kZeros;

// The status compared, the output checked; cuBLAS's output on a quick
// return reported.
void check_outcome(const std::string &what, unsigned flags, cublasStatus_t base,
                   cublasStatus_t got, const std::vector<double> &before,
                   const std::vector<double> &zeros, const std::vector<double> &ours,
                   const std::vector<double> &theirs) {
  const bool loose = (flags & kStricter) && base == CUBLAS_STATUS_SUCCESS;
  EXPECT_EQ(got, loose ? CUBLAS_STATUS_INVALID_VALUE : base)
      << what << ": cuBLAS " << name(base) << ", ours " << name(got);
  if (loose) note(what + ": cuBLAS returns SUCCESS");
  if (got != CUBLAS_STATUS_SUCCESS || (flags & kUntouched)) {
    EXPECT_EQ(diff(ours, before), -1)
        << what << ": output changed " << at_diff(ours, before);
  }
  if (flags & kZeros) {
    EXPECT_EQ(diff(ours, zeros), -1) << what << ": " << at_diff(ours, zeros);
    EXPECT_EQ(diff(theirs, ours), -1) << what << ": cuBLAS " << at_diff(theirs, ours);
  }
  if ((flags & kUntouched) && diff(theirs, before) != -1)
    note(what + ": cuBLAS changes the output " + at_diff(theirs, before));
}

class GpuExblasEdges : public xn_test::CublasHandleFixture<> {};

// op(A) x > 0 here: alpha = +-0 times it is +0 whether or not cuBLAS reads
// A and x (reference BLAS does not).
TEST_F(GpuExblasEdges, GemvArgumentsAndQuickReturnsAsCublas) {
  struct Case {
    const char *what;
    cublasOperation_t op;
    int m, n, lda, incx, incy;
    double alpha, beta;
    unsigned flags;
  };
  const Case cases[] = {
      {"trans 7", kOp7, 4, 4, 4, 1, 1, 1.5, 0.25, kStricter},
      {"trans CONJG", kConjg, 4, 4, 4, 1, 1, 1.5, 0.25, kStricter},
      {"m < 0", kN, -1, 4, 4, 1, 1, 1.5, 0.25, kStricter},
      {"n < 0", kT, 4, -1, 4, 1, 1, 1.5, 0.25, kStricter},
      {"incx = 0", kN, 4, 4, 4, 0, 1, 1.5, 0.25, kStricter},
      {"incy = 0", kT, 4, 4, 4, 1, 0, 1.5, 0.25, kStricter},
      {"incx = 0, m = 0", kN, 0, 4, 1, 0, 1, 1.5, 0.25, kStricter},
      {"lda = 0, m < 0", kT, -1, 4, 0, 1, 1, 1.5, 0.25, kStricter},
      {"lda < m (N)", kN, 4, 4, 3, 1, 1, 1.5, 0.25, 0},
      {"lda < m (T)", kT, 4, 4, 3, 1, 1, 1.5, 0.25, 0},
      {"lda < m (C)", kC, 4, 2, 3, -1, 1, 1.5, 0.25, 0},
      {"lda = 0, m = 0", kN, 0, 4, 0, 1, 1, 1.5, 0.25, kUntouched},
      {"valid: C", kC, 4, 4, 4, 1, 1, 1.5, 0.25, 0},
      {"valid: negative increments", kN, 4, 4, 4, -1, -2, 1.5, 0.25, 0},
      {"m = 0", kN, 0, 4, 1, 1, 1, 1.5, 0.5, kUntouched},
      {"n = 0", kN, 4, 0, 4, 1, 1, 1.5, 0.5, kUntouched},
      {"n = 0 (T), beta = 0", kT, 4, 0, 4, 1, 1, 1.5, 0.0, kUntouched},
      {"m = n = 0, incy = -1", kT, 0, 0, 1, 1, -1, 1.5, 0.5, kUntouched},
      {"alpha = 0, beta = 1", kN, 5, 3, 5, 1, 1, 0.0, 1.0, kHostQuick},
      {"alpha = -0, beta = 1 (T)", kT, 5, 3, 5, 1, -2, -0.0, 1.0, kHostQuick},
      {"alpha = 0, beta = 0", kN, 5, 3, 5, -1, 2, 0.0, 0.0, kHostZeros},
  };
  DeviceBuffer<double> dA(64), dx(16), dy(16), dyc(16), ds(2);
  dA.upload(std::vector<double>(64, 0.5));
  dx.upload(std::vector<double>(16, 0.25));
  const std::vector<double> y0 = poison(16);
  for (int dev = 0; dev < 2; ++dev) {
    XN_CUBLAS_OK(cublasSetPointerMode(h_, mode(dev)));
    for (const Case &c : cases) {
      if (dev && (c.flags & kHostOnly)) continue;
      const double hs[2] = {c.alpha, c.beta};
      const Scalars p = scalars(dev, hs, ds);
      const auto call = [&](bool ours, double *y) {
        return pick(ours, &cublasDgemv_v2, &xnExdgemv)(h_, c.op, c.m, c.n, p.alpha,
                                                       dA.get(), c.lda, dx.get(), c.incx,
                                                       p.beta, y, c.incy);
      };
      dy.upload(y0);
      dyc.upload(y0);
      const cublasStatus_t base = call(false, dyc.get()), got = call(true, dy.get());
      std::vector<double> zeros = y0;
      const int ly = c.op == kN ? c.m : c.n;
      for (int i = 0; i < ly; ++i) zeros[at(i, ly, c.incy)] = 0.0;
      check_outcome(str("gemv ", c.what, ", device scalars ", dev), c.flags, base, got,
                    y0, zeros, dy.download(), dyc.download());
    }
  }
}

// cublasDgemm{Strided,}Batched's (m = 4, n = 5, k = 6, 2 products unless
// said otherwise). op(A) op(B) = -6: alpha = -0 times it is +0 whether or
// not cuBLAS reads A and B.
TEST_F(GpuExblasEdges, BatchedArgumentsAndQuickReturnsAsCublas) {
  struct Case {
    const char *what;
    GemmArgs g;
    double alpha, beta;
    unsigned flags;
  };
  const Case cases[] = {
      {"transa 7", {kOp7, kN, 4, 5, 6, 6, 6, 4, 2}, 1.5, 0.5, 0},
      {"transb 7", {kN, kOp7, 4, 5, 6, 6, 6, 4, 2}, 1.5, 0.5, 0},
      {"transa CONJG", {kConjg, kN, 4, 5, 6, 6, 6, 4, 2}, 1.5, 0.5, 0},
      {"transb CONJG", {kN, kConjg, 4, 5, 6, 6, 6, 4, 2}, 1.5, 0.5, 0},
      {"m < 0", {kN, kN, -1, 5, 6, 6, 6, 4, 2}, 1.5, 0.5, 0},
      {"n < 0", {kN, kN, 4, -1, 6, 6, 6, 4, 2}, 1.5, 0.5, 0},
      {"k < 0", {kN, kN, 4, 5, -1, 6, 6, 4, 2}, 1.5, 0.5, 0},
      {"batchCount < 0", {kN, kN, 4, 5, 6, 6, 6, 4, -1}, 1.5, 0.5, 0},
      {"batchCount < 0, m = 0", {kN, kN, 0, 5, 6, 1, 6, 1, -1}, 1.5, 0.5, 0},
      {"lda < m (N)", {kN, kN, 4, 5, 6, 3, 6, 4, 2}, 1.5, 0.5, 0},
      {"lda < k (T)", {kT, kN, 4, 5, 6, 5, 6, 4, 2}, 1.5, 0.5, 0},
      {"lda < k (C)", {kC, kN, 4, 5, 6, 5, 6, 4, 2}, 1.5, 0.5, 0},
      {"ldb < k (N)", {kN, kN, 4, 5, 6, 6, 5, 4, 2}, 1.5, 0.5, 0},
      {"ldb < n (T)", {kN, kT, 4, 5, 6, 6, 4, 4, 2}, 1.5, 0.5, 0},
      {"ldc < m", {kN, kN, 4, 5, 6, 6, 6, 3, 2}, 1.5, 0.5, 0},
      {"lda = 0, m = 0", {kN, kN, 0, 5, 6, 0, 6, 1, 2}, 1.5, 0.5, 0},
      {"ldb = 0, k = 0", {kN, kN, 4, 5, 0, 4, 0, 4, 2}, 1.5, 0.5, 0},
      {"valid: C, C", {kC, kC, 4, 5, 6, 6, 5, 4, 2}, 1.5, 0.5, 0},
      {"valid: T, N", {kT, kN, 4, 5, 6, 6, 6, 4, 2}, 1.5, 0.5, 0},
      {"batchCount = 0", {kN, kN, 4, 5, 6, 4, 6, 4, 0}, 1.5, 0.5, kUntouched},
      {"m = 0", {kN, kN, 0, 5, 6, 1, 6, 1, 2}, 1.5, 0.5, kUntouched},
      {"n = 0, beta = 0", {kN, kN, 4, 0, 6, 4, 6, 4, 2}, 1.5, 0.0, kUntouched},
      {"k = 0, beta = 1", {kN, kN, 4, 5, 0, 4, 1, 4, 2}, 1.5, 1.0, kUntouched},
      {"k = 0, beta = 0", {kN, kN, 4, 5, 0, 4, 1, 4, 2}, 1.5, 0.0, kZeros},
      {"alpha = 0, beta = 1", {kN, kT, 4, 5, 6, 4, 5, 4, 2}, 0.0, 1.0, kHostQuick},
      {"alpha = -0, beta = 0", {kN, kN, 4, 5, 6, 4, 6, 4, 2}, -0.0, 0.0, kHostZeros},
  };
  SmallBatch sb;
  DeviceBuffer<double> ds(2);
  const std::vector<double> c0 = poison(64);
  for (int dev = 0; dev < 2; ++dev) {
    XN_CUBLAS_OK(cublasSetPointerMode(h_, mode(dev)));
    for (int strided = 0; strided < 2; ++strided)
      for (const Case &c : cases) {
        if (dev && (c.flags & kHostOnly)) continue;
        const double hs[2] = {c.alpha, c.beta};
        const Scalars p = scalars(dev, hs, ds);
        sb.C.upload(c0);
        sb.Cc.upload(c0);
        const cublasStatus_t base = sb.run(false, strided, h_, c.g, p.alpha, p.beta),
                             got = sb.run(true, strided, h_, c.g, p.alpha, p.beta);
        std::vector<double> zeros = c0;  // ldc = m where it matters
        for (int e = 0; (c.flags & kZeros) && e < c.g.count * c.g.m * c.g.n; ++e)
          zeros[std::size_t(e / (c.g.m * c.g.n) * 32 + e % (c.g.m * c.g.n))] = 0.0;
        check_outcome(
            str(strided ? "strided " : "pointers ", c.what, ", device scalars ", dev),
            c.flags, base, got, c0, zeros, sb.C.download(), sb.Cc.download());
      }
  }
}

// cublasDdot has no bad size: zero increments and n <= 0 give cuBLAS's
// status; n <= 0 cuBLAS's bits over a signalling NaN (host and device
// result), n > 0 the host entry's value; a failure leaves the result alone.
TEST_F(GpuExblasEdges, DotZeroIncrementsAndLengthsAsCublas) {
  ASSERT_TRUE(kCpuForced);
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const int cases[][3] = {{4, 0, 1},  {4, 1, 0}, {4, 0, 0},   {5, -1, -2}, {0, 1, 1},
                          {-3, 1, 1}, {0, 0, 0}, {-1, -2, 0}, {1, -3, 5}};
  const std::vector<double> x = draw(16, rng), y = draw(16, rng), r0 = poison(1);
  DeviceBuffer<double> dx, dy, dr(1), drc(1);
  dx.upload(x);
  dy.upload(y);
  for (int dev = 0; dev < 2; ++dev) {
    XN_CUBLAS_OK(cublasSetPointerMode(h_, mode(dev)));
    for (const auto &c : cases) {
      std::vector<double> host = {r0[0], r0[0]};  // cuBLAS's, ours
      dr.upload(r0);
      drc.upload(r0);
      const auto call = [&](bool ours) {
        double *res = dev ? (ours ? dr : drc).get() : &host[ours];
        return pick(ours, &cublasDdot_v2, &xnExddot)(h_, c[0], dx.get(), c[1], dy.get(),
                                                     c[2], res);
      };
      const cublasStatus_t base = call(false), got = call(true);
      if (dev) host = {drc.download()[0], dr.download()[0]};
      const std::string what =
          str("n ", c[0], " incx ", c[1], " incy ", c[2], " device ", dev);
      EXPECT_EQ(got, base) << what << ": cuBLAS " << name(base) << ", ours " << name(got);
      const std::vector<double> want = {
          got != CUBLAS_STATUS_SUCCESS ? r0[0]
          : c[0] <= 0                  ? host[0]
                      : cblas_exddot(c[0], x.data(), c[1], y.data(), c[2])};
      EXPECT_EQ(diff({host[1]}, want), -1)
          << what << ": " << hex(host[1]) << ", want " << hex(want[0]) << " (cuBLAS "
          << hex(host[0]) << ")";
    }
  }
}

// Runs `call` in a child process (gtest's threadsafe death-test style: a
// fresh exec of this test up to here) and returns its exit code; -1 when a
// signal ended it (a NULL dereferenced), -2 where it did not run (inside
// the child that runs another).
template <class F>
int exit_code_in_child(F call) {
  int code = -2;
  EXPECT_EXIT(std::_Exit(call()), ([&code](int w) {
                code = WIFEXITED(w) ? WEXITSTATUS(w) : -1;
                return true;
              }),
              "");
  return code;
}

// NULL handle and pointers, each call in a child of its own. Where cuBLAS
// checks (returns an error) ours must return the same, neither crash nor
// change the output; elsewhere (cuBLAS returns SUCCESS or crashes) nothing
// is compared and a NOTE says so.
TEST_F(GpuExblasEdges, NullPointersGiveCublasStatusWhereCublasChecksThem) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const double a = 1.5, b = 0.5;
  double r = 0;
  DeviceBuffer<double> dA(64), dx(16), dy(64);
  dA.upload(std::vector<double>(64, 0.5));
  dx.upload(std::vector<double>(16, 0.25));
  SmallBatch sb;
  const GemmArgs g{kN, kN, 4, 5, 6, 4, 6, 4, 2};
  const char *routines[] = {"gemv", "dot (host result)", "dot (device result)", "strided",
                            "pointers"};
  const char *nulls[] = {"handle", "alpha", "beta", "y / result / C / Carray", "Aarray"};
  // Which NULLs each routine is given (bit i: nulls[i]).
  const unsigned given[] = {0xf, 0x9, 0x8, 0xf, 0x1f};
  const std::vector<double> before = poison(64);
  for (int rt = 0; rt < 5; ++rt)
    for (int nu = 0; nu < 5; ++nu) {
      if (!(given[rt] >> nu & 1)) continue;
      const cublasHandle_t h = nu == 0 ? nullptr : h_;
      const double *al = nu == 1 ? nullptr : &a, *be = nu == 2 ? nullptr : &b;
      const bool no_out = nu == 3;
      DeviceBuffer<double> *out = no_out || rt == 1 || rt == 2 ? nullptr
                                  : rt                         ? &sb.C
                                                               : &dy;
      // The status, plus 64 when ours failed and changed the output.
      const auto run = [&](bool o) {
        if (out) out->upload(before);
        cublasStatus_t st;
        if (rt == 0) {
          st =
              pick(o, &cublasDgemv_v2, &xnExdgemv)(h, kN, 4, 4, al, dA.get(), 4, dx.get(),
                                                   1, be, no_out ? nullptr : dy.get(), 1);
        } else if (rt < 3) {
          cublasSetPointerMode(h_, mode(rt == 2));
          st = pick(o, &cublasDdot_v2, &xnExddot)(h, 4, dx.get(), 1, dx.get(), 1,
                                                  no_out ? nullptr : &r);
        } else {
          st = sb.run(o, rt == 3, h, g, al, be, (no_out ? 5 : 0) | (nu == 4 ? 2 : 0));
        }
        const bool changed = o && st != CUBLAS_STATUS_SUCCESS && out &&
                             diff(out->download(), before) != -1;
        return int(st) + (changed ? 64 : 0);
      };
      const int cu = exit_code_in_child([&] { return run(false); });
      const int xn = exit_code_in_child([&] { return run(true); });
      if (cu == -2 || xn == -2) continue;  // in a child
      const std::string what = str(routines[rt], ", NULL ", nulls[nu]);
      const std::string mine =
          xn < 0 ? "crashes" : name(xn % 64) + (xn >= 64 ? ", output changed" : "");
      if (cu <= 0 || cu >= 64) {
        note(str(what, ": cuBLAS ", cu < 0 ? "crashes" : name(cu), ", ours ", mine,
                 "; not compared"));
        continue;
      }
      EXPECT_EQ(xn, cu) << what << ": cuBLAS " << name(cu) << ", ours " << mine;
    }
}

// Both pointer modes, on the default and on a non-blocking stream (waited
// for alone): xnExdgemv over N, T, C, positive and negative increments,
// lda > m (padding NaN, y's gaps and, for beta = 0, y poisoned), and
// xnExddot (negative and zero increments, host or device result), bit for
// bit the host entries' values on the CPU.
TEST_F(GpuExblasEdges, GemvAndDotBitsAreTheHostEntriesInBothModesOnAStream) {
  ASSERT_TRUE(kCpuForced);
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  cudaStream_t own = nullptr;
  XN_CUDA_OK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
  const struct { int m, n; } shapes[] = {{7, 5}, {33, 70}, {130, 3}};
  const cublasOperation_t ops[] = {kN, kT, kC};
  const int incs[][2] = {{1, 1}, {-1, 1}, {2, -3}, {-2, -1}};
  const double scal[][2] = {{1.0, 0.0}, {-0.75, 1.25}, {0x1p-20, -3.0}};
  const int dot_incs[][2] = {{1, 1}, {-1, 1}, {2, -3}, {-3, -1}, {0, -2}};
  DeviceBuffer<double> dA(1 << 14), dx(1 << 14), dy(1 << 14), ds(2), dr(1);
  int gemvs = 0, dots = 0, naive_wrong = 0;
  for (int combo = 0; combo < 4; ++combo) {
    const bool dev = combo & 1;
    cudaStream_t s = (combo & 2) ? own : nullptr;
    XN_CUBLAS_OK(cublasSetStream(h_, s));
    XN_CUBLAS_OK(cublasSetPointerMode(h_, mode(dev)));
    for (const auto &sh : shapes)
      for (cublasOperation_t op : ops)
        for (const auto &inc : incs)
          for (const auto &sc : scal) {
            const int lx = op == kN ? sh.n : sh.m, ly = op == kN ? sh.m : sh.n;
            const int lda = sh.m + 1 + int(rng() % 5);
            std::vector<double> A = draw(std::size_t(lda) * sh.n, rng);
            for (int j = 0; j < sh.n; ++j)
              for (int i = sh.m; i < lda; ++i) A[std::size_t(j) * lda + i] = kNaN;
            const std::vector<double> x = draw(storage(lx, inc[0]), rng);
            std::vector<double> y = poison(storage(ly, inc[1]));
            for (int i = 0; sc[1] != 0.0 && i < ly; ++i)
              y[at(i, ly, inc[1])] = draw1(rng);
            std::vector<double> want = y;
            cblas_exdgemv(XnColMajor,
                          op == kN   ? XnNoTrans
                          : op == kT ? XnTrans
                                     : XnConjTrans,
                          sh.m, sh.n, sc[0], A.data(), lda, x.data(), inc[0], sc[1],
                          want.data(), inc[1]);
            ASSERT_EQ(xnGetLastHostStatus(), 0);
            put(dA, A, s), put(dx, x, s), put(dy, y, s);
            const Scalars p = scalars(dev, sc, ds, s);
            const std::string what =
                str("op ", int(op), " m ", sh.m, " n ", sh.n, " lda ", lda, " incx ",
                    inc[0], " incy ", inc[1], " alpha ", hex(sc[0]), " beta ", hex(sc[1]),
                    " device ", dev, " stream ", combo >> 1);
            ASSERT_EQ(xnExdgemv(h_, op, sh.m, sh.n, p.alpha, dA.get(), lda, dx.get(),
                                inc[0], p.beta, dy.get(), inc[1]),
                      CUBLAS_STATUS_SUCCESS)
                << what;
            const std::vector<double> got = get(dy, y.size(), s);
            ASSERT_EQ(diff(got, want), -1)
                << what << ": y storage " << at_diff(got, want);
            ++gemvs;
          }
    for (int n : {1, 7, 100, 3001})
      for (const auto &inc : dot_incs) {
        const std::vector<double> x = draw(storage(n, inc[0]), rng),
                                  y = draw(storage(n, inc[1]), rng);
        const double want = cblas_exddot(n, x.data(), inc[0], y.data(), inc[1]);
        double naive = 0, got = kNaN;
        for (int i = 0; i < n; ++i) naive += x[at(i, n, inc[0])] * y[at(i, n, inc[1])];
        naive_wrong += !xn_test::ex_same_bits(naive, want);
        put(dx, x, s), put(dy, y, s), put(dr, poison(1), s);
        ASSERT_EQ(
            xnExddot(h_, n, dx.get(), inc[0], dy.get(), inc[1], dev ? dr.get() : &got),
            CUBLAS_STATUS_SUCCESS);
        if (dev) got = get(dr, 1, s)[0];
        ASSERT_TRUE(xn_test::ex_same_bits(got, want))
            << "dot n " << n << " incx " << inc[0] << " incy " << inc[1] << " device "
            << dev << " stream " << (combo >> 1) << ": " << hex(got) << ", want "
            << hex(want);
        ++dots;
      }
  }
  XN_CUBLAS_OK(cublasSetStream(h_, nullptr));
  XN_CUDA_OK(cudaStreamDestroy(own));
  EXPECT_EQ(gemvs, 4 * 3 * 3 * 4 * 3);
  EXPECT_EQ(dots, 4 * 4 * 5);
  EXPECT_GT(naive_wrong, 0);  // the inputs are not trivially exact
}

}  // namespace
