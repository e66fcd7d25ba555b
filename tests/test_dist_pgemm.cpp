// test_dist_pgemm.cpp - PDNGEMM, PSNGEMM and PEXDGEMM (include/xngemm_dist.h)
// under mpirun (1, 2, 4 and 6 processes: tests/dist.cmake), on every process
// grid of that many processes and on a smaller one, against ScaLAPACK's own
// PDGEMM/PSGEMM and the exact MPFR oracle:
//  * PEXDGEMM: every entry of sub(C) is the correctly rounded value (the
//    oracle's), so bitwise the same on every grid and block size;
//  * PDNGEMM / PSNGEMM on non-negative operands: every entry within the
//    classical componentwise bound gamma_{k+2+p} (|alpha| |A||B| + |beta||C|)
//    of the exact value (p = extra roundings of the panels of K), as is
//    PDGEMM's; and the two agree within twice that;
//  * entries of C outside sub(C) untouched, beta = 0 never reading C (NaN
//    there), alpha = 0 and k = 0 scaling only, empty products;
//  * bad arguments: the INFO that PBLAS's PDGEMM computes on each process
//    (its abort intercepted here), reported through PXERBLA, C untouched.
// With --device first (`test_dist_pgemm --device [SEED]`), the same with
// every local array in the process's GPU memory (the device engine); exit
// status 77 (skipped) where there is no GPU.
// Shapes, block sizes, grid origins (replicated dimensions included),
// offsets IA..JC, transposes and scalars are drawn at random from a fresh
// seed (printed on failure; `test_dist_pgemm SEED` replays it).
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "distributed/engine.h"
#include "distributed/scalapack.h"
#include "support/mpfr_oracle.h"
#include "xngemm.h"
#include "xngemm_dist.h"

namespace {

int g_rank = 0, g_size = 1;
std::uint64_t g_seed = 0;
int g_failures = 0;
int g_checks = 0;

void fail(const char *fmt, ...) {
  ++g_failures;
  if (g_failures > 30) return;
  std::va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "[rank %d, seed %llu] FAIL: ", g_rank, (unsigned long long)g_seed);
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

// What the library reported through PXERBLA, and what PBLAS's PDGEMM
// computed before it would have stopped the program (PB_Cabort calls
// Cblacs_abort, replaced here by a recorder: PDGEMM then returns).
struct Reported {
  int calls = 0, info = 0;
  std::string name;
} g_pxerbla, g_pblas;

}  // namespace

extern "C" void pxerbla_(const int *, const char *name, const int *info,
                         std::size_t len) {
  ++g_pxerbla.calls;
  g_pxerbla.info = *info;
  g_pxerbla.name.assign(name, len);
}
extern "C" void Cblacs_abort(int, int info) {
  ++g_pblas.calls;
  g_pblas.info = -info;  // as a position, like PXERBLA's
}

namespace {

struct Grid {
  int ctxt = -1, nprow = 0, npcol = 0, myrow = -1, mycol = -1;
  bool in() const { return myrow >= 0 && myrow < nprow && mycol >= 0 && mycol < npcol; }
};

Grid make_grid(int P, int Q) {
  Grid g;
  Cblacs_get(-1, 0, &g.ctxt);
  Cblacs_gridinit(&g.ctxt, "Row", P, Q);
  Cblacs_gridinfo(g.ctxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  return g;
}

// ScaLAPACK's index tools, extended to replicated dimensions (src = -1:
// every process holds every entry, in global order), which PBLAS accepts.
int count_of(int n, int nb, int proc, int src, int procs) {
  return src < 0 ? n : numroc_(&n, &nb, &proc, &src, &procs);
}
bool holds(int g1, int nb, int proc, int src, int procs) {
  return src < 0 || indxg2p_(&g1, &nb, &proc, &src, &procs) == proc;
}
int local_of(int g1, int nb, int proc, int src, int procs) {
  return src < 0 ? g1 - 1 : indxg2l_(&g1, &nb, &proc, &src, &procs) - 1;
}

// A global column-major matrix and this process's part of it under a
// type-1 descriptor.
template <class T>
struct Dist {
  std::int64_t M = 0, N = 0;
  std::vector<T> global;  // every process holds the same global matrix
  std::vector<T> local;
  int desc[9] = {};
  int lr = 0, lc = 0;  // local rows and columns
};

template <class T>
void distribute(const Grid &g, Dist<T> &d, int mb, int nb, int rsrc, int csrc) {
  const int M = int(d.M), N = int(d.N);
  d.lr = count_of(M, mb, g.myrow, rsrc, g.nprow);
  d.lc = count_of(N, nb, g.mycol, csrc, g.npcol);
  const int lld = std::max(1, d.lr);
  d.desc[0] = 1;
  d.desc[1] = g.ctxt;
  d.desc[2] = M;
  d.desc[3] = N;
  d.desc[4] = mb;
  d.desc[5] = nb;
  d.desc[6] = rsrc;
  d.desc[7] = csrc;
  d.desc[8] = lld;
  d.local.assign(std::size_t(lld) * std::size_t(std::max(1, d.lc)),
                 std::numeric_limits<T>::quiet_NaN());
  for (int j = 1; j <= N; ++j) {
    if (!holds(j, nb, g.mycol, csrc, g.npcol)) continue;
    const int lj = local_of(j, nb, g.mycol, csrc, g.npcol);
    for (int i = 1; i <= M; ++i) {
      if (!holds(i, mb, g.myrow, rsrc, g.nprow)) continue;
      const int li = local_of(i, mb, g.myrow, rsrc, g.nprow);
      d.local[std::size_t(li) + std::size_t(lj) * lld] =
          d.global[std::size_t(i - 1) + std::size_t(j - 1) * std::size_t(M)];
    }
  }
}

// Calls f(i, j, local value) for every global entry (0-based) this
// process holds.
template <class T, class F>
void each_local(const Grid &g, const Dist<T> &d, const std::vector<T> &local, F &&f) {
  const int mb = d.desc[4], nb = d.desc[5], rsrc = d.desc[6], csrc = d.desc[7];
  const int lld = d.desc[8];
  for (int j = 1; j <= int(d.N); ++j) {
    if (!holds(j, nb, g.mycol, csrc, g.npcol)) continue;
    const int lj = local_of(j, nb, g.mycol, csrc, g.npcol);
    for (int i = 1; i <= int(d.M); ++i) {
      if (!holds(i, mb, g.myrow, rsrc, g.nprow)) continue;
      const int li = local_of(i, mb, g.myrow, rsrc, g.nprow);
      f(i - 1, j - 1, local[std::size_t(li) + std::size_t(lj) * lld]);
    }
  }
}

template <class T>
std::uint64_t bits_of(T x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof x);
  return b;
}

struct Case {
  char ta = 'N', tb = 'N';
  int m = 0, n = 0, k = 0;
  int ia = 1, ja = 1, ib = 1, jb = 1, ic = 1, jc = 1;
  int mb_a = 1, nb_a = 1, mb_b = 1, nb_b = 1, mb_c = 1, nb_c = 1;
  int rsrc_a = 0, csrc_a = 0, rsrc_b = 0, csrc_b = 0, rsrc_c = 0, csrc_c = 0;
  double alpha = 1, beta = 0;
  // XN_OPT_DIST_WORKSPACE_LIMIT in bytes (0: none): small enough that the
  // ngemm routines take K in panels (limit) and PEXDGEMM takes sub(C) in
  // bands (limit_ex: room for all of K for a few rows and columns).
  long long limit = 0, limit_ex = 0;
  std::string describe() const {
    char s[400];
    std::snprintf(
        s, sizeof s,
        "%c%c m=%d n=%d k=%d A(%d,%d) %dx%d src(%d,%d) B(%d,%d) %dx%d src(%d,%d) "
        "C(%d,%d) %dx%d src(%d,%d) alpha=%g beta=%g limits=%lld,%lld",
        ta, tb, m, n, k, ia, ja, mb_a, nb_a, rsrc_a, csrc_a, ib, jb, mb_b, nb_b, rsrc_b,
        csrc_b, ic, jc, mb_c, nb_c, rsrc_c, csrc_c, alpha, beta, limit, limit_ex);
    return s;
  }
};

Case random_case(const Grid &g, std::mt19937_64 &rng) {
  auto pick = [&](int lo, int hi) {
    return lo + int(rng() % std::uint64_t(hi - lo + 1));
  };
  const int blocks[] = {1, 2, 3, 4, 5, 8, 13, 16};
  const char trans[] = {'N', 'T', 'C', 'n', 't'};
  Case c;
  c.ta = trans[rng() % 5];
  c.tb = trans[rng() % 5];
  const int top = rng() % 5 ? 37 : 90;  // now and then larger local products
  c.m = pick(1, top);
  c.n = pick(1, top);
  c.k = pick(1, top + 8);
  c.ia = pick(1, 4);
  c.ja = pick(1, 4);
  c.ib = pick(1, 4);
  c.jb = pick(1, 4);
  c.ic = pick(1, 4);
  c.jc = pick(1, 4);
  c.mb_a = blocks[rng() % 8];
  c.nb_a = blocks[rng() % 8];
  c.mb_b = blocks[rng() % 8];
  c.nb_b = blocks[rng() % 8];
  c.mb_c = blocks[rng() % 8];
  c.nb_c = blocks[rng() % 8];
  // Now and then a replicated dimension (source -1), which PBLAS accepts.
  auto source = [&](int procs) { return rng() % 8 ? pick(0, procs - 1) : -1; };
  c.rsrc_a = source(g.nprow);
  c.csrc_a = source(g.npcol);
  c.rsrc_b = source(g.nprow);
  c.csrc_b = source(g.npcol);
  c.rsrc_c = source(g.nprow);
  c.csrc_c = source(g.npcol);
  const double scalars[] = {0.0, 1.0, -1.5, 0.75, 2.0 / 3.0};
  c.alpha = rng() % 8 ? scalars[1 + rng() % 4] : 0.0;
  c.beta = scalars[rng() % 5];
  // A third of the cases: room for a few columns of K per process only.
  const int rows = (c.m + g.nprow - 1) / g.nprow + 1;
  const int cols = (c.n + g.npcol - 1) / g.npcol + 1;
  if (rng() % 3 == 0) {
    c.limit = 8LL * (rows + cols) * pick(1, 6);
    c.limit_ex = 8LL * c.k * pick(2, rows + cols);
  }
  return c;
}

bool upper_t(char t) { return t != 'N' && t != 'n'; }

// The operands of a case as global matrices with margins around sub(X).
template <class T>
void make_operands(const Case &c, std::mt19937_64 &rng, bool nonneg, Dist<T> &A,
                   Dist<T> &B, Dist<T> &C) {
  const bool ta = upper_t(c.ta), tb = upper_t(c.tb);
  A.M = (c.ia - 1) + (ta ? c.k : c.m) + int(rng() % 3);
  A.N = (c.ja - 1) + (ta ? c.m : c.k) + int(rng() % 3);
  B.M = (c.ib - 1) + (tb ? c.n : c.k) + int(rng() % 3);
  B.N = (c.jb - 1) + (tb ? c.k : c.n) + int(rng() % 3);
  C.M = (c.ic - 1) + c.m + int(rng() % 3);
  C.N = (c.jc - 1) + c.n + int(rng() % 3);
  std::uniform_real_distribution<double> u01(0, 1);
  std::normal_distribution<double> normal(0, 1);
  auto value = [&] {
    if (nonneg) return T(u01(rng));
    // Signed, 53-bit, exponents spread as exp(randn): exercises the engine.
    return T((u01(rng) - 0.5) * std::exp(normal(rng)));
  };
  for (Dist<T> *d : {&A, &B, &C}) {
    d->global.resize(std::size_t(d->M * d->N));
    for (T &v : d->global) v = value();
  }
}

// A case's operands, made and distributed as the case says (the base
// case of the bad-argument tests has its sources at (0, 0)).
template <class T>
void setup(const Grid &g, const Case &c, std::mt19937_64 &rng, bool nonneg, Dist<T> &A,
           Dist<T> &B, Dist<T> &C) {
  make_operands<T>(c, rng, nonneg, A, B, C);
  distribute(g, A, c.mb_a, c.nb_a, c.rsrc_a, c.csrc_a);
  distribute(g, B, c.mb_b, c.nb_b, c.rsrc_b, c.csrc_b);
  distribute(g, C, c.mb_c, c.nb_c, c.rsrc_c, c.csrc_c);
}

// The entries of sub(C) this process holds, compared by `check`; the rest
// of its local C must equal the input's.
template <class T, class Check>
void check_result(const Grid &g, const Case &c, const Dist<T> &C,
                  const std::vector<T> &before, const std::vector<T> &after,
                  const char *what, Check &&check) {
  std::vector<T> in_order;
  each_local(g, C, before,
             [&](std::int64_t, std::int64_t, T v) { in_order.push_back(v); });
  std::size_t t = 0;
  each_local(g, C, after, [&](std::int64_t i, std::int64_t j, T v) {
    const T was = in_order[t++];
    const bool inside =
        i >= c.ic - 1 && i < c.ic - 1 + c.m && j >= c.jc - 1 && j < c.jc - 1 + c.n;
    ++g_checks;
    if (!inside) {
      if (bits_of(v) != bits_of(was))
        fail("%s: C(%lld,%lld) outside sub(C) changed; %s", what, (long long)i,
             (long long)j, c.describe().c_str());
      return;
    }
    check(i - (c.ic - 1), j - (c.jc - 1), v);
  });
}

// The exact entry (i, j) of sub(C) (0-based in sub(C)).
template <class T>
xn_test::ExactEntry exact_at(const Case &c, const Dist<T> &A, const Dist<T> &B,
                             const Dist<T> &C, std::int64_t i, std::int64_t j) {
  const bool ta = upper_t(c.ta), tb = upper_t(c.tb);
  const T *a = A.global.data() + (c.ia - 1) + (c.ja - 1) * A.M;
  const T *b = B.global.data() + (c.ib - 1) + (c.jb - 1) * B.M;
  const T *c0 = C.global.data() + (c.ic - 1) + (c.jc - 1) * C.M;
  return xn_test::exact_gemm_entry<T>(ta, tb, c.k, T(c.alpha), a, A.M, b, B.M, T(c.beta),
                                      c0, C.M, i, j);
}

using DistGemm = void (*)(const char *, const char *, const int *, const int *,
                          const int *, const double *, const double *, const int *,
                          const int *, const int *, const double *, const int *,
                          const int *, const int *, const double *, double *, const int *,
                          const int *, const int *);

// With --device: the local arrays in this process's GPU memory.
bool g_device = false;

template <class T>
T *to_device(const std::vector<T> &h) {
  void *d = nullptr;
  const std::size_t bytes = std::max<std::size_t>(h.size(), 1) * sizeof(T);
  if (cudaMalloc(&d, bytes) != cudaSuccess ||
      (!h.empty() && cudaMemcpy(d, h.data(), h.size() * sizeof(T),
                                cudaMemcpyHostToDevice) != cudaSuccess)) {
    std::fprintf(stderr, "[rank %d] cannot copy %zu bytes to the GPU\n", g_rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return static_cast<T *>(d);
}

// One call of fn on copies of the local arrays (C poisoned if asked); ours
// get them in GPU memory under --device, PBLAS's (pblas) always on the host.
template <class T, class Fn>
std::vector<T> call(const Case &c, Fn fn, const Dist<T> &A, const Dist<T> &B,
                    const Dist<T> &C, bool poison, bool pblas = false) {
  std::vector<T> out = C.local;
  if (poison)  // beta = 0 must not read C: NaN in sub(C) must not show
    for (T &v : out) v = std::numeric_limits<T>::quiet_NaN();
  const T alpha = T(c.alpha), beta = T(c.beta);
  if (!g_device || pblas) {
    fn(&c.ta, &c.tb, &c.m, &c.n, &c.k, &alpha, A.local.data(), &c.ia, &c.ja, A.desc,
       B.local.data(), &c.ib, &c.jb, B.desc, &beta, out.data(), &c.ic, &c.jc, C.desc);
    return out;
  }
  T *a = to_device(A.local), *b = to_device(B.local), *d = to_device(out);
  fn(&c.ta, &c.tb, &c.m, &c.n, &c.k, &alpha, a, &c.ia, &c.ja, A.desc, b, &c.ib, &c.jb,
     B.desc, &beta, d, &c.ic, &c.jc, C.desc);
  if (!out.empty() && cudaMemcpy(out.data(), d, out.size() * sizeof(T),
                                 cudaMemcpyDeviceToHost) != cudaSuccess)
    fail("cannot copy C back from the GPU");
  cudaFree(a);
  cudaFree(b);
  cudaFree(d);
  return out;
}

template <class T>
constexpr double unit_roundoff() {
  return std::ldexp(1.0, -std::numeric_limits<T>::digits);
}

// One case: the correctly rounded product (double) and the non-negative
// one (double or single) against PDGEMM/PSGEMM and the oracle.
template <class T>
void run_case(const Grid &g, const Case &c, std::mt19937_64 &rng) {
  constexpr bool is_double = sizeof(T) == 8;
  const bool poison = c.beta == 0.0;
  if (is_double) {  // PEXDGEMM on signed data
    Dist<double> A, B, C;
    setup<double>(g, c, rng, false, A, B, C);
    std::vector<double> before = C.local;
    if (poison)
      for (double &v : before) v = std::numeric_limits<double>::quiet_NaN();
    xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, c.limit_ex);
    const std::vector<double> got = call<double>(c, pexdgemm_, A, B, C, poison);
    xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, 0);
    check_result(g, c, C, before, got, "PEXDGEMM",
                 [&](std::int64_t i, std::int64_t j, double v) {
                   const xn_test::ExactEntry e = exact_at(c, A, B, C, i, j);
                   if (bits_of(v) != bits_of(e.hi))
                     fail("PEXDGEMM: sub(C)(%lld,%lld) = %a, correctly rounded %a; %s",
                          (long long)i, (long long)j, v, e.hi, c.describe().c_str());
                 });
  }
  // PDNGEMM / PSNGEMM on non-negative operands, beside PDGEMM / PSGEMM.
  Dist<T> A, B, C;
  setup<T>(g, c, rng, true, A, B, C);
  std::vector<T> before = C.local;
  if (poison)
    for (T &v : before) v = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> ours, theirs;
  xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, c.limit);
  if constexpr (is_double) {
    ours = call<double>(c, pdngemm_, A, B, C, poison);
    theirs = call<double>(c, pdgemm_, A, B, C, poison, true);
  } else {
    ours = call<float>(c, psngemm_, A, B, C, poison);
    theirs = call<float>(c, psgemm_, A, B, C, poison, true);
  }
  xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, 0);
  const char *name = is_double ? "PDNGEMM" : "PSNGEMM";
  // gamma_{k+2+p}: the classical bound, one more rounding of sub(C) per
  // panel of K after the first (at most k panels under a limit).
  const int panels = c.limit > 0 ? c.k : 1;
  const double rounds = double(c.k + 2 + panels - 1);
  const double u = unit_roundoff<T>();
  const double gamma = rounds * u / (1 - rounds * u);
  check_result(g, c, C, before, ours, name, [&](std::int64_t i, std::int64_t j, T v) {
    const xn_test::ExactEntry e = exact_at(c, A, B, C, i, j);
    const double bound = gamma * e.magnitude;
    const double err = std::fabs(double(v) - e.hi) - std::fabs(e.lo);
    if (!(err <= bound))
      fail("%s: sub(C)(%lld,%lld) = %.17g, exact %.17g, error %.3g > bound %.3g; %s",
           name, (long long)i, (long long)j, double(v), e.hi, err, bound,
           c.describe().c_str());
  });
  // PDGEMM meets the classical bound, and the two agree within the sum of
  // the bounds.
  std::vector<T> ours_in_order;
  each_local(g, C, ours,
             [&](std::int64_t, std::int64_t, T v) { ours_in_order.push_back(v); });
  std::size_t idx = 0;
  each_local(g, C, theirs, [&](std::int64_t i, std::int64_t j, T v) {
    const T mine = ours_in_order[idx++];
    const bool inside =
        i >= c.ic - 1 && i < c.ic - 1 + c.m && j >= c.jc - 1 && j < c.jc - 1 + c.n;
    if (!inside) return;
    const xn_test::ExactEntry e = exact_at(c, A, B, C, i - (c.ic - 1), j - (c.jc - 1));
    const double base_rounds = double(c.k + 2);
    const double base_bound = base_rounds * u / (1 - base_rounds * u) * e.magnitude;
    ++g_checks;
    if (!(std::fabs(double(v) - e.hi) - std::fabs(e.lo) <= base_bound))
      fail("%s's reference (ScaLAPACK) out of its own bound at (%lld,%lld); %s", name,
           (long long)i, (long long)j, c.describe().c_str());
    if (!(std::fabs(double(mine) - double(v)) <= gamma * e.magnitude + base_bound))
      fail("%s and ScaLAPACK differ by %.3g at (%lld,%lld); %s", name,
           std::fabs(double(mine) - double(v)), (long long)i, (long long)j,
           c.describe().c_str());
  });
}

// Bad arguments: each mutation of a valid case must give, on every
// process, the INFO PBLAS's PDGEMM computes there, reported through
// PXERBLA as PDNGEMM / PEXDGEMM, with C untouched.
void run_bad_arguments(const Grid &g, std::mt19937_64 &rng) {
  Case base;
  base.ta = 'N';
  base.tb = 'T';
  base.m = 9;
  base.n = 7;
  base.k = 8;
  base.ia = base.jb = 2;
  base.mb_a = base.nb_a = base.mb_b = base.nb_b = base.mb_c = base.nb_c = 2;
  base.alpha = 1.5;
  base.beta = 0.5;
  struct Mutation {
    const char *what;
    void (*apply)(Case &, int *da, int *db, int *dc);
  };
  const Mutation mutations[] = {
      {"transa", [](Case &c, int *, int *, int *) { c.ta = 'X'; }},
      {"transb", [](Case &c, int *, int *, int *) { c.tb = 'q'; }},
      {"m < 0", [](Case &c, int *, int *, int *) { c.m = -1; }},
      {"n < 0", [](Case &c, int *, int *, int *) { c.n = -2; }},
      {"k < 0", [](Case &c, int *, int *, int *) { c.k = -1; }},
      {"ia = 0", [](Case &c, int *, int *, int *) { c.ia = 0; }},
      {"jb = 0", [](Case &c, int *, int *, int *) { c.jb = 0; }},
      {"jc out of bounds", [](Case &c, int *, int *, int *) { c.jc = 50; }},
      {"DESCA dtype", [](Case &, int *da, int *, int *) { da[0] = 7; }},
      {"DESCB context", [](Case &, int *, int *db, int *) { db[1] += 1000; }},
      {"DESCA mb = 0", [](Case &, int *da, int *, int *) { da[4] = 0; }},
      {"DESCB nb = -1", [](Case &, int *, int *db, int *) { db[5] = -1; }},
      {"DESCC rsrc", [](Case &, int *, int *, int *dc) { dc[6] = 99; }},
      {"DESCA csrc", [](Case &, int *da, int *, int *) { da[7] = -2; }},
      {"DESCC m_ = 0", [](Case &, int *, int *, int *dc) { dc[2] = 0; }},
      {"DESCB n_ too small", [](Case &, int *, int *db, int *) { db[3] = 3; }},
      {"m < 0 and DESCC nb = 0",
       [](Case &c, int *, int *, int *dc) {
         c.m = -1;
         dc[5] = 0;
       }},
  };
  for (const Mutation &mu : mutations) {
    Case c = base;
    Dist<double> A, B, C;
    setup<double>(g, base, rng, true, A, B, C);
    mu.apply(c, A.desc, B.desc, C.desc);
    // PBLAS's verdict on this process.
    g_pblas = Reported{};
    call<double>(c, pdgemm_, A, B, C, false, true);
    for (DistGemm fn : {DistGemm(pdngemm_), DistGemm(pexdgemm_)}) {
      g_pxerbla = Reported{};
      const std::vector<double> got = call<double>(c, fn, A, B, C, false);
      const char *name = fn == DistGemm(pdngemm_) ? "PDNGEMM" : "PEXDGEMM";
      ++g_checks;
      if (g_pblas.calls != 1 || g_pblas.info == 0)
        fail("%s: PBLAS found no error", mu.what);
      if (g_pxerbla.calls != 1 || g_pxerbla.info != g_pblas.info ||
          g_pxerbla.name != name)
        fail("%s: %s reported %d call(s), info %d as '%s'; PDGEMM's info %d", mu.what,
             name, g_pxerbla.calls, g_pxerbla.info, g_pxerbla.name.c_str(), g_pblas.info);
      if (std::memcmp(got.data(), C.local.data(), got.size() * sizeof(double)) != 0)
        fail("%s: %s changed C", mu.what, name);
    }
  }
  // An LLD too small on one process only (PBLAS would stop there while the
  // others went on): that process reports DESCC entry LLD (-(1900 + 11)),
  // the others nothing, and every process returns with C untouched.
  if (g.nprow * g.npcol > 1) {
    Case c = base;
    Dist<double> A, B, C;
    setup<double>(g, base, rng, true, A, B, C);
    const bool bad_here = g.myrow == 0 && g.mycol == 0 && C.lr > 1;
    if (bad_here) C.desc[8] = 1;
    for (DistGemm fn : {DistGemm(pdngemm_), DistGemm(pexdgemm_)}) {
      g_pxerbla = Reported{};
      const std::vector<double> got = call<double>(c, fn, A, B, C, false);
      ++g_checks;
      if (bad_here ? (g_pxerbla.calls != 1 || g_pxerbla.info != 1911)
                   : g_pxerbla.calls != 0)
        fail("local LLD: %d report(s), info %d (here %s)", g_pxerbla.calls,
             g_pxerbla.info, bad_here ? "bad" : "fine");
      if (std::memcmp(got.data(), C.local.data(), got.size() * sizeof(double)) != 0)
        fail("local LLD: C changed");
    }
  }
}

// The workspace limit: PEXDGEMM in bands (never panels of K) down to one
// row and one column of K, correctly rounded; below that sub(C) unchanged;
// PDNGEMM in panels of K. xnGetLastDistInfo says what ran.
void run_limit_cases(const Grid &g, std::mt19937_64 &rng) {
  for (int t = 0; t < 3; ++t) {
    Case c = random_case(g, rng);
    c.m = 9 + t;
    c.n = 7;
    c.k = 20 + t;
    c.alpha = t == 1 ? -1.25 : 0.75;  // a product to make (alpha = 0 only scales)
    Dist<double> A, B, C;
    setup<double>(g, c, rng, false, A, B, C);
    int bands = -1, panels = -1;
    // Room for exactly one row and one column of K.
    xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, 16LL * c.k);
    std::vector<double> got = call<double>(c, pexdgemm_, A, B, C, false);
    xnGetLastDistInfo(&bands, &panels);
    ++g_checks;
    if (bands <= 1 || panels != 1)
      fail("PEXDGEMM at the least workspace: %d bands, %d panels; %s", bands, panels,
           c.describe().c_str());
    check_result(g, c, C, C.local, got, "PEXDGEMM in bands",
                 [&](std::int64_t i, std::int64_t j, double v) {
                   if (bits_of(v) != bits_of(exact_at(c, A, B, C, i, j).hi))
                     fail("PEXDGEMM in bands: (%lld,%lld) not correctly rounded; %s",
                          (long long)i, (long long)j, c.describe().c_str());
                 });
    // One byte less: nothing computed, sub(C) unchanged.
    xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, 16LL * c.k - 1);
    got = call<double>(c, pexdgemm_, A, B, C, false);
    xnGetLastDistInfo(&bands, &panels);
    ++g_checks;
    if (bands != 0 || std::memcmp(got.data(), C.local.data(), got.size() * 8) != 0)
      fail("PEXDGEMM below the least workspace: %d bands ran or C changed; %s", bands,
           c.describe().c_str());
    ++g_checks;
    if (xnGetLastDistStatus() != XN_STATUS_UNCHANGED)
      fail("PEXDGEMM below the least workspace: status %d; %s", xnGetLastDistStatus(),
           c.describe().c_str());
    // The local engine cannot run (the host EXDGEMM within a workspace limit
    // below one block): sub(C) unchanged, and said by the status on every
    // process, not only where it failed.
    xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, 0);
    std::int64_t saved_ex = 0;
    xnGetOption(nullptr, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, &saved_ex);
    xnSetOption(nullptr, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, 1);
    got = call<double>(c, pexdgemm_, A, B, C, false);
    xnSetOption(nullptr, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, saved_ex);
    ++g_checks;
    if (xnGetLastDistStatus() != XN_STATUS_UNCHANGED ||
        std::memcmp(got.data(), C.local.data(), got.size() * 8) != 0)
      fail("PEXDGEMM whose local product cannot run: status %d, C %s; %s",
           xnGetLastDistStatus(),
           std::memcmp(got.data(), C.local.data(), got.size() * 8) ? "changed" : "as it was",
           c.describe().c_str());
    // PDNGEMM with room for one column of K per row and column: panels.
    const int rows = (c.m + g.nprow - 1) / g.nprow + 1;
    const int cols = (c.n + g.npcol - 1) / g.npcol + 1;
    xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, 8LL * (rows + cols));
    call<double>(c, pdngemm_, A, B, C, false);
    xnGetLastDistInfo(&bands, &panels);
    ++g_checks;
    if (bands < 1 || panels < 2)
      fail("PDNGEMM with one column of K: %d bands, %d panels; %s", bands, panels,
           c.describe().c_str());
    xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, 0);
    call<double>(c, pexdgemm_, A, B, C, false);
    xnGetLastDistInfo(&bands, &panels);
    ++g_checks;
    if (bands != 1 || panels != 1)
      fail("PEXDGEMM without a limit: %d bands, %d panels", bands, panels);
  }
}

// Transport failures (device engine): the exchange fails on one process
// of the grid (test hook), as NCCL out of memory would. Mode 1: the grid
// agrees before anyone writes sub(C), gives NCCL up and moves the blocks
// over MPI (sub(C) correctly rounded, status 0), or, where MPI was the
// transport already, stops (XN_DIST_UNCHANGED, sub(C) unchanged). Mode 2,
// the fallback failing too, and mode 3, that process failing before its
// exchange: XN_DIST_UNCHANGED on every process, sub(C) unchanged. Never a
// hang (ctest's timeout), and the next call runs. Run last on a grid: a
// grid that gave NCCL up moves its blocks over MPI from then on.
void run_transport_failures(const Grid &g, std::mt19937_64 &rng) {
  if (!g_device || g.nprow * g.npcol < 2) return;
  const int me = g.myrow * g.npcol + g.mycol;
  for (int mode : {1, 3, 2, 0}) {
    Case c = random_case(g, rng);
    c.alpha = 0.75;  // a product to make (alpha = 0 only scales)
    c.limit = c.limit_ex = 0;
    Dist<double> A, B, C;
    setup<double>(g, c, rng, false, A, B, C);
    xn::dist::testing::set_exchange_failure(me == 1 ? mode : 0);
    const std::vector<double> got = call<double>(c, pexdgemm_, A, B, C, false);
    xn::dist::testing::set_exchange_failure(0);
    // The smallest and (negated) the largest outcome over the grid.
    int status[2] = {xnGetLastDistStatus(), -xnGetLastDistStatus()};
    Cigamn2d(g.ctxt, "All", " ", 2, 1, status, 2, nullptr, nullptr, -1, -1, -1);
    ++g_checks;
    if (status[0] != -status[1])
      fail("transport failure (mode %d): the processes disagree on the outcome (%d..%d)",
           mode, status[0], -status[1]);
    const int outcome = xnGetLastDistStatus();
    if (outcome == 0 && mode != 2 && mode != 3) {
      check_result(g, c, C, C.local, got, "PEXDGEMM after a transport failure",
                   [&](std::int64_t i, std::int64_t j, double v) {
                     if (bits_of(v) != bits_of(exact_at(c, A, B, C, i, j).hi))
                       fail("PEXDGEMM after a transport failure (mode %d): (%lld,%lld) "
                            "not correctly rounded; %s",
                            mode, (long long)i, (long long)j, c.describe().c_str());
                   });
    } else if (outcome == XN_DIST_UNCHANGED && mode != 0) {
      if (std::memcmp(got.data(), C.local.data(), got.size() * 8) != 0)
        fail("transport failure (mode %d): XN_DIST_UNCHANGED but C changed; %s", mode,
             c.describe().c_str());
    } else {
      fail("transport failure (mode %d): status %d; %s", mode, outcome,
           c.describe().c_str());
    }
  }
}

// Empty products and the scaling-only cases: sub(C) as beta sub(C); with
// beta = 1 untouched (PBLAS's quick return), signalling NaNs in C staying
// signalling (1 c would quiet them).
void run_edge_cases(const Grid &g, std::mt19937_64 &rng) {
  for (int e = 0; e < 6; ++e) {
    Case c = random_case(g, rng);
    c.m = e == 0 ? 0 : c.m;
    c.n = e == 1 ? 0 : c.n;
    c.k = e == 2 || e == 4 ? 0 : c.k;
    c.alpha = e == 3 || e == 5 ? 0.0 : c.alpha;
    c.beta = e >= 4 ? 1.0 : rng() & 1 ? 0.0 : -0.5;
    for (DistGemm fn : {DistGemm(pdngemm_), DistGemm(pexdgemm_)}) {
      Dist<double> A, B, C;
      setup<double>(g, c, rng, true, A, B, C);
      if (c.beta == 1.0) {
        const std::uint64_t signalling = 0x7ff0000000000badull;
        for (std::size_t i = 0; i < C.global.size(); i += 3)
          std::memcpy(&C.global[i], &signalling, sizeof signalling);
        distribute(g, C, c.mb_c, c.nb_c, c.rsrc_c, c.csrc_c);
      }
      const std::vector<double> got = call<double>(c, fn, A, B, C, false);
      check_result(g, c, C, C.local, got, "edge",
                   [&](std::int64_t i, std::int64_t j, double v) {
                     const double c0 =
                         C.global[std::size_t((c.ic - 1 + i) + (c.jc - 1 + j) * C.M)];
                     const double want =
                         c.beta == 0.0 ? 0.0 : c.beta == 1.0 ? c0 : c.beta * c0;
                     if (bits_of(v) != bits_of(want))
                       fail("edge case %d: sub(C)(%lld,%lld) = %g, want %g; %s", e,
                            (long long)i, (long long)j, v, want, c.describe().c_str());
                   });
    }
  }
}

// The local products recursing (XN_OPT_MIN_SIZE_? 0, leaf 16, set
// process-wide, which the host routines and the device engine's kept handle
// both follow). On the GPU the routine then works in the engine's scratch,
// the memory that held the exchange's blocks (device_engine.cu), also
// between panels of K (the second case). Every process holding part of
// sub(C) reports its levels (xnGetLastDistLevels, the most of its local
// products), some process recursed, and every entry is within
// 2 * 4^levels gamma_{k+1+panels} of the exact one, levels the most any
// process ran (the allowance of xnDngemm's own tests, one more rounding
// per panel).
template <class T>
void run_recursion_cases(const Grid &g, std::mt19937_64 &rng) {
  const xnOption_t ids[4] = {XN_OPT_MIN_SIZE_D, XN_OPT_MIN_SIZE_S, XN_OPT_LEAF_SIZE_D,
                             XN_OPT_LEAF_SIZE_S};
  const std::int64_t recursing[4] = {0, 0, 16, 16};
  std::int64_t saved[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    xnGetOption(nullptr, ids[i], &saved[i]);
    xnSetOption(nullptr, ids[i], recursing[i]);
  }
  const char *name = sizeof(T) == 8 ? "PDNGEMM" : "PSNGEMM";
  for (int t = 0; t < 2; ++t) {
    Case c = random_case(g, rng);
    // Every process's share at least 32 x 32 x 64: a level at leaf 16.
    const int span = 32 * std::max(g.nprow, g.npcol);
    c.m = span + int(rng() % 40);
    c.n = span + int(rng() % 40);
    c.k = 128 + int(rng() % 40);
    c.rsrc_a = c.csrc_a = c.rsrc_b = c.csrc_b = c.rsrc_c = c.csrc_c = 0;
    c.alpha = t == 0 ? 1.0 : 0.75;
    c.limit = c.limit_ex = 0;
    if (t == 1) {  // room for about half of K: two or three panels
      const int rows = (c.m + g.nprow - 1) / g.nprow + 1;
      const int cols = (c.n + g.npcol - 1) / g.npcol + 1;
      c.limit = (long long)sizeof(T) * (rows + cols) * (c.k / 2 + 1);
    }
    Dist<T> A, B, C;
    setup<T>(g, c, rng, true, A, B, C);
    const bool poison = c.beta == 0.0;
    std::vector<T> before = C.local;
    if (poison)
      for (T &v : before) v = std::numeric_limits<T>::quiet_NaN();
    xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, c.limit);
    std::vector<T> got;
    if constexpr (sizeof(T) == 8)
      got = call<double>(c, pdngemm_, A, B, C, poison);
    else
      got = call<float>(c, psngemm_, A, B, C, poison);
    xnSetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, 0);
    int levels = -2, bands = 0, panels = 0;
    xnGetLastDistLevels(&levels);
    xnGetLastDistInfo(&bands, &panels);
    bool holds_part = false;
    each_local(g, C, C.local, [&](std::int64_t i, std::int64_t j, T) {
      holds_part = holds_part || (i >= c.ic - 1 && i < c.ic - 1 + c.m && j >= c.jc - 1 &&
                                  j < c.jc - 1 + c.n);
    });
    ++g_checks;
    if (holds_part ? levels < 0 : levels != -1)
      fail("%s: %d levels reported on a process %s part of sub(C); %s", name, levels,
           holds_part ? "holding" : "without", c.describe().c_str());
    int most = -levels;  // the grid's maximum, as the least of the negations
    Cigamn2d(g.ctxt, "All", " ", 1, 1, &most, 1, nullptr, nullptr, -1, -1, -1);
    most = -most;
    ++g_checks;
    if (most < 1 || (t == 1 && panels < 2))
      fail("%s: at most %d levels, %d panels of K; %s", name, most, panels,
           c.describe().c_str());
    const double rounds = double(c.k + 1 + std::max(panels, 1));
    const double u = unit_roundoff<T>();
    const double bound =
        2.0 * std::pow(4.0, std::max(most, 0)) * rounds * u / (1 - rounds * u);
    check_result(g, c, C, before, got, name, [&](std::int64_t i, std::int64_t j, T v) {
      const xn_test::ExactEntry e = exact_at(c, A, B, C, i, j);
      const double err = std::fabs(double(v) - e.hi) - std::fabs(e.lo);
      if (!(err <= bound * e.magnitude))
        fail(
            "%s recursing (%d levels at most): sub(C)(%lld,%lld) = %.17g, exact %.17g, "
            "error %.3g > %.3g; %s",
            name, most, (long long)i, (long long)j, double(v), e.hi, err,
            bound * e.magnitude, c.describe().c_str());
    });
  }
  for (int i = 0; i < 4; ++i) xnSetOption(nullptr, ids[i], saved[i]);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  // --device: the operands in GPU memory (one GPU per process where there
  // are enough, else shared), the device engine; skipped (77) without one.
  if (argc > 1 && std::strcmp(argv[1], "--device") == 0) {
    g_device = true;
    --argc;
    ++argv;
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
    if (gpus == 0) {
      if (g_rank == 0) std::printf("no GPU: the device-resident cases are skipped\n");
      MPI_Finalize();
      return 77;
    }
    MPI_Comm node;
    int local_rank = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    cudaSetDevice(local_rank % gpus);
  }
  std::uint64_t seed = std::random_device{}() ^ (std::uint64_t(time(nullptr)) << 20);
  if (argc > 1) seed = std::strtoull(argv[1], nullptr, 10);
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  g_seed = seed;
  const int cases = argc > 2 ? std::atoi(argv[2]) : 30;

  // Every P x Q grid of all the processes, and one of fewer (the others
  // stay out of it).
  std::vector<std::pair<int, int>> grids;
  for (int p = 1; p <= g_size; ++p)
    if (g_size % p == 0) grids.push_back({p, g_size / p});
  if (g_size > 2) grids.push_back({2, (g_size - 1) / 2});
  for (const auto &pq : grids) {
    const Grid g = make_grid(pq.first, pq.second);
    std::mt19937_64 rng(seed + std::uint64_t(pq.first * 100 + pq.second));
    if (g.in()) {
      for (int i = 0; i < cases; ++i) {
        const Case c = random_case(g, rng);
        run_case<double>(g, c, rng);
        if (i % 3 == 0) run_case<float>(g, random_case(g, rng), rng);
      }
      run_edge_cases(g, rng);
      run_limit_cases(g, rng);
      run_recursion_cases<double>(g, rng);
      run_recursion_cases<float>(g, rng);
      run_bad_arguments(g, rng);
      run_transport_failures(g, rng);
      Cblacs_gridexit(g.ctxt);
    }
  }
  int totals[2] = {g_failures, g_checks}, sums[2] = {0, 0};
  MPI_Reduce(totals, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_rank == 0)
    std::printf("%d processes, %zu grids, seed %llu: %d checks, %d failures\n", g_size,
                grids.size(), (unsigned long long)seed, sums[1], sums[0]);
  int any = g_failures > 0, any_all = 0;
  MPI_Allreduce(&any, &any_all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_all ? 1 : 0;
}
