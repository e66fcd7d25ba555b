// test_exdgemm_gpu.cpp - xnExdgemm on the GPU (label gpu, skipped without a
// device): bit-for-bit equal to the CPU backend and to the MPFR oracle
// (correct rounding), over the input families and all transposes, both
// pointer modes, a non-default stream, k cut into chunks (long, forced,
// split for skinny shapes), NaN-poisoned outputs, different block
// sizes, cuBLAS's FP64 emulation switched on by the user, the slice DGEMMs on
// checked native-FP64 cuBLASLt algorithms and on the pedantic fallback,
// allocation failure, bad arguments, run-to-run reproducibility, a sampled
// large case, both engines (FP64 slices and modular INT8) with phase
// times, and separate handles on several host threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_exdgemm.h"
#include "backend/cuda/handle_state.h"
#include "backend/cuda/native_dgemm.h"
#include "support/exdgemm_inputs.h"
#include "support/gpu_support.h"
#include "support/mpfr_oracle.h"
#include "support/test_support.h"
#include "xngemm.h"

namespace {

using xn_test::DeviceBuffer;
using xn_test::ExKind;

using xn_test::ex_same;
std::uint64_t bits(double x) { return xn_test::ex_bits(x); }
bool same(double got, double want) { return ex_same(got, want); }

struct Case {
  bool ta, tb;
  int m, n, k, lda, ldb, ldc;
  double alpha, beta;
};

// C's starting values: NaN where beta = 0 (it must not be read), else
// random within its m x n part.
std::vector<double> make_c(int m, int n, int ldc, double beta, std::mt19937_64 &rng) {
  std::vector<double> c(std::size_t(ldc) * n, std::numeric_limits<double>::quiet_NaN());
  if (beta != 0.0)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) c[std::size_t(i + j * ldc)] = xn_test::u53(rng) - 0.5;
  return c;
}

std::vector<double> int_extremes(int m, int n, int k, bool random_signs, std::mt19937_64 &rng,
                                 std::vector<double> &a, std::vector<double> &b);

class GpuExdgemm : public xn_test::CublasHandleFixture<> {
 protected:
  // Runs xnExdgemm with C poisoned where beta == 0; returns C (ldc x n).
  std::vector<double> run(const Case &c, const std::vector<double> &a,
                          const std::vector<double> &b, const std::vector<double> &c0,
                          bool device_scalars = false, cudaStream_t stream = nullptr) {
    DeviceBuffer<double> dA, dB, dC, dS(2);
    dA.upload(a);
    dB.upload(b);
    dC.upload(c0);
    dS.upload({c.alpha, c.beta});
    EXPECT_EQ(cublasSetStream(h_, stream), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasSetPointerMode(h_, device_scalars ? CUBLAS_POINTER_MODE_DEVICE
                                                      : CUBLAS_POINTER_MODE_HOST),
              CUBLAS_STATUS_SUCCESS);
    const double *al = device_scalars ? dS.get() : &c.alpha;
    const double *be = device_scalars ? dS.get() + 1 : &c.beta;
    EXPECT_EQ(xnExdgemm(h_, c.ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                        c.tb ? CUBLAS_OP_T : CUBLAS_OP_N, c.m, c.n, c.k, al, dA.get(),
                        c.lda, dB.get(), c.ldb, be, dC.get(), c.ldc),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST);
    cublasSetStream(h_, nullptr);
    return dC.download();
  }

  std::vector<double> cpu(const Case &c, const std::vector<double> &a,
                          const std::vector<double> &b, const std::vector<double> &c0) {
    std::vector<double> r = c0;
    EXPECT_EQ(xn::cpu_exdgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), c.lda,
                              b.data(), c.ldb, c.beta, r.data(), c.ldc, 0, 0, nullptr),
              xn::Status::Ok);
    return r;
  }

  void check_oracle(const Case &c, const std::vector<double> &a,
                    const std::vector<double> &b, const std::vector<double> &c0,
                    const std::vector<double> &got, const std::string &what) {
    std::vector<xn_test::ExactEntry> want;
    xn_test::exact_gemm<double>(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), c.lda,
                                b.data(), c.ldb, c.beta, c0.data(), c.ldc, want);
    int bad = 0;
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < c.m; ++i)
        if (!same(got[std::size_t(i + j * c.ldc)], want[std::size_t(i + j * c.m)].hi) &&
            bad++ < 5)
          ADD_FAILURE() << what << " (" << i << "," << j << ") got " << std::hexfloat
                        << got[std::size_t(i + j * c.ldc)] << " want "
                        << want[std::size_t(i + j * c.m)].hi;
    EXPECT_EQ(bad, 0) << what;
  }

  // One call on the modular engine (chunk and block options as given; the
  // engine stays forced until the test resets it) on fresh (u - 0.5)
  // exp(phi randn) inputs of c's shape: the CPU's bits checked, the inputs,
  // the result and the report returned for the caller's checks.
  struct ModularRun {
    std::vector<double> a, b, c0, got;
    xnExdgemmInfo_t info{};
  };
  ModularRun run_modular(const Case &c, double phi, int chunk, int block, bool device_scalars,
                         std::mt19937_64 &rng, const std::string &what) {
    ModularRun r;
    xn_test::ex_fill(ExKind::Phi, phi, c.ta, c.tb, c.m, c.n, c.k, r.a, c.lda, r.b, c.ldb,
                     rng);
    r.c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
    EXPECT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 2), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_K_CHUNK, chunk), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_BLOCK, block), CUBLAS_STATUS_SUCCESS);
    r.got = run(c, r.a, r.b, r.c0, device_scalars);
    EXPECT_EQ(xnGetLastExdgemmInfo(h_, &r.info), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(r.info.engine, 2) << what;
    EXPECT_TRUE(xn_test::same_bits(r.got, cpu(c, r.a, r.b, r.c0))) << what;
    return r;
  }

  // The sanitizers' subsets of a fused path: each shape once on the
  // modular engine (padded leading dimensions, beta = 0 every other shape,
  // forced chunk and slots), the CPU's bits (run_modular) and the report's
  // fused_operands; the options reset after.
  struct SmallShape {
    bool ta, tb;
    int m, n, k, chunk, slots;
    double phi;
  };
  void run_small_shapes(const std::vector<SmallShape> &shapes, int fused,
                        std::mt19937_64 &rng) {
    std::uniform_real_distribution<double> ab(-3, 3);
    int index = 0;
    for (const SmallShape &sh : shapes) {
      Case c{sh.ta, sh.tb, sh.m, sh.n, sh.k, 0, 0, 0, ab(rng), index % 2 ? 0.0 : ab(rng)};
      c.lda = (c.ta ? c.k : c.m) + 1;
      c.ldb = (c.tb ? c.n : c.k) + 2;
      c.ldc = c.m + 3;
      const std::string what = "shape " + std::to_string(index);
      xn::testing::set_modular_slots(sh.slots);
      const ModularRun r = run_modular(c, sh.phi, sh.chunk, 0, false, rng, what);
      xn::testing::set_modular_slots(0);
      EXPECT_EQ(r.info.fused_operands, fused) << what << ", " << r.info.moduli << " moduli";
      ++index;
    }
    xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 0);
    xnSetOption(h_, XN_OPT_EXDGEMM_K_CHUNK, 0);
  }

  // int_extremes (op(A) = T, op(B) = N, every entry +-127) under the
  // options and slots in force: the exact product's bits in a NaN-poisoned
  // C; the report returned for the caller's checks.
  xnExdgemmInfo_t run_int_extremes(int m, int n, int k, bool random_signs,
                                   std::mt19937_64 &rng) {
    Case c{true, false, m, n, k, k, k, m, 1.0, 0.0};
    std::vector<double> a, b;
    const std::vector<double> want = int_extremes(m, n, k, random_signs, rng, a, b);
    const std::vector<double> got = run(c, a, b, std::vector<double>(std::size_t(m) * n, NAN));
    xnExdgemmInfo_t info{};
    EXPECT_EQ(xnGetLastExdgemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
    EXPECT_TRUE(xn_test::same_bits(got, want))
        << m << " x " << n << " x " << k << (random_signs ? ", random signs" : ", all 127");
    return info;
  }

};

// Operands of op(A) = T, op(B) = N, k x m and k x n, every entry 127 (or
// +-127 at random): the largest residues for the largest moduli. Returns
// the exact product (|sum| < 2^33 for k <= 2^19: exact in a double).
std::vector<double> int_extremes(int m, int n, int k, bool random_signs, std::mt19937_64 &rng,
                                 std::vector<double> &a, std::vector<double> &b) {
  a.assign(std::size_t(k) * m, 0.0);
  b.assign(std::size_t(k) * n, 0.0);
  for (double &x : a) x = random_signs && (rng() & 1) ? -127.0 : 127.0;
  for (double &x : b) x = random_signs && (rng() & 1) ? -127.0 : 127.0;
  std::vector<double> want(std::size_t(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      std::int64_t sum = 0;
      for (int p = 0; p < k; ++p)
        sum += std::int64_t(a[std::size_t(p + std::size_t(i) * k)]) *
               std::int64_t(b[std::size_t(p + std::size_t(j) * k)]);
      want[std::size_t(i + j * m)] = double(sum);
    }
  return want;
}

TEST_F(GpuExdgemm, FamiliesAndTransposesMatchOracleAndCpuBitwise) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  struct F {
    ExKind kind;
    double phi;
  };
  const F families[] = {
      {ExKind::Phi, 0},        {ExKind::Phi, 1},       {ExKind::Phi, 2},
      {ExKind::Phi, 4},        {ExKind::Phi, 8},       {ExKind::Phi, 16},
      {ExKind::Integer, 0},    {ExKind::Extreme, 0},   {ExKind::Subnormal, 0},
      {ExKind::MixedRange, 0}, {ExKind::ZeroLines, 1}, {ExKind::Overflow, 0}};
  for (const F &f : families)
    for (int t = 0; t < 4; ++t) {
      Case c{bool(t & 1), bool(t & 2), 70, 45, 37, 0, 0, 0, 0, 0};
      c.lda = (c.ta ? c.k : c.m) + 2;
      c.ldb = (c.tb ? c.n : c.k) + 1;
      c.ldc = c.m + 3;
      std::uniform_real_distribution<double> ab(-2, 2);
      c.alpha = t == 0 ? 1.0 : ab(rng);
      c.beta = t == 1 ? 0.0 : ab(rng);
      std::vector<double> a, b;
      xn_test::ex_fill(f.kind, f.phi, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
      const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
      std::ostringstream what;
      what << ex_kind_name(f.kind) << " phi=" << f.phi << " t=" << t;
      const std::vector<double> g = run(c, a, b, c0);
      check_oracle(c, a, b, c0, g, what.str());
      EXPECT_TRUE(xn_test::same_bits(g, cpu(c, a, b, c0)))
          << what.str() << ": GPU != CPU";
    }
}

// The engines on the GPU: forced slices and forced modular (INT8 products)
// give the same bits, both the oracle's; the report names the engine and
// its moduli; automatic takes the modular one for well-scaled data; k above
// the int32 accumulator's exact length (2^17) takes the slices.
TEST_F(GpuExdgemm, EnginesGiveTheSameBitsAndReportThemselves) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  auto with_engine = [&](const Case &c, const std::vector<double> &a,
                         const std::vector<double> &b, const std::vector<double> &c0,
                         int engine, bool dev, xnExdgemmInfo_t *info) {
    EXPECT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, engine), CUBLAS_STATUS_SUCCESS);
    const std::vector<double> r = run(c, a, b, c0, dev);
    EXPECT_EQ(xnGetLastExdgemmInfo(h_, info), CUBLAS_STATUS_SUCCESS);
    return r;
  };
  const ExKind kinds[] = {ExKind::Phi, ExKind::Phi, ExKind::Integer, ExKind::ZeroLines,
                          ExKind::Subnormal};
  const double phis[] = {0, 1, 0, 1, 0};
  for (int f = 0; f < 5; ++f)
    for (int t = 0; t < 4; ++t) {
      Case c{bool(t & 1), bool(t & 2), 130, 97, 211, 0, 0, 0, 0, 0};
      c.lda = (c.ta ? c.k : c.m) + 5;
      c.ldb = (c.tb ? c.n : c.k) + 3;
      c.ldc = c.m + 1;
      std::uniform_real_distribution<double> ab(-2, 2);
      c.alpha = ab(rng);
      c.beta = t == 2 ? 0.0 : ab(rng);
      std::vector<double> a, b;
      xn_test::ex_fill(kinds[f], phis[f], c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb,
                       rng);
      const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
      std::ostringstream what;
      what << ex_kind_name(kinds[f]) << " phi=" << phis[f] << " t=" << t;
      xnExdgemmInfo_t si{}, mi{}, ai{};
      const std::vector<double> slices = with_engine(c, a, b, c0, 1, t == 3, &si);
      const std::vector<double> modular = with_engine(c, a, b, c0, 2, t == 3, &mi);
      const std::vector<double> automatic = with_engine(c, a, b, c0, 0, false, &ai);
      check_oracle(c, a, b, c0, modular, what.str() + " modular");
      EXPECT_TRUE(xn_test::same_bits(slices, modular)) << what.str();
      EXPECT_TRUE(xn_test::same_bits(slices, automatic)) << what.str();
      EXPECT_EQ(si.engine, 1) << what.str();
      EXPECT_EQ(mi.engine, 2) << what.str();
      EXPECT_GT(mi.moduli, 0) << what.str();
      EXPECT_EQ(ai.engine, 2) << what.str() << ": automatic did not take INT8";
    }
  // m and k odd: the INT8 products run over k padded to a multiple of 16.
  {
    Case c{false, false, 70, 44, 37, 70, 37, 70, 1.0, 0.0};
    std::vector<double> a, b;
    xn_test::ex_fill(ExKind::Phi, 0, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
    const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
    xnExdgemmInfo_t oi{};
    const std::vector<double> r = with_engine(c, a, b, c0, 2, false, &oi);
    EXPECT_EQ(oi.engine, 2);
    check_oracle(c, a, b, c0, r, "odd m");
  }
  xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 0);
}

// k cut into chunks: past the int32 accumulator's 2^17, forced short
// (XN_OPT_EXDGEMM_K_CHUNK: several rounds reduced between them), or split
// for parallelism where C is small (skinny shapes: slots summed by the
// reconstruction). The modular engine runs, reports its chunks and slots,
// and keeps the CPU's bits (and the oracle's where k is short enough for
// it), both orientations of op(A) (the residue kernel's two layouts).
TEST_F(GpuExdgemm, LongAndSkinnyKStayOnTheModularEngine) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  struct Shape {
    bool ta, tb;
    int m, n, k;
    int chunk;       // XN_OPT_EXDGEMM_K_CHUNK (0: automatic)
    int min_chunks;  // at least this many chunks reported
    bool split;      // k_slots > 1 expected (automatic split)
    bool oracle;     // also against MPFR
    const char *what;
  };
  const Shape shapes[] = {
      {false, false, 64, 64, (1 << 17) + 33, 0, 2, true, false, "past 2^17, NN"},
      {true, false, 8, 6, (1 << 17) + 1, 0, 2, false, false, "past 2^17, TN"},
      {false, true, 40, 24, 20000, 0, 2, true, false, "skinny, split for parallelism"},
      {false, false, 129, 70, 1000, 48, 21, false, true, "chunks of 48, NN"},
      {true, true, 65, 33, 777, 32, 25, false, true, "chunks of 32, TT"},
      {false, false, 4097, 3, 3001, 0, 1, false, false, "4097 x 3 x 3001"},
  };
  std::uniform_real_distribution<double> ab(-3, 3);
  int index = 0;
  for (const Shape &sh : shapes) {
    Case c{sh.ta, sh.tb, sh.m, sh.n, sh.k, 0, 0, 0, ab(rng), index % 3 == 2 ? 0.0 : ab(rng)};
    c.lda = (c.ta ? c.k : c.m) + 3;
    c.ldb = (c.tb ? c.n : c.k) + 1;
    c.ldc = c.m + 2;
    const ModularRun r = run_modular(c, index % 2, sh.chunk, 0, index % 2 == 1, rng, sh.what);
    EXPECT_GE(r.info.k_chunks, sh.min_chunks) << sh.what;
    if (sh.split) {
      EXPECT_GT(r.info.k_slots, 1) << sh.what;
    }
    EXPECT_LE(r.info.k_slots, r.info.k_chunks) << sh.what;
    if (sh.oracle) check_oracle(c, r.a, r.b, r.c0, r.got, sh.what);
    ++index;
  }
  xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 0);
  xnSetOption(h_, XN_OPT_EXDGEMM_K_CHUNK, 0);
}

// Skinny n: op(B) of at most 4 columns and at most 24 moduli make op(A)'s
// residues inside the products (fused_operands 1), over every layout of op(A) and
// op(B), k in one chunk, past 2^17 (several chunks), in forced short chunks
// and shorter than one step, several row blocks (a forced block: row
// offsets), padded leading dimensions, alpha and beta of every kind; just
// outside the limits (5 columns, more than 24 moduli) the stored residues
// run. The CPU's bits everywhere, MPFR's where k is short. Then the
// largest residues: all entries +-127 at k = 3 2^17 (three chunks, each
// cut into pieces whose reduced sums meet in P), the exact product known.
TEST_F(GpuExdgemm, SkinnyNMakesTheResiduesOfAInsideTheProducts) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  struct Shape {
    bool ta, tb;
    int m, n, k;
    int chunk;   // XN_OPT_EXDGEMM_K_CHUNK (0: automatic)
    int block;   // XN_OPT_EXDGEMM_BLOCK (0: automatic)
    double phi;  // of the inputs (u - 0.5) exp(phi randn)
    bool fused;  // op(A)'s residues made inside the products (fused_operands 1)
    const char *what;
  };
  const Shape shapes[] = {
      {false, false, 4097, 3, 3001, 0, 0, 0, true, "NN 4097 x 3 x 3001"},
      {true, false, 300, 1, 5000, 0, 0, 1, true, "TN one column"},
      {false, true, 129, 4, (1 << 17) + 77, 0, 0, 0, true, "NT past 2^17"},
      {true, true, 70, 2, 999, 48, 0, 1, true, "TT chunks of 48"},
      {false, false, 33, 4, 7, 0, 0, 0, true, "NN k = 7"},
      {false, true, 300, 3, 2000, 0, 64, 1, true, "NT blocks of 64 rows"},
      {true, false, 200, 5, 3000, 0, 0, 0, false, "TN five columns: stored residues"},
      {false, false, 100, 3, 2000, 0, 0, 8, false, "NN phi 8: more than 24 moduli"},
  };
  std::uniform_real_distribution<double> ab(-3, 3);
  int index = 0;
  for (const Shape &sh : shapes) {
    Case c{sh.ta, sh.tb, sh.m, sh.n, sh.k, 0, 0, 0, index % 4 == 1 ? 1.0 : ab(rng),
           index % 3 == 2 ? 0.0 : ab(rng)};
    c.lda = (c.ta ? c.k : c.m) + (index % 2 ? 5 : 0);
    c.ldb = (c.tb ? c.n : c.k) + (index % 2 ? 0 : 3);
    c.ldc = c.m + 1;
    const ModularRun r =
        run_modular(c, sh.phi, sh.chunk, sh.block, index % 2 == 1, rng, sh.what);
    const xnExdgemmInfo_t &info = r.info;
    EXPECT_EQ(info.fused_operands, sh.fused ? 1 : 0) << sh.what << ", " << info.moduli << " moduli";
    if (sh.fused && sh.phi > 0) {
      EXPECT_GT(info.moduli, 16) << sh.what << ": the 24-moduli kernels ran";
    }
    if (sh.fused && std::int64_t(c.m) * c.k >= 100000) {  // op(A)'s residues not allocated
      EXPECT_LT(info.workspace_bytes, std::size_t(info.moduli) * c.m * c.k) << sh.what;
    }
    if (sh.block > 0) {
      EXPECT_GT(info.blocks, 1) << sh.what;
    }
    if (c.k <= 5000) check_oracle(c, r.a, r.b, r.c0, r.got, sh.what);
    ++index;
  }
  xnSetOption(h_, XN_OPT_EXDGEMM_K_CHUNK, 0);
  xnSetOption(h_, XN_OPT_EXDGEMM_BLOCK, 0);

  for (bool random_signs : {false, true}) {
    const xnExdgemmInfo_t info = run_int_extremes(130, 4, 3 << 17, random_signs, rng);
    EXPECT_EQ(info.fused_operands, 1);
    EXPECT_EQ(info.k_chunks, 3);
  }
  xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 0);
}

// The fused products on small shapes (the sanitizers' subset: memcheck and
// racecheck, for the kernels' shared memory): every orientation, 1 to 4
// columns, 16 and more moduli, a forced short chunk, few rows (the
// exponent scan's blocks of several column chunks), the CPU's bits.
TEST_F(GpuExdgemm, SkinnyNSmallShapesKeepTheCpuBits) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  run_small_shapes({{false, false, 300, 3, 700, 0, 0, 0},
                    {true, false, 130, 4, 1000, 0, 0, 1},
                    {false, true, 40, 1, 333, 48, 0, 1},
                    {true, true, 70, 2, 999, 0, 0, 0}}, 1, rng);
}

// Small m and n: blocks of C of at most 64 x 64, at least half full, whose
// rows of op(A) and columns of op(B) span at most 53 bits, with k >= 2^15,
// make both operands' residues inside the INT8 products (fused_operands 2:
// the tile kernel, four moduli a block), over every layout of op(A) and
// op(B), partial tiles, 15 to 17 moduli (the last group of four partly
// past L), k from exactly 2^15 to past 2^17, forced short chunks, several
// chunks a slot (forced slots: reduced between them), padded leading
// dimensions, alpha and beta of every kind, device scalars. Just outside
// (k = 2^15 - 1, 65 rows, a block under half a tile, wider rows at phi 1)
// the stored residues run. The CPU's bits everywhere. Then narrow rows
// whose 2^-low is no double (entries near 2^-1000: the kernel decodes
// them), and the int32 sums at their bound: every entry +-127 at k = 3 2^17
// in two slots (one of them two chunks), the exact product known.
TEST_F(GpuExdgemm, SmallMAndNMakeBothResiduesInsideTheProducts) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  struct Shape {
    bool ta, tb;
    int m, n, k;
    int chunk;   // XN_OPT_EXDGEMM_K_CHUNK (0: automatic)
    int slots;   // forced slots (0: automatic)
    double phi;  // of the inputs (u - 0.5) exp(phi randn)
    int fused;   // fused_operands expected
    const char *what;
  };
  const Shape shapes[] = {
      {false, false, 64, 64, (1 << 17) + 33, 0, 0, 0, 2, "NN 64 x 64 past 2^17"},
      {true, false, 32, 64, 40000, 0, 0, 0, 2, "TN 32 x 64: half a tile"},
      {false, true, 64, 40, 1 << 15, 0, 0, 0, 2, "NT k = 2^15"},
      {true, true, 64, 33, 40000, 48, 4, 0, 2, "TT chunks of 48 in 4 slots"},
      {true, false, 50, 63, 40000, 4096, 3, 0, 2, "TN chunks of 4096 in 3 slots"},
      {false, true, 64, 40, 70001, 0, 0, 0, 2, "NT 64 x 40 x 70001"},
      {false, false, 64, 64, (1 << 15) - 1, 0, 0, 0, 0, "NN k = 2^15 - 1: stored residues"},
      {false, false, 65, 64, 40000, 0, 0, 0, 0, "NN 65 rows: stored residues"},
      {true, true, 32, 63, 40000, 0, 0, 0, 0, "TT 32 x 63, under half a tile: stored"},
      {true, false, 64, 64, 40000, 0, 0, 1, 0, "TN phi 1 (wider rows): stored residues"},
  };
  std::uniform_real_distribution<double> ab(-3, 3);
  int index = 0;
  for (const Shape &sh : shapes) {
    Case c{sh.ta, sh.tb, sh.m, sh.n, sh.k, 0, 0, 0, index % 4 == 1 ? 1.0 : ab(rng),
           index % 3 == 2 ? 0.0 : ab(rng)};
    c.lda = (c.ta ? c.k : c.m) + (index % 2 ? 5 : 0);
    c.ldb = (c.tb ? c.n : c.k) + (index % 2 ? 0 : 3);
    c.ldc = c.m + 1;
    xn::testing::set_modular_slots(sh.slots);
    const ModularRun r = run_modular(c, sh.phi, sh.chunk, 0, index % 2 == 1, rng, sh.what);
    xn::testing::set_modular_slots(0);
    const xnExdgemmInfo_t &info = r.info;
    EXPECT_EQ(info.fused_operands, sh.fused) << sh.what << ", " << info.moduli << " moduli";
    if (sh.slots > 0) {
      EXPECT_EQ(info.k_slots, sh.slots) << sh.what;
      EXPECT_GT(info.k_chunks, info.k_slots) << sh.what << ": several chunks a slot";
    }
    if (sh.fused == 2) {  // no residues allocated; k split over slots
      EXPECT_LT(info.workspace_bytes, std::size_t(info.moduli) * (c.m + c.n) * c.k) << sh.what;
      EXPECT_GT(info.k_slots, 1) << sh.what;
    }
    ++index;
  }
  xnSetOption(h_, XN_OPT_EXDGEMM_K_CHUNK, 0);

  // Narrow rows near 2^-1000 (lowest bits down to 2^-1053: no 2^-low).
  {
    Case c{false, true, 48, 45, 1 << 15, 48, 45, 49, 1.5, -0.5};
    std::vector<double> a(std::size_t(c.lda) * c.k), b(std::size_t(c.ldb) * c.k);
    for (double &x : a) x = std::ldexp(xn_test::u53(rng) - 0.5, -1000);
    for (double &x : b) x = xn_test::u53(rng) - 0.5;
    const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
    const std::vector<double> got = run(c, a, b, c0);
    xnExdgemmInfo_t info{};
    ASSERT_EQ(xnGetLastExdgemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(info.fused_operands, 2) << "rows near 2^-1000";
    EXPECT_TRUE(xn_test::same_bits(got, cpu(c, a, b, c0))) << "rows near 2^-1000";
  }

  xn::testing::set_modular_slots(2);
  for (bool random_signs : {false, true}) {
    const xnExdgemmInfo_t info = run_int_extremes(64, 40, 3 << 17, random_signs, rng);
    EXPECT_EQ(info.fused_operands, 2);
    EXPECT_EQ(info.k_chunks, 3);
    EXPECT_EQ(info.k_slots, 2);
  }
  xn::testing::set_modular_slots(0);
  xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 0);
}

// A vector of `len` entries (one every `step`) whose lowest set bit is
// exactly `low` and whose span (highest bit - low + 1) is exactly `span`:
// random signs, mantissas and exponents in between, some zeros.
void fill_with_span(double *x, int len, int step, int low, int span,
                    std::mt19937_64 &rng) {
  for (int p = 0; p < len; ++p) {
    double v = 0.0;
    if (rng() % 8 != 0) {
      const int top = low + int(rng() % std::uint64_t(span));
      const int bits = std::min(53, top - low + 1);
      const std::uint64_t mant =
          (std::uint64_t(1) << (bits - 1)) | (bits > 1 ? rng() >> (65 - bits) : 0);
      v = std::ldexp(double(mant), top - bits + 1);
    }
    x[std::size_t(p) * step] = rng() & 1 ? -v : v;
  }
  x[0] = std::ldexp(rng() & 1 ? -1.0 : 1.0, low);  // the lowest bit
  const int bits = std::min(53, span);
  x[std::size_t(len - 1) * step] =
      std::ldexp(double((std::uint64_t(1) << bits) - 1), low + span - bits);
}

// Rows of op(A) at every piece count's edges (modular.h, "Pieces": 53/54
// bits, 90/91, 133/134, 177/178, the last beyond the pieces), near the
// bottom of the exponent range (2^-low a normal double or not), with an
// Inf, and empty: the residues of each kind of row on the modular engine,
// against the MPFR oracle and the CPU's bits, both orientations of op(A).
// The launch picks its kernel by the widest row, so a second set stays
// within 90 bits (op(B)'s columns too): the two-piece kernel, at its edge.
TEST_F(GpuExdgemm, RowsOfEveryPieceCountAgainstOracleAndCpu) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  struct Row {
    int low, span;
  };
  const std::vector<Row> four = {{-20, 1},   {5, 53},     {-60, 54},   {-100, 90},
                                 {30, 91},   {-80, 133},  {-200, 134}, {-90, 177},
                                 {0, 178},   {-1023, 60}, {-1024, 60}, {-1010, 140},
                                 {800, 120}, {-7, 70}};
  const std::vector<Row> two = {{-20, 1}, {5, 53},     {-60, 54},   {-100, 90},
                                {30, 89}, {-1023, 60}, {-1024, 60}, {800, 90}};
  const int k = 301, n = 7;
  for (const std::vector<Row> *rows : {&four, &two})
    for (bool ta : {false, true}) {
      const int widest_col = rows == &two ? 90 : 92;
      const int m = int(rows->size()) + 2;  // an Inf row, a zero row
      Case c{ta, false, m, n, k, (ta ? k : m) + 3, k + 1, m + 2, 1.25, ta ? 0.0 : -0.75};
      std::vector<double> a(std::size_t(c.lda) * (ta ? m : k), 0.0),
          b(std::size_t(c.ldb) * n, 0.0);
      const int row_step = ta ? c.lda : 1, pos_step = ta ? 1 : c.lda;
      for (int i = 0; i < m - 2; ++i)
        fill_with_span(a.data() + std::size_t(i) * row_step, k, pos_step, (*rows)[i].low,
                       (*rows)[i].span, rng);
      fill_with_span(a.data() + std::size_t(m - 2) * row_step, k, pos_step, -3, 80, rng);
      a[std::size_t(m - 2) * row_step + std::size_t(k / 2) * pos_step] = INFINITY;
      for (int j = 0; j < n; ++j)  // spans 20 ... widest_col
        fill_with_span(b.data() + std::size_t(j) * c.ldb, k, 1, -10 * j,
                       20 + (widest_col - 20) * j / (n - 1), rng);
      const std::vector<double> c0 = make_c(m, n, c.ldc, c.beta, rng);
      EXPECT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 2), CUBLAS_STATUS_SUCCESS);
      const std::vector<double> got = run(c, a, b, c0);
      xnExdgemmInfo_t info{};
      ASSERT_EQ(xnGetLastExdgemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
      const std::string what =
          std::string(rows == &two ? "two pieces, " : "four pieces, ") +
          (ta ? "op(A) = T" : "op(A) = N");
      EXPECT_EQ(info.engine, 2) << what;
      check_oracle(c, a, b, c0, got, what);
      EXPECT_TRUE(xn_test::same_bits(got, cpu(c, a, b, c0))) << what;
    }
  xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 0);
}

// The fused tiles on the smallest shapes they take (the sanitizers'
// subset: memcheck and racecheck, for the tile kernel's shared memory):
// every orientation, partial tiles, several chunks a slot, the CPU's bits.
TEST_F(GpuExdgemm, SmallMAndNSmallShapesKeepTheCpuBits) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  run_small_shapes({{false, false, 64, 64, 1 << 15, 0, 0, 0},
                    {true, false, 33, 64, 1 << 15, 0, 0, 0},
                    {false, true, 64, 40, 1 << 15, 4096, 3, 0},
                    {true, true, 64, 32, (1 << 15) + 3, 0, 0, 0}}, 2, rng);
}

// The int32 accumulation at its bound: entries of magnitude 127 (residues
// of magnitude 126-127 for the largest moduli), k cut where the engine
// cuts it itself (2^17: each product's partial sums reach 2^17 127^2 =
// 2,114,060,288, 99.4 % of 2^31; a larger kInt32ChunkK would overflow
// here), one slot, so three rounds reduce and accumulate on top of a
// carried residue (beta = 1 in the int32 epilogue; with all entries 127 it
// is -127 for m = 255, the harmless side; random signs reach both). The
// exact products are integers below 2^53: the expected C is computed
// exactly on the host. Also several slots with a partial last round (4
// chunks in slots of 3).
TEST_F(GpuExdgemm, ChunksAtTheInt32BoundKeepTheExactProduct) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  const int m = 8, n = 5, k = 3 << 17;
  for (int slots : {1, 3}) {
    for (bool random_signs : {false, true}) {
      const int kk = slots == 1 ? k : 4 << 17;
      ASSERT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 2), CUBLAS_STATUS_SUCCESS);
      ASSERT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_K_CHUNK, 0), CUBLAS_STATUS_SUCCESS);
      xn::testing::set_modular_slots(slots);
      const xnExdgemmInfo_t info = run_int_extremes(m, n, kk, random_signs, rng);
      xn::testing::set_modular_slots(0);
      EXPECT_EQ(info.engine, 2);
      EXPECT_EQ(info.k_chunks, kk >> 17);
      EXPECT_EQ(info.k_slots, slots);
    }
  }
  xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 0);
  xnSetOption(h_, XN_OPT_EXDGEMM_K_CHUNK, 0);
}

// XN_OPT_EXDGEMM_PHASE_TIMES on the handle: both engines report a time
// for every phase and give the same bits as without it.
TEST_F(GpuExdgemm, PhaseTimesCoverEveryPhaseAndChangeNoBit) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  Case c{false, false, 333, 250, 401, 333, 401, 333, 1.0, 0.0};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 1, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  for (int engine = 1; engine <= 2; ++engine) {
    ASSERT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, engine), CUBLAS_STATUS_SUCCESS);
    const std::vector<double> plain = run(c, a, b, c0);
    xnExdgemmInfo_t pi{}, ti{};
    ASSERT_EQ(xnGetLastExdgemmInfo(h_, &pi), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_PHASE_TIMES, 1), CUBLAS_STATUS_SUCCESS);
    const std::vector<double> timed = run(c, a, b, c0);
    ASSERT_EQ(xnGetLastExdgemmInfo(h_, &ti), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_PHASE_TIMES, 0), CUBLAS_STATUS_SUCCESS);
    check_oracle(c, a, b, c0, timed, "phase times");
    EXPECT_TRUE(xn_test::same_bits(plain, timed)) << "engine " << engine;
    EXPECT_EQ(ti.engine, engine);
    for (int p = 0; p < 4; ++p) {
      EXPECT_GT(ti.phase_ms[p], 0.0) << "engine " << engine << " phase " << p;
      EXPECT_EQ(pi.phase_ms[p], 0.0) << "engine " << engine << " phase " << p;
    }
  }
  xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 0);
}

TEST_F(GpuExdgemm, PointerModesStreamsBlocksAndRepeatsGiveTheSameBits) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  Case c{false, true, 300, 257, 129, 301, 260, 303, -0.75, 1.25};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 1, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  const std::vector<double> ref = run(c, a, b, c0);
  check_oracle(c, a, b, c0, ref, "host scalars");
  EXPECT_TRUE(xn_test::same_bits(ref, run(c, a, b, c0))) << "run to run";
  EXPECT_TRUE(xn_test::same_bits(ref, run(c, a, b, c0, true))) << "device pointer mode";
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_TRUE(xn_test::same_bits(ref, run(c, a, b, c0, false, s)))
      << "non-default stream";
  cudaStreamDestroy(s);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_BLOCK, 64), CUBLAS_STATUS_SUCCESS);
  EXPECT_TRUE(xn_test::same_bits(ref, run(c, a, b, c0))) << "64 x 64 blocks";
  xnExdgemmInfo_t info{};
  ASSERT_EQ(xnGetLastExdgemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(info.blocks, 5 * 5);
  EXPECT_GE(info.wide_entries, 0);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_BLOCK, 0), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, 4 << 20),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_TRUE(xn_test::same_bits(ref, run(c, a, b, c0))) << "4 MiB budget";
  ASSERT_EQ(xnGetLastExdgemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_GT(info.blocks, 1);
  EXPECT_LE(info.workspace_bytes, std::size_t(4) << 20);
}

// cuBLAS's FP64 emulation (fixed-point on tensor cores), requested by the user
// on the handle, must not reach our slice products.
TEST_F(GpuExdgemm, UserEmulationSettingsDoNotChangeTheResult) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  Case c{false, false, 256, 256, 512, 256, 512, 256, 1.0, 0.0};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 1, false, false, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, 0.0, rng);
  const std::vector<double> ref = cpu(c, a, b, c0);
  ASSERT_EQ(cublasSetMathMode(h_, cublasMath_t(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)),
            CUBLAS_STATUS_SUCCESS);
  cublasSetEmulationStrategy(h_, CUBLAS_EMULATION_STRATEGY_EAGER);
  EXPECT_TRUE(xn_test::same_bits(ref, run(c, a, b, c0)));
  cublasMath_t mode;
  ASSERT_EQ(cublasGetMathMode(h_, &mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(int(mode), int(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH))
      << "handle state changed";
}

// The slice products run on a cuBLASLt algorithm checked to be native FP64
// (native_dgemm.h), not on the slower pedantic fallback; the fallback gives
// the same bits. Also run by ctest under CUBLAS_EMULATE_DOUBLE_PRECISION=1
// with an 8-bit emulation mantissa (gpu_exdgemm_under_emulation_env), where
// an emulated slice product would be wrong.
TEST_F(GpuExdgemm, SliceProductsRunNativeAndTheFallbackGivesTheSameBits) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  Case c{true, false, 300, 260, 700, 700, 700, 301, 0.75, 0.5};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 1, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  // The slice engine's products (automatic would take the INT8 ones).
  ASSERT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_ENGINE, 1), CUBLAS_STATUS_SUCCESS);
  std::uint64_t native = 0, fallback = 0;
  xn::testing::reset_native_dgemm_counts();
  const std::vector<double> fast = run(c, a, b, c0);
  xn::testing::native_dgemm_counts(&native, &fallback);
  EXPECT_GT(native, 0u);
  EXPECT_EQ(fallback, 0u) << "a slice DGEMM found no native cuBLASLt algorithm";
  EXPECT_TRUE(xn_test::same_bits(cpu(c, a, b, c0), fast)) << "native slice products";

  xn::testing::set_native_dgemm_disabled(true);
  xn::testing::reset_native_dgemm_counts();
  const std::vector<double> slow = run(c, a, b, c0);
  xn::testing::set_native_dgemm_disabled(false);
  xn::testing::native_dgemm_counts(&native, &fallback);
  EXPECT_EQ(native, 0u);
  EXPECT_GT(fallback, 0u);
  EXPECT_TRUE(xn_test::same_bits(fast, slow)) << "pedantic fallback differs";
}

// The filter of native_dgemm.h rejects every FP64 algorithm that cuBLASLt
// offers with emulation, and accepts some plain FP64 algorithm.
TEST(GpuNativeDgemm, FilterRejectsEmulatedAndAcceptsNativeAlgorithms) {
  XN_REQUIRE_GPU();
  cublasLtHandle_t lt = nullptr;
  ASSERT_EQ(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
  auto count = [&](cublasComputeType_t ct, int *native, int *emulated) {
    int ids[128], got = 0;
    *native = *emulated = 0;
    ASSERT_EQ(cublasLtMatmulAlgoGetIds(lt, ct, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F,
                                       CUDA_R_64F, CUDA_R_64F, 128, ids, &got),
              CUBLAS_STATUS_SUCCESS);
    for (int i = 0; i < got; ++i) {
      cublasLtMatmulAlgo_t algo;
      if (cublasLtMatmulAlgoInit(lt, ct, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F,
                                 CUDA_R_64F, ids[i], &algo) != CUBLAS_STATUS_SUCCESS)
        continue;
      std::uint64_t flags = 0;
      int emulation = 0;
      std::size_t w = 0;
      ASSERT_EQ(
          cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS,
                                            &flags, sizeof flags, &w),
          CUBLAS_STATUS_SUCCESS);
      ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(
                    &algo, CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT, &emulation,
                    sizeof emulation, &w),
                CUBLAS_STATUS_SUCCESS);
      const bool ok = xn::is_native_fp64_algo(flags, emulation);
      if (emulation != 0) {
        EXPECT_FALSE(ok) << "algorithm " << ids[i] << " supports emulation";
        ++*emulated;
      }
      if (ok) ++*native;
    }
  };
  int native = 0, emulated = 0;
  count(CUBLAS_COMPUTE_64F, &native, &emulated);
  EXPECT_GT(native, 0);
  count(CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, &native, &emulated);
  cublasLtDestroy(lt);
  if (emulated == 0) GTEST_SKIP() << "this cuBLASLt offers no emulated FP64 algorithm";
}

TEST_F(GpuExdgemm, AllocationFailureAndBadArgumentsLeaveCUntouched) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  Case c{false, false, 40, 30, 20, 40, 20, 40, 1.0, 0.5};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 0, false, false, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  DeviceBuffer<double> dA, dB, dC;
  dA.upload(a);
  dB.upload(b);
  dC.upload(c0);
  xn::testing::set_fail_workspace_allocations(true);
  xnRelease(h_);  // drop any held regions so the call must allocate
  EXPECT_EQ(xnExdgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &c.alpha, dA.get(),
                      c.lda, dB.get(), c.ldb, &c.beta, dC.get(), c.ldc),
            CUBLAS_STATUS_ALLOC_FAILED);
  xn::testing::set_fail_workspace_allocations(false);
  EXPECT_TRUE(xn_test::same_bits(c0, dC.download()));
  // Bad arguments: cuBLAS's statuses, C untouched.
  const double one = 1.0;
  EXPECT_EQ(xnExdgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, dA.get(), 4,
                      dB.get(), 4, &one, dC.get(), 4),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(xnExdgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, &one, dA.get(), 4, dB.get(),
                      4, &one, dC.get(), 4),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(xnExdgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, 40, 4, 4, &one, dA.get(), 39,
                      dB.get(), 4, &one, dC.get(), 40),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(xnExdgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, 40, 4, 4, &one, dA.get(), 40,
                      dB.get(), 4, &one, dC.get(), 39),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_TRUE(xn_test::same_bits(c0, dC.download()));
  // Quick returns: k = 0 scales by beta; m = 0 does nothing.
  EXPECT_EQ(xnExdgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, 0, &one, dA.get(), c.lda,
                      dB.get(), 1, &c.beta, dC.get(), c.ldc),
            CUBLAS_STATUS_SUCCESS);
  const std::vector<double> scaled = dC.download();
  for (std::size_t i = 0; i < c0.size(); ++i)
    ASSERT_EQ(bits(scaled[i]), bits(c0[i] * c.beta)) << i;
}

// Reference DGEMM's quick return: with beta = 1 and alpha = 0 or k = 0, C
// is not touched at all, so a signalling NaN in it stays signalling (1 c
// would quiet it), for every routine of cublasDgemm's parameters, host and
// device scalars (the device's beta read by the scaling kernel), and the
// batched exdgemm; beta = -1 still scales (-0 becomes +0 only where c was
// -0: one IEEE product). One exception, cuBLAS's own: an alpha of 0 in
// device memory is not seen by the host, and cublasDgemm then forms 0 A B
// + 1 C (measured: the signalling NaN comes back quiet); the recursive
// GEMMs, whose small products are cuBLAS's, give cuBLAS's bits there.
TEST_F(GpuExdgemm, BetaOneWithNoProductLeavesCUntouched) {
  using Gemm = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                  int, int, const double *, const double *, int,
                                  const double *, int, const double *, double *, int);
  const struct {
    const char *name;
    Gemm gemm;
    bool sees_device_alpha;  // (else cuBLAS's bits with a device alpha of 0)
  } routines[] = {{"xnExdgemm", xnExdgemm, true},
                  {"xnDngemm", xnDngemm, false},
                  {"xnDgemmStrassen", xnDgemmStrassen, false},
                  {"xnDgemmWinograd", xnDgemmWinograd, false}};
  const double signalling = xn_test::ex_double(0x7ff0000000000badull);
  constexpr int m = 37, n = 23, ldc = 40;
  std::vector<double> c0(std::size_t(ldc) * n);
  for (std::size_t i = 0; i < c0.size(); ++i)
    c0[i] = i % 4 == 0 ? signalling : i % 4 == 1 ? -0.0 : 0.375 * double(i) - 7.0;
  const std::vector<double> operand(std::size_t(64) * 64, 1.5);
  DeviceBuffer<double> dA, dB, dC, dScalars;
  dA.upload(operand);
  dB.upload(operand);
  for (const auto &r : routines)
    for (const bool device_scalars : {false, true})
      for (const int k : {0, 17})
        for (const double beta : {1.0, -1.0}) {
          const double scalars[2] = {k == 0 ? 2.0 : 0.0, beta};
          dScalars.upload(std::vector<double>(scalars, scalars + 2));
          dC.upload(c0);
          ASSERT_EQ(cublasSetPointerMode(h_, device_scalars ? CUBLAS_POINTER_MODE_DEVICE
                                                            : CUBLAS_POINTER_MODE_HOST),
                    CUBLAS_STATUS_SUCCESS);
          const double *alpha = device_scalars ? dScalars.get() : &scalars[0];
          const double *beta_p = device_scalars ? dScalars.get() + 1 : &scalars[1];
          const cublasStatus_t st = r.gemm(h_, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, alpha,
                                           dA.get(), 64, dB.get(), 64, beta_p, dC.get(), ldc);
          ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS) << r.name;
          const std::vector<double> got = dC.download();
          if (device_scalars && k > 0 && !r.sees_device_alpha) {
            dC.upload(c0);
            ASSERT_EQ(cublasDgemm(h_, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, alpha, dA.get(), 64,
                                  dB.get(), 64, beta_p, dC.get(), ldc),
                      CUBLAS_STATUS_SUCCESS);
            cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST);
            EXPECT_TRUE(xn_test::same_bits(got, dC.download()))
                << r.name << ", device scalars, beta " << beta << ": cuBLAS's bits";
            continue;
          }
          cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST);
          for (std::size_t i = 0; i < got.size(); ++i) {
            const bool scaled = beta != 1.0 && i % ldc < std::size_t(m);
            const double want = scaled ? beta * c0[i] : c0[i];
            // (A scaled NaN is some quiet NaN: payloads differ between CPUs
            // and GPUs.)
            if (scaled && std::isnan(want))
              ASSERT_TRUE(std::isnan(got[i])) << r.name << ": C storage [" << i << "]";
            else
              ASSERT_EQ(bits(got[i]), bits(want))
                  << r.name << (device_scalars ? ", device" : ", host") << " scalars, k "
                  << k << ", beta " << beta << ": C storage [" << i << "]";
          }
        }
  // The batched exdgemm: k = 0 and alpha = 0, host and device scalars.
  for (const bool device_scalars : {false, true})
    for (const int k : {0, 17}) {
      const double scalars[2] = {k == 0 ? 2.0 : 0.0, 1.0};
      dScalars.upload(std::vector<double>(scalars, scalars + 2));
      std::vector<double> batch(c0);
      batch.insert(batch.end(), c0.begin(), c0.end());
      dC.upload(batch);
      ASSERT_EQ(cublasSetPointerMode(h_, device_scalars ? CUBLAS_POINTER_MODE_DEVICE
                                                        : CUBLAS_POINTER_MODE_HOST),
                CUBLAS_STATUS_SUCCESS);
      const cublasStatus_t st = xnExdgemmStridedBatched(
          h_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k,
          device_scalars ? dScalars.get() : &scalars[0], dA.get(), 64, 0, dB.get(), 64, 0,
          device_scalars ? dScalars.get() + 1 : &scalars[1], dC.get(), ldc,
          static_cast<long long>(c0.size()), 2);
      cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST);
      ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS);
      const std::vector<double> got = dC.download();
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(bits(got[i]), bits(batch[i]))
            << "xnExdgemmStridedBatched" << (device_scalars ? ", device" : ", host")
            << " scalars, k " << k << ": C storage [" << i << "]";
    }
}

// A large case against sampled MPFR entries and the CPU on a sampled block.
TEST_F(GpuExdgemm, LargeSampledAgainstOracle) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  Case c{true, false, 2048, 1536, 1024, 1024, 1024, 2048, 1.0, -1.0};
  std::vector<double> a, b;
  xn_test::ex_fill(ExKind::Phi, 1, c.ta, c.tb, c.m, c.n, c.k, a, c.lda, b, c.ldb, rng);
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  const std::vector<double> g = run(c, a, b, c0);
  int bad = 0;
  for (int t = 0; t < 400; ++t) {
    const int i = int(rng() % c.m), j = int(rng() % c.n);
    const xn_test::ExactEntry e = xn_test::exact_gemm_entry<double>(
        c.ta, c.tb, c.k, c.alpha, a.data(), c.lda, b.data(), c.ldb, c.beta, c0.data(),
        c.ldc, i, j);
    if (!same(g[std::size_t(i + j * c.ldc)], e.hi) && bad++ < 5)
      ADD_FAILURE() << "(" << i << "," << j << ")";
  }
  EXPECT_EQ(bad, 0);
}

// The workspace check: n = 16384 under a 1 GiB budget completes and
// gives the same bits as the default (much larger) budget.
TEST_F(GpuExdgemm, OneGiBBudgetAt16384GivesTheSameBits) {
  const int n = 16384;
  std::mt19937_64 rng(xn_test::fresh_seed());
  std::vector<double> a(std::size_t(n) * n), b(std::size_t(n) * n);
  for (auto &x : a) x = xn_test::u53(rng) - 0.5;
  for (auto &x : b) x = xn_test::u53(rng) - 0.5;
  DeviceBuffer<double> dA, dB, dC1, dC2;
  dA.upload(a);
  dB.upload(b);
  dC1.resize(std::size_t(n) * n);
  dC2.resize(std::size_t(n) * n);
  const double one = 1.0, zero = 0.0;
  ASSERT_EQ(xnExdgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA.get(), n, dB.get(),
                      n, &zero, dC1.get(), n),
            CUBLAS_STATUS_SUCCESS);
  xnExdgemmInfo_t big{}, small{};
  ASSERT_EQ(xnGetLastExdgemmInfo(h_, &big), CUBLAS_STATUS_SUCCESS);
  xnRelease(h_);  // drop the large regions
  ASSERT_EQ(xnSetOption(h_, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, std::int64_t(1) << 30),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnExdgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA.get(), n, dB.get(),
                      n, &zero, dC2.get(), n),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnGetLastExdgemmInfo(h_, &small), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_LE(small.workspace_bytes, std::size_t(1) << 30);
  EXPECT_GT(small.blocks, big.blocks);
  std::printf(
      "default budget: %lld blocks of %dx%d, %.2f GiB; 1 GiB budget: %lld blocks of "
      "%dx%d, %.3f GiB; s=%d t=%d\n",
      (long long)big.blocks, big.block_rows, big.block_cols,
      big.workspace_bytes / 1073741824.0, (long long)small.blocks, small.block_rows,
      small.block_cols, small.workspace_bytes / 1073741824.0, small.max_slices_a,
      small.max_slices_b);
  EXPECT_TRUE(xn_test::same_bits(dC1.download(), dC2.download()));
}

// The handle's one workspace: a buffer of xnGetExdgemmWorkspaceSize bytes
// supplied through xnSetWorkspace serves xnExdgemm (C in one block for
// well-scaled data, the same bits as the library's own workspace), then
// xnDngemm and xnDsymv on the same handle; a buffer smaller than the
// smallest block gives ALLOC_FAILED with C untouched.
TEST_F(GpuExdgemm, SuppliedWorkspaceServesEveryRoutine) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const Case c{false, true, 300, 257, 200, 300, 257, 301, -0.75, 1.5};
  std::vector<double> a(std::size_t(c.lda) * c.k), b(std::size_t(c.ldb) * c.k);
  for (auto &x : a) x = xn_test::u53(rng) - 0.5;
  for (auto &x : b) x = xn_test::u53(rng) - 0.5;
  const std::vector<double> c0 = make_c(c.m, c.n, c.ldc, c.beta, rng);
  const std::vector<double> own = run(c, a, b, c0);

  std::size_t bytes = 0;
  ASSERT_EQ(
      xnGetExdgemmWorkspaceSize(h_, CUBLAS_OP_N, CUBLAS_OP_T, c.m, c.n, c.k, &bytes),
      CUBLAS_STATUS_SUCCESS);
  xnRelease(h_);
  DeviceBuffer<char> ws(bytes);
  ASSERT_EQ(xnSetWorkspace(h_, ws.get(), bytes), CUBLAS_STATUS_SUCCESS);
  const std::vector<double> sup = run(c, a, b, c0);
  EXPECT_TRUE(xn_test::same_bits(own, sup));
  check_oracle(c, a, b, c0, sup, "supplied workspace");
  xnExdgemmInfo_t info{};
  ASSERT_EQ(xnGetLastExdgemmInfo(h_, &info), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(info.blocks, 1);
  EXPECT_LE(info.workspace_bytes, bytes);
  std::size_t held = 0;
  ASSERT_EQ(xnGetWorkspaceHeld(h_, &held), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(held, bytes);

  // The same buffer for xnDngemm (recursing: a small leaf) and xnDsymv, each
  // checked against a host product.
  ASSERT_EQ(xnSetOption(h_, XN_OPT_LEAF_SIZE_D, 64), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(h_, XN_OPT_MIN_SIZE_D, 0), CUBLAS_STATUS_SUCCESS);
  const int n = 256;
  std::size_t need = 0;
  ASSERT_EQ(xnGetWorkspaceSize(h_, 'd', CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &need),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_GT(need, 0u);
  ASSERT_LE(need, bytes);
  std::vector<double> sq(std::size_t(n) * n), xv(static_cast<std::size_t>(n));
  for (auto &x : sq) x = xn_test::u53(rng);
  for (auto &x : xv) x = xn_test::u53(rng) - 0.5;
  DeviceBuffer<double> dA, dC(std::size_t(n) * n), dx, dy;
  dA.upload(sq);
  dx.upload(xv);
  dy.upload(std::vector<double>(std::size_t(n), std::nan("")));
  const double one = 1.0, zero = 0.0;
  ASSERT_EQ(xnDngemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA.get(), n, dA.get(),
                     n, &zero, dC.get(), n),
            CUBLAS_STATUS_SUCCESS);
  int levels = -1;
  ASSERT_EQ(xnGetLastLevels(h_, &levels), CUBLAS_STATUS_SUCCESS);
  EXPECT_GE(levels, 1);
  std::size_t symv = 0;
  ASSERT_EQ(xnGetSymvWorkspaceSize(h_, 'd', CUBLAS_FILL_MODE_LOWER, n, &symv),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_LE(symv, bytes);
  EXPECT_EQ(xnDsymv(h_, CUBLAS_FILL_MODE_LOWER, n, &one, dA.get(), n, dx.get(), 1, &zero,
                    dy.get(), 1),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<double> gc = dC.download(), gy = dy.download();
  double worst_c = 0, worst_y = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double ref = 0;  // non-negative terms: a relative bound applies
      for (int p = 0; p < n; ++p)
        ref += sq[std::size_t(i + p * n)] * sq[std::size_t(p + j * n)];
      worst_c = std::max(worst_c, std::fabs(gc[std::size_t(i + j * n)] - ref) / ref);
    }
  for (int i = 0; i < n; ++i) {
    double ref = 0, mag = 0;  // the lower triangle, mirrored
    for (int p = 0; p < n; ++p) {
      const double e = i >= p ? sq[std::size_t(i + p * n)] : sq[std::size_t(p + i * n)];
      ref += e * xv[std::size_t(p)];
      mag += std::fabs(e * xv[std::size_t(p)]);
    }
    worst_y = std::max(worst_y, std::fabs(gy[std::size_t(i)] - ref) / mag);
  }
  EXPECT_LT(worst_c, 1e-13) << "xnDngemm in the supplied workspace";
  EXPECT_LT(worst_y, 1e-14) << "xnDsymv in the supplied workspace";
  ASSERT_EQ(xnGetWorkspaceHeld(h_, &held), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(held, bytes) << "a supplied workspace is never replaced";
  // Those calls used the workspace exdgemm ran in: its report must not change.
  xnExdgemmInfo_t after{};
  ASSERT_EQ(xnGetLastExdgemmInfo(h_, &after), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(after.wide_entries, info.wide_entries);
  EXPECT_EQ(after.blocks, info.blocks);

  // Room for the phase-1 arrays but not for the smallest block of either
  // engine (the modular engine's smallest, 64 x 64 fused tiles, holds at
  // least L 64^2 int32 sums): the call fails after its synchronisation,
  // with ALLOC_FAILED and C untouched; too small even for the phase-1
  // arrays: the same.
  const std::size_t head = xn::ex_detail::head_bytes(c.m, c.n);
  for (std::size_t give : {head + 4096, std::size_t(256)}) {
    xnRelease(h_);
    ASSERT_EQ(xnSetWorkspace(h_, ws.get(), give), CUBLAS_STATUS_SUCCESS);
    DeviceBuffer<double> dA2, dB2, dC2;
    dA2.upload(a);
    dB2.upload(b);
    dC2.upload(c0);
    EXPECT_EQ(xnExdgemm(h_, CUBLAS_OP_N, CUBLAS_OP_T, c.m, c.n, c.k, &c.alpha, dA2.get(),
                        c.lda, dB2.get(), c.ldb, &c.beta, dC2.get(), c.ldc),
              CUBLAS_STATUS_ALLOC_FAILED)
        << give << " bytes";
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(xn_test::same_bits(dC2.download(), c0)) << give << " bytes";
  }
}

// Four host threads, each with its own handle and stream, run both engines
// at once on their own inputs: every result equals the CPU backend's bits
// (the handles' workspaces, constants and reports do not interfere).
TEST(GpuExdgemmThreads, SeparateHandlesOnSeveralHostThreadsGiveTheCpuBits) {
  XN_REQUIRE_GPU();
  const int threads = 4, m = 150, n = 130, k = 170;
  std::vector<int> failures(threads, 0);
  std::vector<std::thread> pool;
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([t, seed, &failures] {
      cublasHandle_t h;
      cudaStream_t s;
      if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
          cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        failures[t] = -1;
        return;
      }
      cublasSetStream(h, s);
      std::mt19937_64 rng(seed + std::uint64_t(t));
      for (int rep = 0; rep < 4; ++rep) {
        const int engine = 1 + (rep + t) % 2;
        xnSetOption(h, XN_OPT_EXDGEMM_ENGINE, engine);
        std::vector<double> a, b;
        xn_test::ex_fill(ExKind::Phi, rep % 2, false, true, m, n, k, a, m, b, n, rng);
        std::vector<double> c0(std::size_t(m) * n), want(c0.size());
        for (double &v : c0) v = double(std::int64_t(rng() % 2001) - 1000) / 7;
        want = c0;
        const double alpha = 0.5 + rep, beta = -1.25;
        if (xn::cpu_exdgemm(false, true, m, n, k, alpha, a.data(), m, b.data(), n, beta,
                            want.data(), m, 0, 0, nullptr) != xn::Status::Ok) {
          ++failures[t];
          continue;
        }
        DeviceBuffer<double> dA, dB, dC;
        dA.upload(a);
        dB.upload(b);
        dC.upload(c0);
        xnExdgemmInfo_t info{};
        if (xnExdgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, dA.get(), m, dB.get(),
                      n, &beta, dC.get(), m) != CUBLAS_STATUS_SUCCESS ||
            cudaStreamSynchronize(s) != cudaSuccess ||
            xnGetLastExdgemmInfo(h, &info) != CUBLAS_STATUS_SUCCESS ||
            info.engine != engine || !xn_test::same_bits(dC.download(), want))
          ++failures[t];
      }
      xnRelease(h);
      cublasDestroy(h);
      cudaStreamDestroy(s);
    });
  for (std::thread &th : pool) th.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
