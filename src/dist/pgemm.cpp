// pgemm.cpp - PDNGEMM, PSNGEMM and PEXDGEMM (include/xngemm_dist.h): PDGEMM's
// argument list and checks; each process gathers the rows of op(sub(A)) and
// the columns of op(sub(B)) its part of sub(C) needs and forms that part
// with one local product by the library's host routine (docs/design.md,
// "Distributed GEMM").
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "dist/block_cyclic.h"
#include "dist/scalapack.h"
#include "xngemm.h"
#include "xngemm_dist.h"

namespace xn::dist {

namespace {

template <class T>
using LocalGemm = void (*)(const char *, const char *, const int *, const int *,
                           const int *, const T *, const T *, const int *, const T *,
                           const int *, const T *, T *, const int *);
template <class T>
using Geadd = void (*)(const char *, const int *, const int *, const T *, const T *,
                       const int *, const int *, const int *, const T *, T *, const int *,
                       const int *, const int *, std::size_t);

// What distinguishes the routines: data, one driver.
template <class T>
struct Routine {
  const char *name;    // as PXERBLA reports it
  LocalGemm<T> local;  // the library's host routine for the local product
  Geadd<T> geadd;      // PBLAS's copy between distributions
  bool whole_k;        // the local product needs all of K (correct rounding)
};

const Routine<double> kPdngemm{"PDNGEMM", dngemm_, pdgeadd_, false};
const Routine<float> kPsngemm{"PSNGEMM", sngemm_, psgeadd_, false};
const Routine<double> kPexdgemm{"PEXDGEMM", exdgemm_, pdgeadd_, true};

// How a dimension of sub(C) starting at global index `first` (0-based) is
// dealt out: its first (possibly partial) block, the block size and the
// process holding the first block, so that a new descriptor with these
// lays its entries out exactly as sub(C)'s (same processes, same local
// order).
struct Layout {
  std::int64_t first_block, block;
  int src;
};
Layout layout_from(std::int64_t first, std::int64_t count, std::int64_t ib,
                   std::int64_t b, int src, int procs) {
  if (src < 0) return Layout{std::max<std::int64_t>(count, 1), b, -1};  // replicated
  std::int64_t end = ib;  // one past the block holding `first`
  if (first >= ib) end = ib + ((first - ib) / b + 1) * b;
  const std::int64_t rest = std::min(end - first, count);
  return Layout{std::max<std::int64_t>(rest, 1), b, owner_of(first, ib, b, src, procs)};
}

// A PBLAS eleven-entry (DTYPE 2) descriptor.
struct Desc11 {
  int d[11];
};
Desc11 make_desc(int ctxt, std::int64_t m, std::int64_t n, std::int64_t imb,
                 std::int64_t inb, std::int64_t mb, std::int64_t nb, int rsrc, int csrc,
                 std::int64_t lld) {
  return Desc11{{kBlockCyclic2DInb, ctxt, int(m), int(n), int(imb), int(inb), int(mb),
                 int(nb), rsrc, csrc, int(std::max<std::int64_t>(lld, 1))}};
}

// Whether every process of the grid has `ok` (one integer sum over it).
bool all_ok(int ctxt, bool ok) {
  int bad = ok ? 0 : 1;
  Cigsum2d(ctxt, "All", " ", 1, 1, &bad, 1, -1, -1);
  return bad == 0;
}

// The smallest of every process's `v`.
int grid_min(int ctxt, int v) {
  Cigamn2d(ctxt, "All", " ", 1, 1, &v, 1, nullptr, nullptr, -1, -1, -1);
  return v;
}

// Bytes per process for the strips (XN_OPT_DIST_WORKSPACE_LIMIT); 0 = as
// much as can be allocated.
std::int64_t workspace_limit() {
  std::int64_t v = 0;
  return xnGetOption(nullptr, XN_OPT_DIST_WORKSPACE_LIMIT, &v) == CUBLAS_STATUS_SUCCESS
             ? v
             : 0;
}

// The global arguments of one product, as the Fortran interface has them
// (1-based indices).
template <class T>
struct Problem {
  bool nota, notb;
  int m, n, k;
  T alpha, beta;
  const T *A;
  int ia, ja;
  const int *desca;
  const T *B;
  int ib, jb;
  const int *descb;
  T *C;
  int ic, jc;
  const int *descc;
};

// This process's part of sub(C) = C(ic:ic+m-1, jc:jc+n-1) (1-based): its
// rows and columns, and where the first of them sits in its local array.
struct LocalPart {
  std::int64_t rows, cols, offset;
};
LocalPart local_part(const Grid &g, const Desc &c, std::int64_t m, std::int64_t n, int ic,
                     int jc) {
  const std::int64_t ic0 = ic - 1, jc0 = jc - 1;
  return LocalPart{
      local_count(m, ic0, c.imb, c.mb, g.myrow, c.rsrc, g.nprow),
      local_count(n, jc0, c.inb, c.nb, g.mycol, c.csrc, g.npcol),
      owned_below(ic0, c.imb, c.mb, g.myrow, c.rsrc, g.nprow) +
          owned_below(jc0, c.inb, c.nb, g.mycol, c.csrc, g.npcol) * std::int64_t(c.lld)};
}

// What the last call on this process did (xnGetLastDistInfo).
thread_local int t_bands = 0, t_panels = 0;

// The strips of sub(C) = C(ic.., jc..): op(sub(A))'s rows laid out as
// sub(C)'s rows, kb columns, held whole by every process column;
// op(sub(B))'s columns as sub(C)'s columns, kb rows, held by every process
// row; one local product per panel of K. The widest kb the workspace limit
// and the memory of every process allow; where not even one column fits
// (or, for the correctly rounded product, not all of K), sub(C) is taken
// in two bands of its longer side, each with its own strips. False (on
// every process alike) if memory failed even for one entry of sub(C): the
// bands before it are done, the rest of sub(C) is not.
template <class T>
bool compute(const Routine<T> &rt, const Grid &g, const Problem<T> &pr) {
  const Desc c = to_desc(pr.descc);
  const int ctxt = c.ctxt;
  const std::int64_t m = pr.m, n = pr.n, k = pr.k;
  const std::int64_t ic0 = pr.ic - 1, jc0 = pr.jc - 1;
  const LocalPart part = local_part(g, c, m, n, pr.ic, pr.jc);
  const std::int64_t ml = part.rows, nl = part.cols;

  auto in_bands = [&] {
    if (m == 1 && n == 1) return false;  // nothing smaller to try
    Problem<T> first = pr, second = pr;
    if (m >= n) {  // rows of sub(C): rows of op(sub(A))
      first.m = int(m / 2);
      second.m = int(m - m / 2);
      second.ic += first.m;
      (pr.nota ? second.ia : second.ja) += first.m;
    } else {  // columns of sub(C): columns of op(sub(B))
      first.n = int(n / 2);
      second.n = int(n - n / 2);
      second.jc += first.n;
      (pr.notb ? second.jb : second.ib) += first.n;
    }
    return compute(rt, g, first) && compute(rt, g, second);
  };

  // Panel width: all of K if the limit allows it on every process.
  const std::int64_t limit = workspace_limit();
  const std::int64_t per_column = (ml + nl) * std::int64_t(sizeof(T));
  std::int64_t kb = limit > 0 && per_column > 0 ? std::min(k, limit / per_column) : k;
  kb = grid_min(ctxt, int(kb));
  if (kb < 1 || (rt.whole_k && kb < k)) return in_bands();
  T *sa = nullptr, *sb = nullptr;
  for (;;) {
    sa = new (std::nothrow) T[std::size_t(std::max<std::int64_t>(ml * kb, 1))];
    sb = new (std::nothrow) T[std::size_t(std::max<std::int64_t>(kb * nl, 1))];
    if (all_ok(ctxt, sa && sb)) break;
    delete[] sa;
    delete[] sb;
    sa = sb = nullptr;
    if (rt.whole_k || kb == 1) return in_bands();
    kb = (kb + 1) / 2;
  }

  const Layout rows = layout_from(ic0, m, c.imb, c.mb, c.rsrc, g.nprow);
  const Layout cols = layout_from(jc0, n, c.inb, c.nb, c.csrc, g.npcol);
  T *cl = pr.C + part.offset;
  T dummy[1] = {T(0)};
  const T one = 1, zero = 0;
  const int lda_s = int(std::max<std::int64_t>(ml, 1));
  const int ldb_s = int(std::max<std::int64_t>(kb, 1));
  const int i1 = 1;
  for (std::int64_t k0 = 0; k0 < k; k0 += kb) {
    const int w = int(std::min(kb, k - k0));
    // Process column q receives op(sub(A))(:, k0:k0+w) on its rows.
    for (int q = 0; q < g.npcol; ++q) {
      const Desc11 d =
          make_desc(ctxt, m, w, rows.first_block, w, rows.block, w, rows.src, q, lda_s);
      const int ra = pr.nota ? pr.ia : pr.ia + int(k0);
      const int ca = pr.nota ? pr.ja + int(k0) : pr.ja;
      rt.geadd(pr.nota ? "N" : "T", &pr.m, &w, &one, pr.A, &ra, &ca, pr.desca, &zero,
               q == g.mycol ? sa : dummy, &i1, &i1, d.d, 1);
    }
    // Process row p receives op(sub(B))(k0:k0+w, :) on its columns.
    for (int p = 0; p < g.nprow; ++p) {
      const Desc11 d =
          make_desc(ctxt, w, n, w, cols.first_block, w, cols.block, p, cols.src, ldb_s);
      const int rb = pr.notb ? pr.ib + int(k0) : pr.ib;
      const int cb = pr.notb ? pr.jb : pr.jb + int(k0);
      rt.geadd(pr.notb ? "N" : "T", &w, &pr.n, &one, pr.B, &rb, &cb, pr.descb, &zero,
               p == g.myrow ? sb : dummy, &i1, &i1, d.d, 1);
    }
    // The local product; later panels add to the first.
    if (ml > 0 && nl > 0) {
      const int mi = int(ml), ni = int(nl), ldc = c.lld;
      const T beta_k = k0 == 0 ? pr.beta : one;
      rt.local("N", "N", &mi, &ni, &w, &pr.alpha, sa, &lda_s, sb, &ldb_s, &beta_k, cl,
               &ldc);
    }
  }
  delete[] sa;
  delete[] sb;
  ++t_bands;
  t_panels = std::max<int>(t_panels, int((k + kb - 1) / kb));
  return true;
}

// One call: PDGEMM's checks and quick returns, then compute().
template <class T>
void pgemm(const Routine<T> &rt, const char *transa, const char *transb, int m, int n,
           int k, T alpha, const T *A, int ia, int ja, const int *desca, const T *B,
           int ib, int jb, const int *descb, T beta, T *C, int ic, int jc,
           const int *descc) {
  const Desc a = to_desc(desca), b = to_desc(descb), c = to_desc(descc);
  const int ctxt = a.ctxt;
  Grid g;
  Cblacs_gridinfo(ctxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  const int info =
      check_gemm(g, *transa, *transb, m, n, k, ia, ja, a, ib, jb, b, ic, jc, c);
  auto report = [&](int code) {
    const int pos = -code;
    pxerbla_(&ctxt, rt.name, &pos, std::strlen(rt.name));
  };
  t_bands = t_panels = 0;
  // A process outside the grid cannot take part: it reports and returns.
  if (g.nprow == -1) {
    report(info);
    return;
  }
  // Some checks are local (LLD): the grid agrees before anyone returns.
  if (!all_ok(ctxt, info == 0)) {
    if (info != 0) report(info);
    return;
  }
  // PDGEMM's quick returns.
  if (m == 0 || n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return;

  // alpha = 0 or k = 0: sub(C) := beta sub(C), locally (beta = 0 never
  // reads C; RN(beta c) is what a correctly rounded product gives too).
  if (alpha == T(0) || k == 0) {
    const LocalPart part = local_part(g, c, m, n, ic, jc);
    T *cl = C + part.offset;
    for (std::int64_t j = 0; j < part.cols; ++j)
      for (std::int64_t i = 0; i < part.rows; ++i) {
        T &x = cl[i + j * std::int64_t(c.lld)];
        x = beta == T(0) ? T(0) : beta * x;
      }
    return;
  }
  // The least workspace that works: one row and one column of all of K
  // for the correctly rounded product, of one column of K otherwise.
  const std::int64_t limit = workspace_limit();
  const std::int64_t least = 2 * std::int64_t(sizeof(T)) * (rt.whole_k ? k : 1);
  const bool first = g.myrow == 0 && g.mycol == 0;
  if (!all_ok(ctxt, limit == 0 || limit >= least)) {
    if (first)
      std::fprintf(stderr,
                   "xngemm: %s needs at least %lld bytes of workspace per process "
                   "(XN_DIST_WORKSPACE_LIMIT is %lld on some process): sub(C) is "
                   "unchanged\n",
                   rt.name, (long long)least, (long long)limit);
    return;
  }
  const bool nota = (*transa & ~0x20) == 'N', notb = (*transb & ~0x20) == 'N';
  if (!compute(rt, g,
               Problem<T>{nota, notb, m, n, k, alpha, beta, A, ia, ja, desca, B, ib, jb,
                          descb, C, ic, jc, descc}) &&
      first)
    std::fprintf(stderr,
                 "xngemm: %s could not allocate one row and one column of K = %lld on "
                 "some process: part of sub(C) is not computed\n",
                 rt.name, (long long)k);
}

}  // namespace

}  // namespace xn::dist

extern "C" {

void pdngemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const double *alpha, const double *a, const int *ia,
              const int *ja, const int *desca, const double *b, const int *ib,
              const int *jb, const int *descb, const double *beta, double *c,
              const int *ic, const int *jc, const int *descc) {
  xn::dist::pgemm(xn::dist::kPdngemm, transa, transb, *m, *n, *k, *alpha, a, *ia, *ja,
                  desca, b, *ib, *jb, descb, *beta, c, *ic, *jc, descc);
}

void psngemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const float *alpha, const float *a, const int *ia,
              const int *ja, const int *desca, const float *b, const int *ib,
              const int *jb, const int *descb, const float *beta, float *c, const int *ic,
              const int *jc, const int *descc) {
  xn::dist::pgemm(xn::dist::kPsngemm, transa, transb, *m, *n, *k, *alpha, a, *ia, *ja,
                  desca, b, *ib, *jb, descb, *beta, c, *ic, *jc, descc);
}

void xnGetLastDistInfo(int *bands, int *panels) {
  if (bands) *bands = xn::dist::t_bands;
  if (panels) *panels = xn::dist::t_panels;
}

void pexdgemm_(const char *transa, const char *transb, const int *m, const int *n,
               const int *k, const double *alpha, const double *a, const int *ia,
               const int *ja, const int *desca, const double *b, const int *ib,
               const int *jb, const int *descb, const double *beta, double *c,
               const int *ic, const int *jc, const int *descc) {
  xn::dist::pgemm(xn::dist::kPexdgemm, transa, transb, *m, *n, *k, *alpha, a, *ia, *ja,
                  desca, b, *ib, *jb, descb, *beta, c, *ic, *jc, descc);
}

}  // extern "C"
