// symv_layout.h - the block decomposition of xnSsymv/xnDsymv, shared by the
// CUDA kernels and the host (where a CPU test runs the same decomposition).
//
// Nath et al., SC'11, section 4.3, algorithm 2, with two changes
// for a GPU of 132 SMs (docs/design.md, "SYMV"):
//  - Block row p owns the stored tiles of its row: A(p, q) for q <= p (lower)
//    or q >= p (upper). Upper storage is thus handled as the mirror of lower,
//    with the same contiguous column reads, so both are equally fast.
//  - A block row's tiles are cut into chunks of `chunk` consecutive tiles,
//    one thread block per chunk (chunk >= tiles in a row gives Nath et al.'s one
//    block per block row; chunk = 1, one tile per block, is the register
//    tile kernel's layout, the default). Their rows hold 1..nt tiles;
//    on a chip that runs all of them at once, the longest rows set the time.
//    Chunks even the work out.
// A thread block working on chunk c of row p computes, for each tile A(p,q)
// of the chunk, the partial A(p,q) x_q of y_p (summed over the chunk in
// registers: the chunk's "own" partial) and, for q != p, A(p,q)^T x_p, a
// partial of y_q (the tile's "cross" partial). The diagonal tile gives only
// an own contribution: Nath et al. §4.2 mirrors it in shared memory; the kernels
// split it into the row sums of its stored triangle and the column sums of
// its strict part instead, and mirror only at the matrix edge. Every
// partial is a vector of nb values in a workspace slot; a second kernel sums
// the slots of each y block in a fixed order (Nath et al. §4.3 phase 2), so the
// result is bitwise reproducible without atomics.
//
// Workspace: x packed (packed_x_elems), then the slots. The slots that feed
// y block b are contiguous, starting at slot_base(b): first the own partials of row b's
// chunks (c = 0, 1, ...), then the cross partials from the other rows p in increasing
// order.
#pragma once

#include <cmath>
#include <cstdint>

#include "numerics/hd.h"

namespace xn {
namespace symv {

struct Layout {
  std::int64_t n;      // order of A
  std::int64_t nb;     // tile size (rows and columns)
  std::int64_t nt;     // number of block rows: ceil(n / nb)
  std::int64_t chunk;  // tiles per thread block (>= 1)
  std::int64_t shift;  // column groups start at block columns g chunk - shift
  bool lower;          // which triangle is stored
};

XN_HD std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Block columns in the column group that the ring kernel dispatches last,
// when a row has more than one chunk. Its thread blocks end the grid, so
// short ones leave the SMs idle for less time. Measured on the H200
// (2026-11-21 run 10, single precision, chunks of 5 and 8, n = 10240 to
// 32768): two tiles were the fastest of 1, 2, 3, 4 and the whole chunk, or
// tied with 3. Against the whole chunk, the old lower layout, they gained
// +2 % at n = 16384 and +2.4 % at 14336 (chunks of 5), +2.5-3.5 % at
// 16384 (chunks of 8). Against nt mod chunk, the old upper layout, up to
// +1.8 % at 10240-20480. Double precision, with chunks of 6, moved within
// +-0.5 %.
XN_HD std::int64_t last_group_tiles(std::int64_t chunk) { return chunk < 2 ? chunk : 2; }

XN_HD Layout make_layout(std::int64_t n, std::int64_t nb, std::int64_t chunk,
                         bool lower) {
  Layout L;
  L.n = n;
  L.nb = nb;
  L.nt = ceil_div(n, nb);
  L.chunk = chunk < 1 ? 1 : chunk;
  L.shift = 0;
  if (L.chunk < L.nt) {
    // Shift the groups so that the one the ring kernel dispatches last
    // (ring_group: lower's group 0, upper's last group) is
    // last_group_tiles(chunk) columns wide: the grid then ends on short
    // chunks, in both triangles, which are mirror images of each other
    // (q -> nt - 1 - q).
    const std::int64_t w = last_group_tiles(L.chunk);
    L.shift = lower ? L.chunk - w : ((w - L.nt) % L.chunk + L.chunk) % L.chunk;
  }
  L.lower = lower;
  return L;
}

// Stored tiles in block row p, and the block column of the t-th of them
// (t = 0 .. row_len - 1, in increasing column order).
XN_HD std::int64_t row_len(const Layout &L, std::int64_t p) {
  return L.lower ? p + 1 : L.nt - p;
}
XN_HD std::int64_t tile_col(const Layout &L, std::int64_t p, std::int64_t t) {
  return L.lower ? t : p + t;
}

// Chunks cover the block columns of one column group, [g chunk - shift,
// (g+1) chunk - shift) clipped to [0, nt), in both triangles, so that the
// thread blocks running together read the same band of columns. A lower
// row starts at column 0 (its chunk c is g = c); an upper row starts at its
// diagonal, column p, so its first chunk is that column's group and may be
// short.
XN_HD std::int64_t column_group(const Layout &L, std::int64_t q) {
  return (q + L.shift) / L.chunk;
}
XN_HD std::int64_t first_chunk_group(const Layout &L, std::int64_t p) {
  return L.lower ? 0 : column_group(L, p);
}
// Chunks (thread blocks) of block row p, and the most any row has: the
// kernel's grid is nt x max_chunks (block (p, g) runs chunk block_chunk(p, g)),
// and blocks without a chunk (c < 0 or c >= row_chunks(p)) return at once.
XN_HD std::int64_t max_chunks(const Layout &L) {
  return ceil_div(L.nt + L.shift, L.chunk);
}
XN_HD std::int64_t row_chunks(const Layout &L, std::int64_t p) {
  return L.lower ? column_group(L, p) + 1 : max_chunks(L) - column_group(L, p);
}
// The chunk that grid block (p, g) runs: the chunk covering column group g,
// so that the hardware, which dispatches blocks with blockIdx.x = p
// fastest, runs the chunks of one column band in all rows together:
// consecutive rows' column segments are adjacent in memory
// (shared DRAM pages). A lower row's chunk c covers group c; an upper row's
// chunk c covers group first_chunk_group(p) + c, so group g is chunk
// g - first_chunk_group(p), negative (nothing to do) left of the diagonal.
XN_HD std::int64_t block_chunk(const Layout &L, std::int64_t p, std::int64_t g) {
  return g - first_chunk_group(L, p);
}
// The chunk of row p that holds its diagonal tile: the last of a lower row,
// the first of an upper one.
XN_HD std::int64_t diagonal_chunk(const Layout &L, std::int64_t p) {
  return L.lower ? row_chunks(L, p) - 1 : 0;
}
// The ring tile kernel's grid: nt x ring_grid_rows thread blocks. Grid row
// y = 0 runs every block row's diagonal chunk; grid row y >= 1 runs the
// chunks over column group ring_group(y) (block_chunk), except the diagonal
// chunks, which it skips (-1: nothing to do).
// - Diagonal chunks first: a block with the diagonal tile ends with loads
//   that nothing of it overlaps. Dispatched first, they overlap the other
//   blocks' streaming instead of ending the grid, where the last column
//   groups of a lower matrix held mostly diagonal chunks.
// - Upper storage runs the groups left to right, lower right to left: both
//   then end on the group that every block row has (upper: the last, lower:
//   group 0), whose chunks run in consecutive rows together, instead of
//   lower ending on its shortest groups. The groups' shift (make_layout)
//   makes that group last_group_tiles wide, so that the grid ends on short
//   chunks.
// Measured on the H200 (2026-11-21 run 9, docs/performance.md): single
// precision n = 16384, +1.4-2.7 % for the diagonal chunks first, +1.1-2.8 %
// more for lower's reversed order; double within +-1 %.
XN_HD std::int64_t ring_grid_rows(const Layout &L) { return max_chunks(L) + 1; }
XN_HD std::int64_t ring_group(const Layout &L, std::int64_t y) {
  return L.lower ? max_chunks(L) - y : y - 1;
}
XN_HD std::int64_t ring_block_chunk(const Layout &L, std::int64_t p, std::int64_t y) {
  if (y == 0) return diagonal_chunk(L, p);
  const std::int64_t c = block_chunk(L, p, ring_group(L, y));
  return c == diagonal_chunk(L, p) ? -1 : c;
}
// The one-tile-per-block grid of the register tile kernel (chunk = 1): a
// 1-D grid of total_tiles blocks. Blocks 0 .. nt - 1 take the diagonal tiles
// (the slowest ones, with element loads where a vector straddles the
// diagonal: first, so that they never end the grid), then block nt + j
// takes the j-th off-diagonal stored tile in column-major order. Lower:
// block columns q ascending, block rows ascending inside each. Upper is the
// mirror image (tile (p, q) <-> (nt - 1 - p, nt - 1 - q)): columns
// descending, rows descending inside each. The hardware dispatches blocks
// in index order, so the blocks that run together read the tiles of one or
// a few block columns, whose column segments are adjacent in memory, and
// share that column's x block. Both triangles start with their longest
// columns and end with their shortest. In upper storage this also puts the
// last block column first: its tiles cross the matrix edge when nb does not
// divide n, are read element by element, and used to end the grid (lower's
// edge tiles, the last block row, are spread over every column).
// offdiag_column_start(q) is the j of lower column q's first off-diagonal
// tile: columns q' < q hold nt - 1 - q' of them.
XN_HD std::int64_t total_tiles(const Layout &L) { return L.nt * (L.nt + 1) / 2; }
XN_HD std::int64_t offdiag_column_start(const Layout &L, std::int64_t q) {
  return q * (L.nt - 1) - q * (q - 1) / 2;
}
struct TileIndex {
  std::int64_t p, q;  // block row and block column of the tile
};
XN_HD TileIndex tile_of_block(const Layout &L, std::int64_t i) {
  TileIndex t;
  if (i < L.nt) {
    t.p = t.q = i;
    return t;
  }
  const std::int64_t j = i - L.nt;
  // The lower tile: offdiag_column_start(q) <= j < offdiag_column_start(q + 1),
  // from the root of q^2 - (2 nt - 1) q + 2 j = 0, then corrected by whole
  // steps against rounding.
  const double b = double(2 * L.nt - 1), dj = double(j);
  std::int64_t q = std::int64_t((b - sqrt(b * b - 8.0 * dj)) / 2);
  if (q < 0) q = 0;
  if (q > L.nt - 1) q = L.nt - 1;
  while (q > 0 && offdiag_column_start(L, q) > j) --q;
  while (q + 1 < L.nt && offdiag_column_start(L, q + 1) <= j) ++q;
  const std::int64_t p = q + 1 + (j - offdiag_column_start(L, q));
  t.p = L.lower ? p : L.nt - 1 - p;
  t.q = L.lower ? q : L.nt - 1 - q;
  return t;
}

// The tiles t (row_len order) of chunk c of row p: [chunk_begin, chunk_end).
// chunk_begin >= row_len(p) exactly when c is not one of the row's chunks
// (c < 0, a grid block left of an upper row's diagonal, or c >= row_chunks(p)).
XN_HD std::int64_t chunk_begin(const Layout &L, std::int64_t p, std::int64_t c) {
  if (c < 0) return row_len(L, p);
  const std::int64_t q0 = (first_chunk_group(L, p) + c) * L.chunk - L.shift;
  const std::int64_t t = L.lower ? q0 : q0 - p;
  return t < 0 ? 0 : t;
}
XN_HD std::int64_t chunk_end(const Layout &L, std::int64_t p, std::int64_t c) {
  const std::int64_t q1 = (first_chunk_group(L, p) + c + 1) * L.chunk - L.shift;
  const std::int64_t t = L.lower ? q1 : q1 - p, len = row_len(L, p);
  return t < len ? t : len;
}

// Rows (or columns) of block b that lie inside the matrix: nb except for the
// last block when nb does not divide n.
XN_HD std::int64_t block_extent(const Layout &L, std::int64_t b) {
  const std::int64_t rest = L.n - b * L.nb;
  return rest < L.nb ? rest : L.nb;
}

// Cross partials that feed y block b: from rows p > b (lower) or p < b (upper).
XN_HD std::int64_t cross_count(const Layout &L, std::int64_t b) {
  return L.lower ? L.nt - 1 - b : b;
}
XN_HD std::int64_t slot_count(const Layout &L, std::int64_t b) {
  return row_chunks(L, b) + cross_count(L, b);
}

// sum_{i=0..m-1} floor(i / k), in closed form: with m = q k + r, the full
// groups give k (0 + ... + (q - 1)) and the rest r q.
XN_HD std::int64_t floor_sum(std::int64_t m, std::int64_t k) {
  const std::int64_t q = m / k, r = m % k;
  return k * q * (q - 1) / 2 + r * q;
}

// First slot feeding y block b (b = nt gives the total number of slots).
// The column groups of rows b' < b: sum floor((b' + shift) / chunk) =
// floor_sum(b + shift) - floor_sum(shift), and floor_sum(shift) = 0 since
// shift < chunk.
XN_HD std::int64_t slot_base(const Layout &L, std::int64_t b) {
  const std::int64_t groups = floor_sum(b + L.shift, L.chunk);
  if (L.lower) {
    // rows b' < b: cross (nt - 1 - b') + chunks floor((b' + shift) / chunk) + 1
    return b * (L.nt - 1) - b * (b - 1) / 2 + b + groups;
  }
  // rows b' < b: cross b' + chunks max_chunks - floor((b' + shift) / chunk)
  return b * (b - 1) / 2 + b * max_chunks(L) - groups;
}
XN_HD std::int64_t total_slots(const Layout &L) { return slot_base(L, L.nt); }

// The slot of chunk c's own partial of y_p, and of tile (p, q)'s cross
// partial of y_q (q != p).
XN_HD std::int64_t own_slot(const Layout &L, std::int64_t p, std::int64_t c) {
  return slot_base(L, p) + c;
}
XN_HD std::int64_t cross_slot(const Layout &L, std::int64_t p, std::int64_t q) {
  return slot_base(L, q) + row_chunks(L, q) + (L.lower ? p - q - 1 : p);
}

// The same two slots in the one-tile layout (chunk = 1) of the register
// tile kernel, where they take a closed form without divisions: slot_base(b)
// is b nt there (row b' < b has row_len(b') own and cross_count(b') cross
// slots, nt in all), so own_slot(p, block_chunk(p, q)) = p nt + t with t the
// tile's position in its row, and cross_slot(p, q) = q nt + row_len(q) +
// (p - q - 1 or p). A block pays for these once per 64 KiB tile, just when
// its loads have landed, so the 64-bit divisions of the general forms showed
// in its time (docs/performance.md, SYMV run 7).
XN_HD std::int64_t tile_own_slot(const Layout &L, std::int64_t p, std::int64_t q) {
  return p * L.nt + (L.lower ? q : q - p);
}
XN_HD std::int64_t tile_cross_slot(const Layout &L, std::int64_t p, std::int64_t q) {
  return q * L.nt + (L.lower ? p : L.nt - q + p);
}

// The workspace: x packed contiguous and padded with zeros to nt * nb
// elements (so every tile's x block is one aligned copy and the edge needs no
// test), then the slots, nb values each.
XN_HD std::int64_t packed_x_elems(const Layout &L) { return L.nt * L.nb; }
XN_HD std::int64_t slots_offset(const Layout &L) { return packed_x_elems(L); }
XN_HD std::int64_t workspace_elems(const Layout &L) {
  return packed_x_elems(L) + total_slots(L) * L.nb;
}

// The reduction kernel's shape for elements of `elem` bytes (symv_kernels.cu):
// a thread adds 16-byte vectors (reduce_vec elements) of the slots, so
// nb / reduce_vec threads cover a slot; reduce_groups such groups take
// interleaved slots (group r: slots r, r + groups, ... of the y block), each
// thread with reduce_unroll interleaved running sums, i.e. that many loads
// in flight. The longest y blocks (lower: b = 0 has nt slots) then need one
// or two rounds of loads.
XN_HD constexpr std::int64_t reduce_vec(std::int64_t elem) { return 16 / elem; }
XN_HD constexpr std::int64_t reduce_unroll(std::int64_t elem) { return elem; }
XN_HD constexpr std::int64_t reduce_groups(std::int64_t nb, std::int64_t elem) {
  return 1024 / (nb / reduce_vec(elem)) < 32 ? 1024 / (nb / reduce_vec(elem)) : 32;
}

// Pipeline pieces: the tile kernel may stream each tile through its
// shared-memory ring in `pieces` pieces of nb / pieces consecutive columns
// (one ring stage each), so that a ring of the same depth takes 1 / pieces
// of the memory and more thread blocks fit an SM while the column segments
// (nb rows, the bulk copies' unit) stay long. Warp w holds columns
// w tv .. w tv + tv - 1 of every piece; the thread block has
// nb / (pieces tv) warps. This is the warp whose row sums receive tile
// column v (0 <= v < nb); the diagonal tile uses the same assignment.
XN_HD std::int64_t column_warp(std::int64_t nb, std::int64_t tv, std::int64_t pieces,
                               std::int64_t v) {
  return (v % (nb / pieces)) / tv;
}
XN_HD constexpr std::int64_t tile_warps(std::int64_t nb, std::int64_t tv,
                                        std::int64_t pieces) {
  return nb / (pieces * tv);
}
// Elements of the tile kernel's shared ring: `stages` pieces, or the
// mirrored diagonal tile (nb x (nb + 1), padded against bank conflicts)
// that reuses it, whichever is larger.
XN_HD constexpr std::int64_t ring_elems(std::int64_t nb, std::int64_t stages,
                                        std::int64_t pieces) {
  return stages * (nb / pieces) * nb > nb * (nb + 1) ? stages * (nb / pieces) * nb
                                                     : nb * (nb + 1);
}
// Shared memory of the tile kernel in bytes: the ring, the x blocks of the
// stages (nb / pieces elements each) and one 8-byte mbarrier per stage and
// warp.
XN_HD constexpr std::int64_t tile_smem_bytes(std::int64_t nb, std::int64_t tv,
                                             std::int64_t stages, std::int64_t pieces,
                                             std::int64_t elem) {
  return (ring_elems(nb, stages, pieces) + stages * (nb / pieces)) * elem +
         stages * tile_warps(nb, tv, pieces) * 8;
}

// Nath et al., SC'11, §6.3 pointer redirecting: an index past the valid extent is
// redirected to the last valid one, so every thread loads from inside the
// matrix and no thread branches; the redirected value is then replaced by
// zero (a select, not a branch), so it cannot carry a NaN or Inf in.
XN_HD std::int64_t redirect(std::int64_t i, std::int64_t extent) {
  return i < extent ? i : extent - 1;
}

// Whether element (i, j) of a tile on the diagonal lies in the stored
// triangle (i, j relative to the tile; the same offsets in rows and columns).
XN_HD bool stored_in_diagonal_tile(bool lower, std::int64_t i, std::int64_t j) {
  return lower ? i >= j : i <= j;
}

// BLAS vector indexing: element i of an n-vector with increment inc starts
// from the first element in memory for inc > 0 and from the last for inc < 0.
XN_HD std::int64_t vector_offset(std::int64_t i, std::int64_t n, std::int64_t inc) {
  return inc > 0 ? i * inc : (i - (n - 1)) * inc;
}

}  // namespace symv
}  // namespace xn
