// strip_plan.h - who sends which entries of a distributed operand to whom
// so that every process holds the strip of op(sub(X)) its part of sub(C)
// needs (docs/design.md, "Distributed GEMM", device-resident operands).
// Plain C++, no MPI and no CUDA: the device engine packs, exchanges and
// unpacks by this plan; the unit tests replay it for a whole grid in one
// process.
#pragma once

#include <cstdint>
#include <vector>

#include "distributed/block_cyclic.h"

namespace xn::dist {

// One dimension of a block-cyclic distribution: first block ib, blocks of
// b, dealt from process src (-1: replicated) over procs processes.
struct Axis {
  std::int64_t ib = 1, b = 1;
  int src = 0, procs = 1;
  int owner(std::int64_t i) const { return owner_of(i, ib, b, src, procs); }
  // Index of global entry i in the local array of a process holding it.
  std::int64_t local(std::int64_t i, int proc) const {
    return src < 0 ? i : owned_below(i, ib, b, proc, src, procs);
  }
};

// The strip a process needs: rows and columns of op(sub(X)), given as
// global indices of X along the axis they run on. With `trans` (op(X) =
// X'), the strip's rows are columns of X and its columns rows of X.
struct StripIndices {
  std::vector<std::int64_t> rows, cols;
};

// One block of entries packed by this process for one strip (its pieces
// for every process that needs the same entries share it): the strip's
// rows u and columns v of that block, as local indices of X's array
// (u: local rows of X, v: local columns, whatever `trans`). The packed
// block is rows x cols, column-major, in the strip's orientation:
//   packed(a, b) = X_local[u[a] + v[b] lld]   (not trans)
//   packed(a, b) = X_local[u[b] + v[a] lld]   (trans: u runs along the
//                                              strip's columns)
struct Pack {
  std::vector<int> u, v;
  std::int64_t rows = 0, cols = 0, offset = 0;  // offset: in the send buffer
};

// One block this process receives (from `peer`, or from itself when peer
// is this process's rank: then `from_send` and `offset` is its pack's):
//   strip[row_pos[a] + col_pos[b] ld] = block(a, b).
struct Unpack {
  int peer = 0;
  bool from_send = false;
  std::vector<int> row_pos, col_pos;
  std::int64_t offset = 0;  // in the receive (or send) buffer
  std::int64_t count() const {
    return std::int64_t(row_pos.size()) * std::int64_t(col_pos.size());
  }
};

struct Send {
  int peer = 0;
  std::int64_t offset = 0, count = 0;  // a pack's block
};

// A process's part in filling every process's strip of one operand.
// Processes are numbered row-major on the grid (p npcol + q).
struct StripPlan {
  std::vector<Pack> packs;
  std::vector<Send> sends;      // to other processes, in peer order
  std::vector<Unpack> unpacks;  // from every process (itself included)
  std::int64_t send_elems = 0, recv_elems = 0;
};

// The strip process `t` (row-major grid number) needs.
using StripOf = StripIndices (*)(const void *ctx, int t);

// The plan of process `me` on grid `g` for operand X (its row and column
// axes), transposed or not, where process t needs strip_of(ctx, t). Where
// X is replicated along a grid dimension, the entries come from the
// process of the receiver's own row (column) of the grid.
StripPlan plan_strip(const Grid &g, const Axis &xrow, const Axis &xcol, bool trans,
                     StripOf strip_of, const void *ctx);

// The strips of one panel of K, [k0, k0 + w), for sub(C) = C(ic0.., jc0..)
// (0-based) of m x n: op(sub(A))'s rows of each process row of C
// (A strip), op(sub(B))'s columns of each process column (B strip).
struct PanelStrips {
  const Grid *g;
  Axis crow, ccol;      // sub(C)'s distribution
  std::int64_t c0;      // sub(C)'s first row (A strip) or column (B strip)
  std::int64_t count;   // m (A strip) or n (B strip)
  std::int64_t x_part;  // where sub(C)'s rows (columns) start in X along its axis
  std::int64_t x_k;     // where the panel starts in X along K's axis
  std::int64_t w;       // the panel's width
};
StripIndices a_strip(const void *panel, int t);
StripIndices b_strip(const void *panel, int t);

}  // namespace xn::dist
