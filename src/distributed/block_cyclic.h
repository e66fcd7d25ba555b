// block_cyclic.h - ScaLAPACK's 2-D block-cyclic distribution: array
// descriptors, the local share of a distributed range, and the argument
// checks of PBLAS's PDGEMM, with the same error numbers (docs/design.md,
// "Distributed GEMM"). Plain C++ (no MPI, no BLACS): the grid is given.
#pragma once

#include <algorithm>
#include <cstdint>

namespace xn::dist {

// Entries of a descriptor as the user passes it (ScaLAPACK's DTYPE = 1,
// BLOCK_CYCLIC_2D, nine integers), 0-based.
enum Desc9 : int {
  kDtype9 = 0,
  kCtxt9 = 1,
  kM9 = 2,
  kN9 = 3,
  kMb9 = 4,
  kNb9 = 5,
  kRsrc9 = 6,
  kCsrc9 = 7,
  kLld9 = 8,
  kDlen9 = 9
};
inline constexpr int kBlockCyclic2D = 1;
inline constexpr int kBlockCyclic2DInb = 2;  // PBLAS's eleven-entry type

// A descriptor in PBLAS's internal eleven-entry form (the first block may
// be smaller: imb, inb). PBLAS numbers descriptor errors by this form's
// entries (entry = index + 1), whatever form the user passed, and so do we.
struct Desc {
  int dtype = 0, ctxt = 0, m = 0, n = 0, imb = 1, inb = 1, mb = 1, nb = 1, rsrc = 0,
      csrc = 0, lld = 1;
  // Entry numbers (1-based) of the eleven-entry form, for error reports.
  enum Entry : int {
    kDtype = 1,
    kCtxt = 2,
    kM = 3,
    kN = 4,
    kImb = 5,
    kInb = 6,
    kMb = 7,
    kNb = 8,
    kRsrc = 9,
    kCsrc = 10,
    kLld = 11
  };
};

// The user's descriptor in the internal form, as PBLAS reads it (types 1
// and 2; any other type keeps its type and context and nothing else).
inline Desc to_desc(const int *d) {
  Desc r;
  r.dtype = d[0];
  r.ctxt = d[1];
  if (d[0] == kBlockCyclic2D) {
    r.m = d[kM9];
    r.n = d[kN9];
    r.imb = r.mb = d[kMb9];
    r.inb = r.nb = d[kNb9];
    r.rsrc = d[kRsrc9];
    r.csrc = d[kCsrc9];
    r.lld = d[kLld9];
  } else if (d[0] == kBlockCyclic2DInb) {
    r.m = d[2];
    r.n = d[3];
    r.imb = d[4];
    r.inb = d[5];
    r.mb = d[6];
    r.nb = d[7];
    r.rsrc = d[8];
    r.csrc = d[9];
    r.lld = d[10];
  } else {
    r.dtype = d[0];
  }
  return r;
}

// Entries of one dimension dealt out in blocks: the first block has `ib`
// entries, the others `b`, cyclically over `procs` processes from process
// `src` (src = -1: replicated, every process holds every entry).

// How many of the entries [0, x) process `proc` holds.
inline std::int64_t owned_below(std::int64_t x, std::int64_t ib, std::int64_t b, int proc,
                                int src, int procs) {
  if (x <= 0) return 0;
  if (src < 0 || procs == 1) return x;
  if (x <= ib) return proc == src ? x : 0;
  const std::int64_t full = 1 + (x - ib) / b;  // blocks wholly below x
  const std::int64_t rem = (x - ib) % b;       // entries of block `full` below x
  const int d = ((proc - src) % procs + procs) % procs;  // proc's blocks: d mod procs
  // Blocks 1 .. full - 1 (of b entries) that are proc's.
  std::int64_t mine = 0;
  if (d == 0)
    mine = (full - 1) / procs;
  else if (full - 1 >= d)
    mine = (full - 1 - d) / procs + 1;
  const bool last_mine = (src + full) % procs == proc;
  return (proc == src ? ib : 0) + mine * b + (last_mine ? rem : 0);
}

// How many of the entries [first, first + count) process `proc` holds
// (ScaLAPACK's NUMROC with a first block and an offset, as PBLAS's
// PB_Cnumroc).
inline std::int64_t local_count(std::int64_t count, std::int64_t first, std::int64_t ib,
                                std::int64_t b, int proc, int src, int procs) {
  if (count <= 0) return 0;
  return owned_below(first + count, ib, b, proc, src, procs) -
         owned_below(first, ib, b, proc, src, procs);
}

// The process holding entry i (0-based); -1 when replicated.
inline int owner_of(std::int64_t i, std::int64_t ib, std::int64_t b, int src, int procs) {
  if (src < 0) return -1;
  if (procs == 1 || i < ib) return src;
  return int((src + (i - ib) / b + 1) % procs);
}

// The grid as BLACS reports it (nprow = -1: the calling process is not in
// the context's grid).
struct Grid {
  int nprow = -1, npcol = -1, myrow = -1, mycol = -1;
};

// PBLAS's checks of one matrix operand (PB_Cchkmat's rules): sub(X) =
// X(ix:ix+m-1, jx:jx+n-1), ix and jx 0-based; `mpos`, `npos` are the
// positions of m and n in the routine's argument list and `dpos` that of
// the descriptor (ix and jx are its two predecessors). Errors are ranked
// as PBLAS ranks them: the smallest of -(position) for a scalar and
// -(100 position + entry) for a descriptor entry wins; `info` carries the
// error found so far in and the combined one out.
void check_matrix(const Grid &g, int ctxt, std::int64_t m, int mpos, std::int64_t n,
                  int npos, std::int64_t ix, std::int64_t jx, const Desc &d, int dpos,
                  int *info);

// PDGEMM's argument checks (PBLAS): INFO as PDGEMM computes it on this
// process, 0 if every argument is valid. transa/transb are the characters
// passed; ia..jc are the user's 1-based indices.
int check_gemm(const Grid &g, char transa, char transb, std::int64_t m, std::int64_t n,
               std::int64_t k, std::int64_t ia, std::int64_t ja, const Desc &a,
               std::int64_t ib, std::int64_t jb, const Desc &b, std::int64_t ic,
               std::int64_t jc, const Desc &c);

}  // namespace xn::dist
