// block_cyclic.cpp - PBLAS's argument checks of PDGEMM (block_cyclic.h).
#include "distributed/block_cyclic.h"

#include "core/blas_conventions.h"

namespace xn::dist {

namespace {

// PBLAS ranks errors on one scale: a scalar argument at position p counts
// p * kDescMult, entry e of the descriptor at position p counts
// p * kDescMult + e; the smallest wins, and "no error" is kNoError.
constexpr int kDescMult = 100;
constexpr int kNoError = kDescMult * kDescMult;

// The running error on the internal scale, from a routine's INFO.
int to_scale(int info) {
  if (info >= 0) return kNoError;
  if (info < -kDescMult) return -info;  // already a descriptor entry
  return -info * kDescMult;
}

// Back to INFO: -(position) or -(100 position + entry); 0 for none.
int to_info(int scaled) {
  if (scaled == kNoError) return 0;
  if (scaled % kDescMult == 0) return -(scaled / kDescMult);
  return -scaled;
}

bool legal_trans(char t) { return blas::valid_trans(t); }

}  // namespace

void check_matrix(const Grid &g, int ctxt, std::int64_t m, int mpos, std::int64_t n,
                  int npos, std::int64_t ix, std::int64_t jx, const Desc &d, int dpos,
                  int *info) {
  int e = to_scale(*info);
  auto flag = [&e](int v) { e = std::min(e, v); };
  const int ipos = (dpos - 2) * kDescMult, jpos = (dpos - 1) * kDescMult;
  const int entry = dpos * kDescMult;  // + Desc::Entry
  if (m < 0) flag(mpos * kDescMult);
  if (n < 0) flag(npos * kDescMult);
  if (ix < 0) flag(ipos);
  if (jx < 0) flag(jpos);
  // Only the block-cyclic types are read (to_desc maps both to the same
  // form), and operands must share the routine's context: no further
  // check is meaningful after either error.
  if (d.dtype != kBlockCyclic2D && d.dtype != kBlockCyclic2DInb) {
    flag(entry + Desc::kDtype);
    *info = to_info(e);
    return;
  }
  if (d.ctxt != ctxt) {
    flag(entry + Desc::kCtxt);
    *info = to_info(e);
    return;
  }
  if (d.imb < 1) flag(entry + Desc::kImb);
  if (d.inb < 1) flag(entry + Desc::kInb);
  if (d.mb < 1) flag(entry + Desc::kMb);
  if (d.nb < 1) flag(entry + Desc::kNb);
  if (d.rsrc < -1 || d.rsrc >= g.nprow) flag(entry + Desc::kRsrc);
  if (d.csrc < -1 || d.csrc >= g.npcol) flag(entry + Desc::kCsrc);
  if (m == 0 || n == 0) {
    // An empty operand: only the sizes must make sense.
    if (d.m < 0) flag(entry + Desc::kM);
    if (d.n < 0) flag(entry + Desc::kN);
    if (d.lld < 1) flag(entry + Desc::kLld);
  } else {
    if (d.m < 1) flag(entry + Desc::kM);
    if (d.n < 1) flag(entry + Desc::kN);
    if (d.m >= 1 && d.n >= 1) {
      if (ix + m > d.m) flag(ipos);
      if (jx + n > d.n) flag(jpos);
    }
    // The local leading dimension, only once all else holds: it must
    // cover this process's rows where it holds any column.
    if (e == kNoError) {
      const std::int64_t np = local_count(d.m, 0, d.imb, d.mb, g.myrow, d.rsrc, g.nprow);
      if (d.lld < std::max<std::int64_t>(1, np)) {
        const std::int64_t nq =
            local_count(d.n, 0, d.inb, d.nb, g.mycol, d.csrc, g.npcol);
        if (d.lld < 1 || nq > 0) flag(entry + Desc::kLld);
      }
    }
  }
  *info = to_info(e);
}

int check_gemm(const Grid &g, char transa, char transb, std::int64_t m, std::int64_t n,
               std::int64_t k, std::int64_t ia, std::int64_t ja, const Desc &a,
               std::int64_t ib, std::int64_t jb, const Desc &b, std::int64_t ic,
               std::int64_t jc, const Desc &c) {
  // Positions in PDGEMM's list: TRANSA 1, TRANSB 2, M 3, N 4, K 5, ALPHA 6,
  // A 7, IA 8, JA 9, DESCA 10, B 11, IB 12, JB 13, DESCB 14, BETA 15, C 16,
  // IC 17, JC 18, DESCC 19.
  if (g.nprow == -1) return -(10 * kDescMult + Desc::kCtxt);  // not in A's grid
  int info = 0;
  const bool nota = !blas::transposes(transa), notb = !blas::transposes(transb);
  if (!legal_trans(transa))
    info = -1;
  else if (!legal_trans(transb))
    info = -2;
  if (nota)
    check_matrix(g, a.ctxt, m, 3, k, 5, ia - 1, ja - 1, a, 10, &info);
  else
    check_matrix(g, a.ctxt, k, 5, m, 3, ia - 1, ja - 1, a, 10, &info);
  if (notb)
    check_matrix(g, a.ctxt, k, 5, n, 4, ib - 1, jb - 1, b, 14, &info);
  else
    check_matrix(g, a.ctxt, n, 4, k, 5, ib - 1, jb - 1, b, 14, &info);
  check_matrix(g, a.ctxt, m, 3, n, 4, ic - 1, jc - 1, c, 19, &info);
  return info;
}

}  // namespace xn::dist
