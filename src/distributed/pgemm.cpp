// pgemm.cpp - PDNGEMM, PSNGEMM and PEXDGEMM (include/xngemm_dist.h): PDGEMM's
// argument list and checks; each process gathers the rows of op(sub(A)) and
// the columns of op(sub(B)) its part of sub(C) needs and forms that part
// with one local product by the library's routine: the host routine for
// operands in host memory, the device routine for operands in GPU memory
// (engine.h; docs/design.md, "Distributed GEMM").
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

#include "api/status_conventions.h"
#include "core/blas_conventions.h"
#include "core/environment.h"
#include "distributed/block_cyclic.h"
#include "distributed/engine.h"
#include "distributed/panel_choice.h"
#include "distributed/scalapack.h"
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
  const char *name;      // as PXERBLA reports it
  LocalGemm<T> local;    // the library's host routine for the local product
  Geadd<T> geadd;        // PBLAS's copy between distributions
  bool whole_k;          // the local product needs all of K (correct rounding)
  DeviceGemm<T> device;  // the library's device routine, for GPU-resident operands
  DeviceWorkspace device_workspace;  // and the workspace it asks for
};

// The workspace of xnSngemm/xnDngemm at the handle's depth, within
// XN_OPT_WORKSPACE_LIMIT (what the routine would allocate by itself).
template <char precision>
std::size_t ngemm_workspace(cublasHandle_t h, int m, int n, int k) {
  std::size_t bytes = 0;
  std::int64_t limit = -1;
  if (xnGetWorkspaceSize(h, precision, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &bytes) !=
      CUBLAS_STATUS_SUCCESS)
    return 0;
  if (xnGetOption(h, XN_OPT_WORKSPACE_LIMIT, &limit) == CUBLAS_STATUS_SUCCESS &&
      limit >= 0)
    bytes = std::min(bytes, std::size_t(limit));
  return bytes;
}

// xnExdgemm's, within its own budget (XN_OPT_EXDGEMM_WORKSPACE_LIMIT).
std::size_t exdgemm_workspace(cublasHandle_t h, int m, int n, int k) {
  std::size_t bytes = 0;
  return xnGetExdgemmWorkspaceSize(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &bytes) ==
                 CUBLAS_STATUS_SUCCESS
             ? bytes
             : 0;
}

const Routine<double> kPdngemm{"PDNGEMM", dngemm_,  pdgeadd_,
                               false,     xnDngemm, ngemm_workspace<'d'>};
const Routine<float> kPsngemm{"PSNGEMM", sngemm_,  psgeadd_,
                              false,     xnSngemm, ngemm_workspace<'s'>};
const Routine<double> kPexdgemm{"PEXDGEMM", exdgemm_,  pdgeadd_,
                                true,       xnExdgemm, exdgemm_workspace};

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

// What the last call on this process did (xnGetLastDistInfo,
// xnGetLastDistLevels, xnGetLastDistStatus); t_written: some process wrote
// part of sub(C) (a band or panel every process finished).
thread_local int t_bands = 0, t_panels = 0, t_levels = -1, t_status = 0;
thread_local bool t_written = false;

// Operands in host memory: PBLAS's PxGEADD moves the strips (DTYPE 2
// descriptors laid out as sub(C)'s rows and columns), the library's host
// routine multiplies.
template <class T>
class HostEngine final : public Engine<T> {
 public:
  HostEngine(const Routine<T> &rt, const Grid &g) : rt_(rt), g_(g) {}
  ~HostEngine() override { release(); }

  // (The host routine allocates its own workspace: routine_workspace is
  // not weighed here.)
  bool reserve(const Problem<T> &pr, std::int64_t ml, std::int64_t nl, std::int64_t kb,
               bool) override {
    release();
    const Desc c = to_desc(pr.descc);
    ml_ = ml;
    nl_ = nl;
    kb_ = kb;
    rows_ = layout_from(pr.ic - 1, pr.m, c.imb, c.mb, c.rsrc, g_.nprow);
    cols_ = layout_from(pr.jc - 1, pr.n, c.inb, c.nb, c.csrc, g_.npcol);
    sa_ = new (std::nothrow) T[std::size_t(std::max<std::int64_t>(ml * kb, 1))];
    sb_ = new (std::nothrow) T[std::size_t(std::max<std::int64_t>(kb * nl, 1))];
    return sa_ && sb_;
  }
  void release() override {
    delete[] sa_;
    delete[] sb_;
    sa_ = sb_ = nullptr;
  }
  bool gather(const Problem<T> &pr, std::int64_t k0, int w) override {
    const int ctxt = to_desc(pr.descc).ctxt;
    const T one = 1, zero = 0;
    const int i1 = 1;
    T dummy[1] = {T(0)};
    // Process column q receives op(sub(A))(:, k0:k0+w) on its rows.
    for (int q = 0; q < g_.npcol; ++q) {
      const Desc11 d = make_desc(ctxt, pr.m, w, rows_.first_block, w, rows_.block, w,
                                 rows_.src, q, lda());
      const int ra = pr.nota ? pr.ia : pr.ia + int(k0);
      const int ca = pr.nota ? pr.ja + int(k0) : pr.ja;
      rt_.geadd(pr.nota ? "N" : "T", &pr.m, &w, &one, pr.A, &ra, &ca, pr.desca, &zero,
                q == g_.mycol ? sa_ : dummy, &i1, &i1, d.d, 1);
    }
    // Process row p receives op(sub(B))(k0:k0+w, :) on its columns.
    for (int p = 0; p < g_.nprow; ++p) {
      const Desc11 d = make_desc(ctxt, w, pr.n, w, cols_.first_block, w, cols_.block, p,
                                 cols_.src, ldb());
      const int rb = pr.notb ? pr.ib + int(k0) : pr.ib;
      const int cb = pr.notb ? pr.jb : pr.jb + int(k0);
      rt_.geadd(pr.notb ? "N" : "T", &w, &pr.n, &one, pr.B, &rb, &cb, pr.descb, &zero,
                p == g_.myrow ? sb_ : dummy, &i1, &i1, d.d, 1);
    }
    return true;
  }
  bool product(const Problem<T> &pr, std::int64_t ml, std::int64_t nl, int w, T beta,
               T *cl, int ldc) override {
    const int mi = int(ml), ni = int(nl), la = lda(), lb = ldb();
    rt_.local("N", "N", &mi, &ni, &w, &pr.alpha, sa_, &la, sb_, &lb, &beta, cl, &ldc);
    // (The host EXDGEMM cannot run within a workspace limit below one block.)
    return xnGetLastHostStatus() == 0;
  }
  // The host routines fail before they write C (xnGetLastHostStatus).
  bool failed_product_may_write() const override { return false; }
  int last_levels() const override {
    int levels = -1;
    xnGetLastLevels(nullptr, &levels);
    return levels;
  }
  bool scale(T beta, T *cl, std::int64_t rows, std::int64_t cols, int ldc) override {
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t i = 0; i < rows; ++i) {
        T &x = cl[i + j * std::int64_t(ldc)];
        x = beta == T(0) ? T(0) : beta * x;
      }
    return true;
  }

 private:
  int lda() const { return int(std::max<std::int64_t>(ml_, 1)); }
  int ldb() const { return int(std::max<std::int64_t>(kb_, 1)); }
  const Routine<T> &rt_;
  Grid g_;
  std::int64_t ml_ = 0, nl_ = 0, kb_ = 0;
  Layout rows_{}, cols_{};
  T *sa_ = nullptr, *sb_ = nullptr;
};

// The strips of sub(C) = C(ic.., jc..): op(sub(A))'s rows laid out as
// sub(C)'s rows, kb columns, held whole by every process column;
// op(sub(B))'s columns as sub(C)'s columns, kb rows, held by every process
// row; one local product per panel of K. The widest kb the workspace limit
// and the memory of every process allow, with the local routine's
// workspace in the same budget (panel_tries); where not even one column
// fits (or, for the correctly rounded product, not all of K), sub(C) is
// taken in two bands of its longer side, each with its own strips. False (on
// every process alike) if memory failed even for one entry of sub(C), or
// the engine failed: the bands before it are done, the rest of sub(C) is
// not.
template <class T>
bool compute(const Routine<T> &rt, Engine<T> &engine, const Grid &g,
             const Problem<T> &pr) {
  const Desc c = to_desc(pr.descc);
  const int ctxt = c.ctxt;
  const std::int64_t m = pr.m, n = pr.n, k = pr.k;
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
    return compute(rt, engine, g, first) && compute(rt, engine, g, second);
  };

  // Panel width: all of K if the limit allows it on every process.
  const std::int64_t limit = workspace_limit();
  const std::int64_t per_column = (ml + nl) * std::int64_t(sizeof(T));
  std::int64_t kb = limit > 0 && per_column > 0 ? std::min(k, limit / per_column) : k;
  kb = grid_min(ctxt, int(kb));
  if (kb < 1 || (rt.whole_k && kb < k)) return in_bands();
  bool reserved = false;
  for (const PanelTry &t : panel_tries(kb, rt.whole_k)) {
    reserved = all_ok(ctxt, engine.reserve(pr, ml, nl, t.kb, t.routine_workspace));
    if (reserved) {
      kb = t.kb;
      break;
    }
    engine.release();
  }
  if (!reserved) return in_bands();

  T *cl = pr.C + part.offset;
  bool ok = true;
  for (std::int64_t k0 = 0; k0 < k && ok; k0 += kb) {
    const int w = int(std::min(kb, k - k0));
    // Every process has its strips before any touches sub(C): a gather
    // that failed anywhere (memory, the transport) leaves sub(C) as it was.
    if (!all_ok(ctxt, engine.gather(pr, k0, w))) {
      ok = false;
      break;
    }
    // The local product; later panels add to the first.
    bool mine = true;
    const bool has_part = ml > 0 && nl > 0;
    if (has_part) {
      mine = engine.product(pr, ml, nl, w, k0 == 0 ? pr.beta : T(1), cl, c.lld);
      const int levels = engine.last_levels();
      if (!rt.whole_k && levels >= 0) t_levels = std::max(t_levels, levels);
    }
    if (k0 + kb >= k) mine = engine.finish() && mine;
    ok = all_ok(ctxt, mine);
    // Written: by every process after a success; after a failure, where a
    // product succeeded or may have written before failing (the grid agrees).
    // (ok is the grid's: every process takes the same branch.)
    if (ok) {
      t_written = true;
    } else {
      const bool wrote = has_part && (mine || engine.failed_product_may_write());
      const bool any_wrote = !all_ok(ctxt, !wrote);
      t_written = t_written || any_wrote;
    }
  }
  engine.release();
  if (!ok) return false;
  ++t_bands;
  t_panels = std::max<int>(t_panels, int((k + kb - 1) / kb));
  return true;
}

// Whether this process holds any entry of sub(X) = X(ix.., jx..) (1-based)
// of rows x cols.
bool holds(const Grid &g, const Desc &d, int ix, int jx, std::int64_t rows,
           std::int64_t cols) {
  return local_count(rows, ix - 1, d.imb, d.mb, g.myrow, d.rsrc, g.nprow) > 0 &&
         local_count(cols, jx - 1, d.inb, d.nb, g.mycol, d.csrc, g.npcol) > 0;
}

// Where the operands are, agreed by the grid: -1 host memory, otherwise
// the GPU of this process's operands (its current device if it holds none
// of them). -2 if some process has them in GPU memory and another in host
// memory (or one process has both).
template <class T>
int operands_device(const Grid &g, const Problem<T> &pr) {
  const Desc a = to_desc(pr.desca), b = to_desc(pr.descb), c = to_desc(pr.descc);
  int on_host = 0, on_gpu = 0, device = -1;
  auto look = [&](const void *p, bool held) {
    if (!held) return;
    const int d = device_holding(p);
    if (d < 0) {
      ++on_host;
    } else {
      if (device >= 0 && d != device) ++on_host;  // two GPUs: not one engine
      device = d;
      ++on_gpu;
    }
  };
  const std::int64_t m = pr.m, n = pr.n, k = pr.k;
  look(pr.A, pr.nota ? holds(g, a, pr.ia, pr.ja, m, k) : holds(g, a, pr.ia, pr.ja, k, m));
  look(pr.B, pr.notb ? holds(g, b, pr.ib, pr.jb, k, n) : holds(g, b, pr.ib, pr.jb, n, k));
  look(pr.C, holds(g, c, pr.ic, pr.jc, m, n));
  int counts[2] = {on_host, on_gpu};
  Cigsum2d(c.ctxt, "All", " ", 2, 1, counts, 2, -1, -1);
  if (counts[1] == 0) return -1;
  if (counts[0] > 0) return -2;
  if (device < 0) device = current_device();
  return device;
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
  t_levels = -1;
  t_status = 0;
  t_written = false;
  // A process outside the grid cannot take part: it reports and returns.
  if (g.nprow == -1) {
    report(info);
    t_status = info != 0 ? info : outcome_of(Status::InvalidValue, false);
    return;
  }
  // Some checks are local (LLD): the grid agrees before anyone returns.
  if (!all_ok(ctxt, info == 0)) {
    if (info != 0) report(info);
    t_status = info != 0 ? info : outcome_of(Status::InvalidValue, false);
    return;
  }
  // PDGEMM's quick returns.
  if (m == 0 || n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return;

  const bool nota = !blas::transposes(*transa), notb = !blas::transposes(*transb);
  const Problem<T> pr{nota,  notb, m,  n,  k,     alpha, beta, A,  ia,   ja,
                      desca, B,    ib, jb, descb, C,     ic,   jc, descc};
  const bool first = g.myrow == 0 && g.mycol == 0;

  // Host memory: PBLAS and the host routine; GPU memory: the device engine.
  const int device = operands_device(g, pr);
  if (device == -2) {
    t_status = outcome_of(Status::NotSupported, false);  // mixed arrays
    if (first)
      diagnostic(
          "%s needs the local arrays of A, B and C in host memory on "
          "every process, or in one GPU's memory on every process: sub(C) is "
          "unchanged",
          rt.name);
    return;
  }
  std::unique_ptr<Engine<T>> engine;
  if (device >= 0)
    engine =
        make_device_engine<T>(ctxt, g, device, rt.device, rt.device_workspace, rt.name);
  else
    engine = std::make_unique<HostEngine<T>>(rt, g);
  if (!all_ok(ctxt, engine != nullptr)) {
    t_status = outcome_of(Status::ExecutionFailed, false);
    if (first)
      diagnostic("%s could not set up its GPU work: sub(C) is unchanged", rt.name);
    return;
  }

  // alpha = 0 or k = 0: sub(C) := beta sub(C), locally (beta = 0 never
  // reads C; RN(beta c) is what a correctly rounded product gives too).
  if (alpha == T(0) || k == 0) {
    const LocalPart part = local_part(g, c, m, n, ic, jc);
    const bool scaled = engine->scale(beta, C + part.offset, part.rows, part.cols, c.lld) &&
                        engine->finish();
    if (!scaled)
      diagnostic("%s could not scale sub(C) on process (%d, %d)", rt.name, g.myrow,
                 g.mycol);
    t_status =
        outcome_of(all_ok(ctxt, scaled) ? Status::Ok : Status::ExecutionFailed, true);
    return;
  }
  // The least workspace that works: one row and one column of all of K
  // for the correctly rounded product, of one column of K otherwise.
  const std::int64_t limit = workspace_limit();
  const std::int64_t least = 2 * std::int64_t(sizeof(T)) * (rt.whole_k ? k : 1);
  if (!all_ok(ctxt, limit == 0 || limit >= least)) {
    t_status = outcome_of(Status::AllocFailed, false);
    if (first)
      diagnostic(
          "%s needs at least %lld bytes of workspace per process "
          "(XN_DIST_WORKSPACE_LIMIT is %lld on some process): sub(C) is "
          "unchanged",
          rt.name, (long long)least, (long long)limit);
    return;
  }
  if (compute(rt, *engine, g, pr)) return;
  t_status = outcome_of(Status::ExecutionFailed, t_written);
  if (first)
    diagnostic(
        "%s could not get memory for one row and one column of K = "
        "%lld, or its transport or GPU work failed, on some process: %s",
        rt.name, (long long)k,
        t_written ? "part of sub(C) is not computed" : "sub(C) is unchanged");
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

void xnGetLastDistLevels(int *levels) {
  if (levels) *levels = xn::dist::t_levels;
}

int xnGetLastDistStatus(void) { return xn::dist::t_status; }

void pexdgemm_(const char *transa, const char *transb, const int *m, const int *n,
               const int *k, const double *alpha, const double *a, const int *ia,
               const int *ja, const int *desca, const double *b, const int *ib,
               const int *jb, const int *descb, const double *beta, double *c,
               const int *ic, const int *jc, const int *descc) {
  xn::dist::pgemm(xn::dist::kPexdgemm, transa, transb, *m, *n, *k, *alpha, a, *ia, *ja,
                  desca, b, *ib, *jb, descb, *beta, c, *ic, *jc, descc);
}

}  // extern "C"
