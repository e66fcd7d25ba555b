// test_symv_layout.cpp - the block decomposition of xnSsymv/xnDsymv
// (kernels/numerics/symv_layout.h), on the CPU (label unit).
//
// Part 1 checks the closed forms against plain loops: floor_sum, slot bases
// and counts, the ranges of own and cross slots, the bijection from the
// kernel's (thread block, tile) work items onto the workspace slots, the
// covering of the stored tiles by chunks, pointer redirecting and BLAS
// vector offsets.
//
// Part 2 is a host emulation of what kernels/symv_kernels.cu does (revision of
// 2026-11-21, vector reduction with reduce_unroll running sums: x packed into the
// workspace unless incx = 1 and x is 16-byte aligned, the tile kernel, the reduction
// kernel), built only from the symv_layout.h functions: the same grid (nt x
// ring_grid_rows, diagonal chunks first, empty chunks return; or, for the register tile
// kernel, one block per tile in tile_of_block order), the same loads (redirected, then
// zeroed past the matrix edge; the diagonal tile, last in each chunk, split into the row
// sums of its stored triangle and the column sums of its strict part inside the matrix,
// mirrored at the edge), the same workspace writes and the same reduction order. A is
// read only through an accessor that fails the test on any element outside the stored
// triangle or the matrix; x and y through accessors that fail on any memory that is not
// one of their elements (and y on any read when beta == 0, A and x on any read when alpha
// is a host zero); the workspace starts NaN and fails on a read of an element not written
// exactly once. Inputs are small integers, so every partial sum is exact and the result
// must equal a naive SYMV (with its own BLAS indexing) bit for bit; an Inf
// at a redirect target checks that redirected loads are zeroed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/symv_variants.h"
#include "numerics/symv_layout.h"
#include "support/test_support.h"

namespace {

using std::int64_t;
namespace sv = xn::symv;
const xn::Fill kL = xn::Fill::Lower, kU = xn::Fill::Upper;
xn::Fill fill(bool lower) { return lower ? kL : kU; }

const int64_t kHuge = int64_t(1) << 30;  // a chunk longer than any row
// Thread groups of symv_reduce_kernel in double precision (the emulation
// runs double; single-precision cases reuse the double configuration).
int64_t reduce_groups(int64_t nb) { return sv::reduce_groups(nb, sizeof(double)); }

std::string describe(const sv::Layout &L) {
  std::ostringstream s;
  s << "n=" << L.n << " nb=" << L.nb << " chunk=" << L.chunk
    << (L.lower ? " lower" : " upper");
  return s.str();
}

// ---------------------------------------------------------------- part 1

TEST(SymvLayout, FloorSumMatchesALoop) {
  for (int64_t k : {int64_t(1), int64_t(2), int64_t(3), int64_t(5), int64_t(7),
                    int64_t(16), int64_t(33), int64_t(64), kHuge}) {
    int64_t loop = 0;  // sum of floor(i / k) for i < m
    for (int64_t m = 0; m <= 700; ++m) {
      ASSERT_EQ(sv::floor_sum(m, k), loop) << "m=" << m << " k=" << k;
      loop += m / k;
    }
  }
}

TEST(SymvLayout, CeilDivRedirectAndBlockExtents) {
  for (int64_t a = 0; a < 300; ++a)
    for (int64_t b = 1; b < 70; ++b) {
      const int64_t c = sv::ceil_div(a, b);
      ASSERT_TRUE(c * b >= a && (c - 1) * b < a) << a << "/" << b;
    }
  // Redirecting: inside the extent an index is kept, past it the last valid
  // index is used; the result is always a valid index.
  for (int64_t extent = 1; extent <= 64; ++extent)
    for (int64_t i = 0; i < 64; ++i) {
      const int64_t r = sv::redirect(i, extent);
      ASSERT_GE(r, 0);
      ASSERT_LT(r, extent);
      ASSERT_EQ(r, i < extent ? i : extent - 1) << i << " " << extent;
    }
  // Block extents partition [0, n) into blocks of nb with a shorter tail.
  for (int64_t nb : {32, 64})
    for (int64_t n = 1; n <= 300; ++n) {
      const sv::Layout L = sv::make_layout(n, nb, 4, true);
      ASSERT_EQ(L.nt, sv::ceil_div(n, nb));
      int64_t covered = 0;
      for (int64_t b = 0; b < L.nt; ++b) {
        const int64_t e = sv::block_extent(L, b);
        ASSERT_GE(e, 1);
        ASSERT_LE(e, nb);
        if (b + 1 < L.nt) {
          ASSERT_EQ(e, nb);
        }
        covered += e;
      }
      ASSERT_EQ(covered, n);
    }
  // A chunk below 1 is clamped to 1.
  EXPECT_EQ(sv::make_layout(100, 32, 0, true).chunk, 1);
  EXPECT_EQ(sv::make_layout(100, 32, -5, false).chunk, 1);
}

// The reduction kernel's block: nb / reduce_vec threads per slot (16-byte
// loads), reduce_groups groups, at most 1024 threads, at least one thread per
// element of the y block, and a power-of-two unroll (its pairwise tree).
TEST(SymvLayout, ReductionShape) {
  for (int64_t elem : {int64_t(4), int64_t(8)})
    for (int64_t nb : {int64_t(32), int64_t(64), int64_t(128)}) {
      const int64_t vec = sv::reduce_vec(elem), groups = sv::reduce_groups(nb, elem);
      EXPECT_EQ(vec * elem, 16);
      EXPECT_EQ(nb % vec, 0);
      EXPECT_LE((nb / vec) * groups, 1024) << nb << " " << elem;
      EXPECT_GE((nb / vec) * groups, nb) << nb << " " << elem;
      EXPECT_TRUE(groups >= 1 && groups <= 32);
      const int64_t u = sv::reduce_unroll(elem);
      EXPECT_TRUE(u >= 1 && (u & (u - 1)) == 0) << u;
    }
}

// Tiles streamed in pieces: every tile column belongs to exactly one warp,
// each warp gets pieces x tv columns - those the kernel's loops give it, tv
// consecutive ones at w tv of each piece - and the shared memory of the
// ring (which also holds the mirrored diagonal tile) is as the kernel lays
// it out.
TEST(SymvLayout, TilePiecesAssignColumnsToWarps) {
  for (int64_t nb : {int64_t(32), int64_t(64), int64_t(128)})
    for (int64_t pieces : {int64_t(1), int64_t(2), int64_t(4)})
      for (int64_t tv : {int64_t(2), int64_t(4), int64_t(8)}) {
        if (nb % (pieces * tv) != 0) continue;
        const int64_t warps = sv::tile_warps(nb, tv, pieces), pc = nb / pieces;
        ASSERT_EQ(warps * tv * pieces, nb);
        std::vector<int> owned(std::size_t(warps), 0);
        for (int64_t v = 0; v < nb; ++v) {
          const int64_t w = sv::column_warp(nb, tv, pieces, v);
          ASSERT_TRUE(w >= 0 && w < warps)
              << nb << " " << tv << " " << pieces << " " << v;
          ++owned[std::size_t(w)];
        }
        for (int64_t w = 0; w < warps; ++w) {
          EXPECT_EQ(owned[std::size_t(w)], pieces * tv);
          for (int64_t j = 0; j < pieces * tv; ++j)  // the kernel's enumeration
            EXPECT_EQ(sv::column_warp(nb, tv, pieces, (j / tv) * pc + w * tv + j % tv),
                      w);
        }
        for (int64_t stages : {int64_t(2), int64_t(3), int64_t(4)}) {
          const int64_t ring = sv::ring_elems(nb, stages, pieces);
          EXPECT_GE(ring, stages * pc * nb);
          EXPECT_GE(ring, nb * (nb + 1));
          EXPECT_GE(ring, warps * nb);  // the final row sums
          for (int64_t elem : {int64_t(4), int64_t(8)})
            EXPECT_EQ(sv::tile_smem_bytes(nb, tv, stages, pieces, elem),
                      (ring + stages * pc) * elem + stages * warps * 8);
        }
      }
}

TEST(SymvLayout, StoredTrianglePredicate) {
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      EXPECT_EQ(sv::stored_in_diagonal_tile(true, i, j), i >= j);
      EXPECT_EQ(sv::stored_in_diagonal_tile(false, i, j), i <= j);
    }
}

// Element i (0-based) of a BLAS vector of length n with increment inc lies
// at 1-based position kx + i * inc, kx = 1 for inc > 0 and 1 - (n-1) inc
// otherwise (reference BLAS).
TEST(SymvLayout, VectorOffsetIsTheBlasDefinition) {
  for (int64_t n = 1; n <= 9; ++n)
    for (int64_t inc : {-4, -3, -2, -1, 1, 2, 3, 4}) {
      const int64_t kx = inc > 0 ? 1 : 1 - (n - 1) * inc;
      std::vector<int> hit(std::size_t((n - 1) * std::abs(inc) + 1), 0);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = sv::vector_offset(i, n, inc);
        ASSERT_EQ(off, kx + i * inc - 1) << "n=" << n << " inc=" << inc << " i=" << i;
        ASSERT_GE(off, 0);
        ASSERT_LT(off, int64_t(hit.size()));
        ASSERT_EQ(off % std::abs(inc), 0);
        ++hit[std::size_t(off)];
      }
      for (std::size_t m = 0; m < hit.size(); ++m)
        ASSERT_EQ(hit[m], int(m % std::size_t(std::abs(inc)) == 0)) << m;
    }
}

// The wide set of orders of part 1: the edges of both tile sizes, a few
// large ones and fresh random ones.
std::vector<int64_t> wide_sizes(std::mt19937_64 &rng) {
  std::vector<int64_t> ns = {1,   2,   3,   4,   31,  32,   33,   63,   64,   65,   127,
                             128, 129, 191, 192, 193, 1000, 1023, 1024, 1025, 2049, 4097};
  for (int i = 0; i < 24; ++i) ns.push_back(1 + int64_t(rng() % 3000));
  return ns;
}
const int64_t kChunks[] = {1, 2, 3, 5, 8, 16, 32, kHuge};

// Slot bases against counts summed by loops that use only the definitions
// (tiles per row, chunks, cross partials), and every slot in its target
// block's range.
void check_slot_arithmetic(const sv::Layout &L) {
  SCOPED_TRACE(describe(L));
  int64_t base = 0;
  for (int64_t b = 0; b < L.nt; ++b) {
    const int64_t tiles = L.lower ? b + 1 : L.nt - b;
    ASSERT_EQ(sv::row_len(L, b), tiles);
    // Chunks: the column groups [g chunk - shift, (g + 1) chunk - shift)
    // that meet the row's stored columns (lower 0..b, upper b..nt-1),
    // counted by a loop over the groups.
    const int64_t first = L.lower ? 0 : b, last = L.lower ? b : L.nt - 1;
    int64_t chunks = 0;
    for (int64_t g = 0; g * L.chunk - L.shift < L.nt; ++g)
      if (std::max(first, g * L.chunk - L.shift) <=
          std::min(last, (g + 1) * L.chunk - L.shift - 1))
        ++chunks;
    ASSERT_EQ(sv::row_chunks(L, b), chunks);
    // Cross partials of y_b come from the rows whose stored tiles lie in
    // block column b: rows below (lower) or above (upper).
    int64_t cross = 0;
    for (int64_t p = 0; p < L.nt; ++p)
      if (p != b && (L.lower ? p > b : p < b)) ++cross;
    ASSERT_EQ(sv::cross_count(L, b), cross);
    ASSERT_EQ(sv::slot_count(L, b), chunks + cross);
    ASSERT_EQ(sv::slot_base(L, b), base) << "b=" << b;
    ASSERT_EQ(sv::slot_base(L, b + 1) - sv::slot_base(L, b), sv::slot_count(L, b));
    base += chunks + cross;
  }
  ASSERT_EQ(sv::total_slots(L), base);
  // The workspace (symv_layout.h): x packed and zero-padded to nt * nb
  // elements, then the slots.
  ASSERT_GE(sv::packed_x_elems(L), L.nt * L.nb);
  ASSERT_GE(sv::slots_offset(L), sv::packed_x_elems(L));
  ASSERT_EQ(sv::slots_offset(L) % 4, 0) << "slots must stay 16-byte aligned in float";
  ASSERT_EQ(sv::workspace_elems(L), sv::slots_offset(L) + base * L.nb);
  int64_t most = 0;
  for (int64_t p = 0; p < L.nt; ++p) most = std::max(most, sv::row_chunks(L, p));
  ASSERT_EQ(sv::max_chunks(L), most);
  // The documented order inside block b's range: its own chunks c = 0, 1,
  // ..., then the cross partials of the rows p feeding it, p increasing.
  for (int64_t b = 0; b < L.nt; ++b) {
    int64_t next = sv::slot_base(L, b);
    for (int64_t c = 0; c < sv::row_chunks(L, b); ++c)
      ASSERT_EQ(sv::own_slot(L, b, c), next++) << "own b=" << b << " c=" << c;
    for (int64_t p = 0; p < L.nt; ++p)
      if (L.lower ? p > b : p < b) {
        ASSERT_EQ(sv::cross_slot(L, p, b), next++) << "cross p=" << p << " b=" << b;
      }
    ASSERT_EQ(next, sv::slot_base(L, b + 1));
  }
  for (int64_t p = 0; p < L.nt; ++p) {
    for (int64_t c = 0; c < sv::row_chunks(L, p); ++c) {
      const int64_t s = sv::own_slot(L, p, c);
      ASSERT_GE(s, sv::slot_base(L, p)) << "own p=" << p << " c=" << c;
      ASSERT_LT(s, sv::slot_base(L, p + 1)) << "own p=" << p << " c=" << c;
    }
    for (int64_t t = 0; t < sv::row_len(L, p); ++t) {
      const int64_t q = sv::tile_col(L, p, t);
      if (q == p) continue;
      const int64_t s = sv::cross_slot(L, p, q);
      ASSERT_GE(s, sv::slot_base(L, q)) << "cross p=" << p << " q=" << q;
      ASSERT_LT(s, sv::slot_base(L, q + 1)) << "cross p=" << p << " q=" << q;
    }
  }
}

// The work items of the ring tile kernel's grid (nt x ring_grid_rows thread
// blocks: grid row 0 the diagonal chunks, grid row y >= 1 column group
// ring_group(y) without the diagonal chunks; blocks past a row's chunks
// doing nothing) onto the slots: every slot written exactly once, every
// stored tile in exactly one chunk, no other tile visited.
void check_bijection(const sv::Layout &L) {
  SCOPED_TRACE(describe(L));
  const int64_t total = sv::total_slots(L);
  std::vector<int> slot_hits(std::size_t(total), 0);
  std::vector<int> tile_hits(std::size_t(L.nt * L.nt), 0);
  int64_t bad = 0;
  for (int64_t p = 0; p < L.nt; ++p)
    for (int64_t y = 0; y < sv::ring_grid_rows(L); ++y) {
      // Grid block (p, y) runs chunk c: row p's diagonal chunk (y = 0) or
      // the chunk over column group g = ring_group(y).
      const int64_t c = sv::ring_block_chunk(L, p, y);
      const int64_t g = y == 0 ? sv::first_chunk_group(L, p) + sv::diagonal_chunk(L, p)
                               : sv::ring_group(L, y);
      const int64_t len = sv::row_len(L, p);
      const int64_t t0 = sv::chunk_begin(L, p, c);
      if (t0 >= len) {
        // The kernel returns at once for these: they must be exactly the
        // groups left of an upper row's diagonal or past a row's chunks.
        if (c >= 0 && c < sv::row_chunks(L, p)) ++bad;
        continue;
      }
      if (c < 0) ++bad;
      // Its tiles lie in column group g.
      if (sv::column_group(L, sv::tile_col(L, p, t0)) != g) ++bad;
      if (c >= sv::row_chunks(L, p)) ++bad;
      const int64_t t1 = sv::chunk_end(L, p, c);
      // Grid row 0 holds exactly the diagonal chunks.
      const bool has_diag = L.lower ? t1 == len : t0 == 0;
      if (has_diag != (y == 0)) ++bad;
      // Chunks are column groups' ranges of at most `chunk` tiles.
      if (t1 - t0 > L.chunk || t1 <= t0) ++bad;
      if (c > 0 && ((sv::tile_col(L, p, t0) + L.shift) % L.chunk) != 0) ++bad;
      const int64_t own = sv::own_slot(L, p, c);
      if (own < 0 || own >= total) {
        ++bad;
        continue;
      }
      ++slot_hits[std::size_t(own)];
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t q = sv::tile_col(L, p, t);
        if (q < 0 || q >= L.nt || (L.lower ? q > p : q < p)) {
          ++bad;  // not a stored tile
          continue;
        }
        ++tile_hits[std::size_t(p * L.nt + q)];
        if (q == p) continue;
        const int64_t s = sv::cross_slot(L, p, q);
        if (s < 0 || s >= total) {
          ++bad;
          continue;
        }
        ++slot_hits[std::size_t(s)];
      }
    }
  ASSERT_EQ(bad, 0);
  for (int64_t s = 0; s < total; ++s)
    ASSERT_EQ(slot_hits[std::size_t(s)], 1) << "slot " << s << " of " << total;
  for (int64_t p = 0; p < L.nt; ++p)
    for (int64_t q = 0; q < L.nt; ++q) {
      const bool stored = L.lower ? q <= p : q >= p;
      ASSERT_EQ(tile_hits[std::size_t(p * L.nt + q)], stored ? 1 : 0)
          << "tile (" << p << "," << q << ")";
    }
}

// The register kernel's grid (chunk 1, one block per tile, tile_of_block):
// blocks 0 .. nt - 1 on the diagonal tiles in order, then every off-diagonal
// stored tile exactly once in column-major order (lower: columns and rows
// ascending; upper, the mirror image: both descending); each block's own slot is
// that of the chunk holding exactly its tile (tile_own_slot and
// tile_cross_slot give the general slots), and every slot is written once
// (own and cross partials).
void check_tile_grid(const sv::Layout &L) {
  SCOPED_TRACE(describe(L));
  ASSERT_EQ(L.chunk, 1);
  const int64_t total = sv::total_slots(L);
  std::vector<int> slot_hits(std::size_t(total), 0);
  std::vector<int> tile_hits(std::size_t(L.nt * L.nt), 0);
  int64_t bad = 0, prev_p = -1, prev_q = -1;
  ASSERT_EQ(sv::total_tiles(L), L.nt * (L.nt + 1) / 2);
  for (int64_t i = 0; i < sv::total_tiles(L); ++i) {
    const sv::TileIndex t = sv::tile_of_block(L, i);
    const int64_t p = t.p, q = t.q;
    if (p < 0 || p >= L.nt || q < 0 || q >= L.nt || (L.lower ? q > p : q < p)) {
      ADD_FAILURE() << "block " << i << " on (" << p << "," << q
                    << "), not a stored tile";
      return;
    }
    if (i < L.nt) {
      if (p != i || q != i) ++bad;
    } else {
      if (p == q) ++bad;
      // Column-major: lower's column never decreases and the row rises by
      // one inside a column; upper's column never increases and the row falls
      // by one. Lower starts at tile (1, 0), upper at (nt - 2, nt - 1).
      if (i == L.nt && (L.lower ? p != 1 || q != 0 : p != L.nt - 2 || q != L.nt - 1))
        ++bad;
      if (i > L.nt && L.lower && !(q > prev_q || (q == prev_q && p == prev_p + 1))) ++bad;
      if (i > L.nt && !L.lower && !(q < prev_q || (q == prev_q && p == prev_p - 1)))
        ++bad;
      prev_p = p;
      prev_q = q;
    }
    ++tile_hits[std::size_t(p * L.nt + q)];
    const int64_t c = sv::block_chunk(L, p, q);
    const int64_t t0 = sv::chunk_begin(L, p, c), t1 = sv::chunk_end(L, p, c);
    if (t0 >= sv::row_len(L, p) || t1 != t0 + 1 || sv::tile_col(L, p, t0) != q) ++bad;
    ++slot_hits[std::size_t(sv::own_slot(L, p, c))];
    if (p != q) ++slot_hits[std::size_t(sv::cross_slot(L, p, q))];
    // The register kernel's closed forms name the same slots.
    if (sv::tile_own_slot(L, p, q) != sv::own_slot(L, p, c)) ++bad;
    if (p != q && sv::tile_cross_slot(L, p, q) != sv::cross_slot(L, p, q)) ++bad;
  }
  ASSERT_EQ(bad, 0);
  for (int64_t s = 0; s < total; ++s)
    ASSERT_EQ(slot_hits[std::size_t(s)], 1) << "slot " << s << " of " << total;
  for (int64_t p = 0; p < L.nt; ++p)
    for (int64_t q = 0; q < L.nt; ++q)
      ASSERT_EQ(tile_hits[std::size_t(p * L.nt + q)], (L.lower ? q <= p : q >= p) ? 1 : 0)
          << "tile (" << p << "," << q << ")";
}

TEST(SymvLayout, TileGridOverSizes) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  for (int64_t n : wide_sizes(rng))
    for (int64_t nb : {32, 64, 128})
      for (bool lower : {true, false}) {
        check_tile_grid(sv::make_layout(n, nb, 1, lower));
        if (HasFailure()) return;
      }
}

// Large grids, where the square roots of tile_of_block are far from exact:
// the first and last tile of every off-diagonal column (and a random one),
// for up to 2^20 block rows.
TEST(SymvLayout, TileGridColumnBoundariesOfLargeGrids) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  for (int64_t nt : {int64_t(1) << 10, int64_t(46341), int64_t(99991), int64_t(1) << 20})
    for (bool lower : {true, false}) {
      const sv::Layout L = sv::make_layout(nt * 32, 32, 1, lower);
      ASSERT_EQ(L.nt, nt);
      int64_t bad = 0;
      const int64_t step = nt > 100000 ? 97 : 1;
      // The q-th column dispatched: lower column q (rows q + 1 .. nt - 1
      // ascending), or upper column nt - 1 - q (rows nt - 2 - q .. 0
      // descending); nt - 1 - q off-diagonal tiles either way.
      for (int64_t q = 0; q < nt; q += step) {
        const int64_t len = nt - 1 - q;
        if (len == 0) continue;
        const int64_t first = L.nt + sv::offdiag_column_start(L, q);
        const int64_t k = int64_t(rng() % std::uint64_t(len));
        for (int64_t off : {int64_t(0), len - 1, k}) {
          const sv::TileIndex t = sv::tile_of_block(L, first + off);
          const int64_t want_p = lower ? q + 1 + off : nt - 2 - q - off;
          const int64_t want_q = lower ? q : nt - 1 - q;
          if (t.q != want_q || t.p != want_p) ++bad;
        }
      }
      ASSERT_EQ(bad, 0) << "nt=" << nt << (lower ? " lower" : " upper");
      const sv::TileIndex last = sv::tile_of_block(L, sv::total_tiles(L) - 1);
      EXPECT_EQ(last.q, lower ? nt - 2 : 1);
      EXPECT_EQ(last.p, lower ? nt - 1 : 0);
    }
}

// Lower and upper storage are chunked as mirror images of each other (block
// column q <-> nt - 1 - q, row p <-> nt - 1 - p): the chunks of lower row p,
// last group first, have the widths of upper row nt - 1 - p's chunks, first
// group first. And both grids end on a short column group: the one
// ring_group gives the last grid row is min(2, chunk) columns wide, or the
// whole matrix when one chunk covers a row.
TEST(SymvLayout, LowerAndUpperChunksAreMirrorImages) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  for (int64_t n : wide_sizes(rng))
    for (int64_t nb : {32, 64})
      for (int64_t chunk : kChunks) {
        const sv::Layout lo = sv::make_layout(n, nb, chunk, true);
        const sv::Layout up = sv::make_layout(n, nb, chunk, false);
        SCOPED_TRACE(describe(lo));
        ASSERT_TRUE(lo.shift >= 0 && lo.shift < lo.chunk);
        ASSERT_EQ(sv::max_chunks(lo), sv::max_chunks(up));
        const int64_t nt = lo.nt;
        for (int64_t p = 0; p < nt; ++p) {
          const int64_t pu = nt - 1 - p, cl = sv::row_chunks(lo, p);
          ASSERT_EQ(cl, sv::row_chunks(up, pu)) << "p=" << p;
          for (int64_t c = 0; c < cl; ++c) {
            const int64_t wl =
                sv::chunk_end(lo, p, cl - 1 - c) - sv::chunk_begin(lo, p, cl - 1 - c);
            const int64_t wu = sv::chunk_end(up, pu, c) - sv::chunk_begin(up, pu, c);
            ASSERT_EQ(wl, wu) << "p=" << p << " c=" << c;
          }
        }
        const int64_t short_width = lo.chunk >= nt ? nt : std::min<int64_t>(2, lo.chunk);
        for (const sv::Layout &L : {lo, up}) {
          const int64_t g = sv::ring_group(L, sv::ring_grid_rows(L) - 1);
          int64_t width = 0;
          for (int64_t q = 0; q < nt; ++q) width += sv::column_group(L, q) == g;
          EXPECT_EQ(width, short_width) << (L.lower ? "lower" : "upper");
        }
        if (HasFailure()) return;
      }
}

TEST(SymvLayout, SlotArithmeticAndBijectionOverSizesAndChunks) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  for (int64_t n : wide_sizes(rng))
    for (int64_t nb : {32, 64})
      for (int64_t chunk : kChunks)
        for (bool lower : {true, false}) {
          const sv::Layout L = sv::make_layout(n, nb, chunk, lower);
          check_slot_arithmetic(L);
          check_bijection(L);
          if (HasFailure()) return;
        }
}

// The layouts the variants really use (chunk 0 = a whole row).
TEST(SymvLayout, CompiledVariantsLayouts) {
  // Every listed variant's layout (data, whatever the build); the lookups
  // for those this build compiles.
  ASSERT_GE(xn::symv_compiled_count(), 1u);
  ASSERT_EQ(xn::symv_listed_count(), std::size_t(xn::kSymvMaxVariantId));
  for (std::size_t i = 0; i < xn::symv_listed_count(); ++i) {
    const xn::SymvVariant &v = xn::symv_listed_variant(i);
    const int id = v.id;
    if (xn::symv_variant_compiled(id)) {
      // Single precision fits every variant; double falls back to its
      // default for the ones whose shared-memory ring would not fit.
      const xn::SymvVariant &c = xn::symv_variant(id, false, 1000, kL);
      ASSERT_EQ(c.id, id);
      ASSERT_TRUE(xn::symv_variant_fits(c, false)) << id;
      for (int64_t n : {int64_t(100), int64_t(20000)})
        for (bool lower : {true, false}) {
          ASSERT_EQ(&xn::symv_variant(id, false, n, fill(lower)), &c);
          if (xn::symv_variant_fits(c, true)) {
            ASSERT_EQ(&xn::symv_variant(id, true, n, fill(lower)), &c);
          } else {
            ASSERT_EQ(&xn::symv_variant(id, true, n, fill(lower)),
                      &xn::symv_default_variant(true, n, fill(lower)));
          }
        }
    }
    ASSERT_TRUE(xn::symv_variant_fits(v, false)) << id;
    ASSERT_TRUE(v.nb % 32 == 0 && v.nb > 0) << id;
    ASSERT_TRUE(v.cols_per_warp > 0 && v.cols_per_warp <= 32 && v.pieces >= 1 &&
                v.nb % (v.pieces * v.cols_per_warp) == 0)
        << id;
    ASSERT_GE(v.chunk, 0);
    for (int64_t n : {int64_t(1), int64_t(63), int64_t(64), int64_t(65), int64_t(1000),
                      int64_t(4097)})
      for (bool lower : {true, false}) {
        const sv::Layout L = xn::symv_layout(v, n, fill(lower));
        EXPECT_EQ(L.chunk, v.chunk > 0 ? v.chunk : L.nt) << id;
        if (v.chunk == 0) {
          EXPECT_EQ(sv::max_chunks(L), 1);
        }
        EXPECT_EQ(xn::symv_workspace_elems(v, n, fill(lower)),
                  std::size_t(sv::workspace_elems(L)));
        check_bijection(L);
        if (v.regs) {
          EXPECT_EQ(v.chunk, 1) << id;
          check_tile_grid(L);
        }
      }
    EXPECT_EQ(xn::symv_workspace_elems(v, 0, kL), 0u);
  }
  // Id 0, ids not compiled and out-of-range ids give the default for the precision, order
  // and triangle, which is one of the table's and fits its precision.
  for (bool dbl : {true, false})
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(8192), int64_t(8193),
                      int64_t(16384), int64_t(16385), int64_t(40000)})
      for (bool lower : {true, false}) {
        const xn::SymvVariant &d = xn::symv_default_variant(dbl, n, fill(lower));
        EXPECT_TRUE(d.id >= 1 && d.id <= xn::kSymvMaxVariantId);
        EXPECT_TRUE(xn::symv_variant_compiled(d.id));
        EXPECT_TRUE(xn::symv_variant_fits(d, dbl));
        EXPECT_EQ(&xn::symv_variant(0, dbl, n, fill(lower)), &d);
        EXPECT_EQ(&xn::symv_variant(xn::kSymvMaxVariantId + 1, dbl, n, fill(lower)), &d);
        // Ids of variants this build does not compile (no XN_BUILD_TUNING).
        for (int id = 1; id <= xn::kSymvMaxVariantId; ++id)
          if (!xn::symv_variant_compiled(id)) {
            EXPECT_EQ(&xn::symv_variant(id, dbl, n, fill(lower)), &d) << id;
          }
        EXPECT_EQ(&xn::symv_variant(-3, dbl, n, fill(lower)), &d);
      }
  // The rule (docs/performance.md, runs 10 and 11): the register tile
  // kernel in both precisions, at every order and in both triangles; double
  // changes variant once, at n = 8192, single never.
  for (bool dbl : {true, false})
    for (int64_t n : {int64_t(1), int64_t(8192), int64_t(8193), int64_t(40000)}) {
      const xn::SymvVariant &d = xn::symv_default_variant(dbl, n, kL);
      EXPECT_EQ(d.regs, 1) << dbl << " " << n;
      EXPECT_EQ(&xn::symv_default_variant(dbl, n, kU), &d) << dbl << " " << n;
    }
  EXPECT_EQ(&xn::symv_default_variant(true, 1, kL),
            &xn::symv_default_variant(true, 8192, kL));
  EXPECT_NE(&xn::symv_default_variant(true, 8192, kL),
            &xn::symv_default_variant(true, 8193, kL));
  EXPECT_EQ(&xn::symv_default_variant(true, 8193, kL),
            &xn::symv_default_variant(true, 40000, kL));
  for (int64_t n : {int64_t(8192), int64_t(16384), int64_t(16385), int64_t(40000)})
    EXPECT_EQ(&xn::symv_default_variant(false, 1, kL),
              &xn::symv_default_variant(false, n, kL))
        << n;
}

// ---------------------------------------------------------------- part 2

// Reports the first few forbidden accesses of one emulated call.
struct Violations {
  int count = 0;
  std::string where;
  void report(const std::string &what) {
    if (count++ < 5) ADD_FAILURE() << where << ": " << what;
  }
};

// The stored matrix, readable only inside its stored triangle.
template <class T>
class GuardedMatrix {
 public:
  GuardedMatrix(const std::vector<T> &a, int64_t n, int64_t lda, bool lower,
                bool forbid_all, Violations &v)
      : a_(a), n_(n), lda_(lda), lower_(lower), forbid_all_(forbid_all), v_(v) {}
  T at(int64_t i, int64_t j) const {
    const bool inside = i >= 0 && i < n_ && j >= 0 && j < n_;
    if (forbid_all_ || !inside || !(lower_ ? i >= j : i <= j)) {
      std::ostringstream s;
      s << "A(" << i << "," << j << ") read" << (forbid_all_ ? " with alpha = 0" : "");
      v_.report(s.str());
      return std::numeric_limits<T>::quiet_NaN();
    }
    return a_[std::size_t(i + j * lda_)];
  }

 private:
  const std::vector<T> &a_;
  int64_t n_, lda_;
  bool lower_, forbid_all_;
  Violations &v_;
};

// A BLAS vector in memory: only its element positions may be touched.
template <class T>
class GuardedVector {
 public:
  GuardedVector(std::vector<T> &m, int64_t inc, const char *name, bool forbid_reads,
                Violations &v)
      : m_(m), inc_(inc), name_(name), forbid_reads_(forbid_reads), v_(v) {}
  T read(int64_t off) const {
    if (forbid_reads_ || !valid(off)) {
      v_.report(std::string(name_) + " read at " + std::to_string(off));
      return std::numeric_limits<T>::quiet_NaN();
    }
    return m_[std::size_t(off)];
  }
  void write(int64_t off, T value) {
    if (!valid(off)) {
      v_.report(std::string(name_) + " written at " + std::to_string(off));
      return;
    }
    m_[std::size_t(off)] = value;
  }

 private:
  bool valid(int64_t off) const {
    return off >= 0 && off < int64_t(m_.size()) && off % std::abs(inc_) == 0;
  }
  std::vector<T> &m_;
  int64_t inc_;
  const char *name_;
  bool forbid_reads_;
  Violations &v_;
};

// The workspace: NaN at first; a read must find an element written once.
template <class T>
class GuardedWorkspace {
 public:
  GuardedWorkspace(int64_t elems, Violations &v)
      : w_(std::size_t(elems), std::numeric_limits<T>::quiet_NaN()),
        writes_(std::size_t(elems), 0),
        v_(v) {}
  void write(int64_t i, T value) {
    if (i < 0 || i >= int64_t(w_.size())) {
      v_.report("workspace written at " + std::to_string(i));
      return;
    }
    ++writes_[std::size_t(i)];
    w_[std::size_t(i)] = value;
  }
  T read(int64_t i) const {
    if (i < 0 || i >= int64_t(w_.size()) || writes_[std::size_t(i)] != 1) {
      v_.report("workspace read at " + std::to_string(i) +
                (i >= 0 && i < int64_t(w_.size())
                     ? " (written " + std::to_string(writes_[std::size_t(i)]) + " times)"
                     : std::string(" (outside)")));
      return std::numeric_limits<T>::quiet_NaN();
    }
    return w_[std::size_t(i)];
  }
  int64_t elems() const { return int64_t(w_.size()); }
  int writes(int64_t i) const { return writes_[std::size_t(i)]; }

 private:
  std::vector<T> w_;
  std::vector<int> writes_;
  Violations &v_;
};

struct EmuConfig {
  int64_t nb;     // tile size
  int64_t tv;     // tile columns per warp
  int64_t chunk;  // tiles per thread block (make_layout's argument)
  int64_t ry;     // thread groups of the reduction kernel
  // The kernels read x in place when incx == 1 and x is 16-byte aligned,
  // and pack it into the workspace first otherwise; with x_in_place false
  // (or incx != 1) the packed path is emulated.
  bool x_in_place;
  int64_t pieces = 1;  // pipeline pieces per tile (symv_layout.h column_warp)
  // The register tile kernel's grid: one block per tile (chunk must be 1),
  // enumerated by tile_of_block; tv is then its columns per warp.
  bool tile_grid = false;
};

// Where the tile kernel reads x from: the caller's x (incx = 1, only its n
// elements exist) or the packed copy at the start of the workspace.
template <class T>
class XSource {
 public:
  XSource(const GuardedVector<T> &x, const GuardedWorkspace<T> &ws, int64_t n,
          bool packed, Violations &v)
      : x_(x), ws_(ws), n_(n), packed_(packed), v_(v) {}
  T operator()(int64_t i) const {
    if (packed_) return ws_.read(i);
    if (i < 0 || i >= n_) {
      v_.report("x element " + std::to_string(i) + " read in place");
      return std::numeric_limits<T>::quiet_NaN();
    }
    return x_.read(i);
  }

 private:
  const GuardedVector<T> &x_;
  const GuardedWorkspace<T> &ws_;
  int64_t n_;
  bool packed_;
  Violations &v_;
};

// The diagonal tile of block row p (Nath et al., SC'11, §4.2 mirroring): only its
// stored triangle is loaded, into "shared memory" that starts as NaN (so an
// element read before it is written shows up), and read back as the full
// symmetric tile; it adds to the own row sums only.
template <class T>
void emulate_diagonal_tile(const sv::Layout &L, const EmuConfig &cfg, int64_t row0,
                           int64_t rext, const GuardedMatrix<T> &A, const XSource<T> &xs,
                           std::vector<T> &acc) {
  const int64_t nb = L.nb;
  std::vector<T> diag(static_cast<std::size_t>(nb * nb),
                      std::numeric_limits<T>::quiet_NaN());
  for (int64_t v = 0; v < nb; ++v)
    for (int64_t u = 0; u < nb; ++u)
      if (sv::stored_in_diagonal_tile(L.lower, u, v))
        diag[std::size_t(u * nb + v)] =
            (u < rext && v < rext) ? A.at(row0 + u, row0 + v) : T(0);
  for (int64_t v = 0; v < nb; ++v) {
    const T xv = xs(row0 + sv::redirect(v, rext));
    const T xq = v < rext ? xv : T(0);
    for (int64_t u = 0; u < nb; ++u) {
      const T e = sv::stored_in_diagonal_tile(L.lower, u, v)
                      ? diag[std::size_t(u * nb + v)]
                      : diag[std::size_t(v * nb + u)];
      acc[std::size_t(sv::column_warp(nb, cfg.tv, cfg.pieces, v) * nb + u)] += e * xq;
    }
  }
}

// A diagonal tile inside the matrix (symv_kernels.cu kRegsDiagonal and
// symv_split_diagonal_tile): its stored triangle S only, no mirror;
// row sums of S into the warps' row sums, column sums of S's strict
// triangle into colsum, which the own partial adds last.
template <class T>
void emulate_split_diagonal_tile(const sv::Layout &L, const EmuConfig &cfg, int64_t row0,
                                 const GuardedMatrix<T> &A, const XSource<T> &xs,
                                 std::vector<T> &acc, std::vector<T> &colsum) {
  const int64_t nb = L.nb;
  for (int64_t v = 0; v < nb; ++v) {
    const T xq = xs(row0 + v);
    T s = T(0);
    for (int64_t u = 0; u < nb; ++u) {
      if (!sv::stored_in_diagonal_tile(L.lower, u, v)) continue;
      const T e = A.at(row0 + u, row0 + v);
      acc[std::size_t(sv::column_warp(nb, cfg.tv, cfg.pieces, v) * nb + u)] += e * xq;
      if (u != v) s += e * xs(row0 + u);
    }
    colsum[std::size_t(v)] = s;
  }
}

// Chunk c of row p: thread block (p, y) of symv_tile_kernel, c = ring_block_chunk(p, y)
// (c < 0: a block with nothing to do). The kernel's warp w holds
// tile columns v with column_warp(v) = w and its lanes all nb rows u; here
// the loops run over u and v, with the row sums kept per warp (acc[w][u])
// and added in warp order at the end, as the kernel does. Off-diagonal
// tiles first (A and x loaded at redirected indices - in place for a tile
// inside the matrix - and zeroed past the edge), the diagonal tile last.
template <class T>
void emulate_tile_block(const sv::Layout &L, const EmuConfig &cfg, int64_t p, int64_t c,
                        const GuardedMatrix<T> &A, const XSource<T> &xs,
                        GuardedWorkspace<T> &ws, bool alpha_dev_zero) {
  const int64_t nb = L.nb, W = sv::tile_warps(nb, cfg.tv, cfg.pieces);
  const int64_t len = sv::row_len(L, p);
  const int64_t t0 = sv::chunk_begin(L, p, c);
  if (t0 >= len) return;  // the grid is nt x ring_grid_rows
  if (alpha_dev_zero) return;
  const int64_t t1 = sv::chunk_end(L, p, c);
  const bool has_diag = L.lower ? t1 == len : t0 == 0;
  const int64_t o0 = (!L.lower && has_diag) ? t0 + 1 : t0;
  const int64_t o1 = (L.lower && has_diag) ? t1 - 1 : t1;
  const int64_t row0 = p * nb;
  const int64_t rext = sv::block_extent(L, p);
  const int64_t slots = sv::slots_offset(L);

  std::vector<T> xp(static_cast<std::size_t>(nb));
  for (int64_t u = 0; u < nb; ++u) {
    const T xv = xs(row0 + sv::redirect(u, rext));
    xp[std::size_t(u)] = u < rext ? xv : T(0);
  }
  std::vector<T> acc(static_cast<std::size_t>(W * nb), T(0));
  std::vector<T> part(static_cast<std::size_t>(nb));
  for (int64_t t = o0; t < o1; ++t) {
    const int64_t q = sv::tile_col(L, p, t);
    if (q == p) {
      ADD_FAILURE() << "the diagonal tile among the off-diagonal ones, p=" << p;
      return;
    }
    const int64_t col0 = q * nb;
    const int64_t cext = sv::block_extent(L, q);
    for (int64_t v = 0; v < nb; ++v) {
      const T xv = xs(col0 + sv::redirect(v, cext));
      const T xq = v < cext ? xv : T(0);
      T s = T(0);
      for (int64_t u = 0; u < nb; ++u) {
        const T raw = A.at(row0 + sv::redirect(u, rext), col0 + sv::redirect(v, cext));
        const T e = (v < cext && u < rext) ? raw : T(0);
        acc[std::size_t(sv::column_warp(nb, cfg.tv, cfg.pieces, v) * nb + u)] += e * xq;
        s += e * xp[std::size_t(u)];
      }
      part[std::size_t(v)] = s;
    }
    const int64_t slot = sv::cross_slot(L, p, q);
    for (int64_t v = 0; v < nb; ++v)
      ws.write(slots + slot * nb + v, part[std::size_t(v)]);
  }
  // Both kernels split a diagonal tile inside the matrix into row and
  // column sums (the host data is 16-byte aligned); one at the edge is
  // mirrored.
  const bool split_diagonal = has_diag && rext == nb;
  std::vector<T> colsum(static_cast<std::size_t>(nb), T(0));
  if (split_diagonal)
    emulate_split_diagonal_tile(L, cfg, row0, A, xs, acc, colsum);
  else if (has_diag)
    emulate_diagonal_tile(L, cfg, row0, rext, A, xs, acc);

  const int64_t own = sv::own_slot(L, p, c);
  for (int64_t u = 0; u < nb; ++u) {
    T s = acc[std::size_t(u)];
    for (int64_t w = 1; w < W; ++w) s += acc[std::size_t(w * nb + u)];
    if (split_diagonal) s += colsum[std::size_t(u)];
    ws.write(slots + own * nb + u, s);
  }
}

// Everything xnSsymv/xnDsymv does after its argument checks, on the host:
// the API's quick returns, then the kernels - x packed into the workspace
// (unless read in place), the tile kernel over its grid (both skipped when
// alpha is a host zero) and the reduction.
template <class T>
void emulate_symv(const EmuConfig &cfg, bool lower, int64_t n, T alpha,
                  const std::vector<T> &a, int64_t lda, std::vector<T> &x, int64_t incx,
                  T beta, std::vector<T> &y, int64_t incy, bool device_scalars,
                  Violations &viol) {
  if (n == 0) return;
  if (!device_scalars && alpha == T(0) && beta == T(1)) return;
  const bool alpha_is_zero = !device_scalars && alpha == T(0);
  const bool alpha_dev_zero = device_scalars && alpha == T(0);
  const sv::Layout L = sv::make_layout(n, cfg.nb, cfg.chunk, lower);
  const bool packed = !(cfg.x_in_place && incx == 1);
  // alpha = 0 never reads A. x may be read by the packing, which a device
  // alpha cannot skip (the host does not know its value).
  const GuardedMatrix<T> A(a, n, lda, lower, alpha == T(0), viol);
  const GuardedVector<T> gx(x, incx, "x", alpha_is_zero, viol);
  GuardedVector<T> gy(y, incy, "y", beta == T(0), viol);
  // With a host zero alpha there is no workspace at all (the API passes
  // NULL): any access is reported.
  GuardedWorkspace<T> ws(alpha_is_zero ? 0 : sv::workspace_elems(L), viol);
  const XSource<T> xs(gx, ws, n, packed, viol);

  if (!alpha_is_zero) {
    if (packed)
      for (int64_t i = 0; i < sv::packed_x_elems(L); ++i)
        ws.write(i, i < n ? gx.read(sv::vector_offset(i, n, incx)) : T(0));
    if (cfg.tile_grid) {
      if (L.chunk != 1) ADD_FAILURE() << "the tile grid needs chunks of one tile";
      for (int64_t i = 0; i < sv::total_tiles(L); ++i) {
        const sv::TileIndex t = sv::tile_of_block(L, i);
        emulate_tile_block(L, cfg, t.p, sv::block_chunk(L, t.p, t.q), A, xs, ws,
                           alpha_dev_zero);
      }
    } else {
      for (int64_t p = 0; p < L.nt; ++p)
        for (int64_t grid_y = 0; grid_y < sv::ring_grid_rows(L); ++grid_y)
          emulate_tile_block(L, cfg, p, sv::ring_block_chunk(L, p, grid_y), A, xs, ws,
                             alpha_dev_zero);
    }
  }
  // Every slot element (and the packed x, when packed) written exactly once.
  if (!alpha_is_zero && !alpha_dev_zero)
    for (int64_t i = packed ? 0 : sv::slots_offset(L); i < ws.elems(); ++i)
      if (ws.writes(i) != 1) {
        viol.report("workspace element " + std::to_string(i) + " written " +
                    std::to_string(ws.writes(i)) + " times");
        break;
      }

  // symv_reduce_kernel: element u of block b, group r sums slots r, r + ry,
  // ... in reduce_unroll interleaved running sums, added pairwise
  // ((s0 + s1) + (s2 + s3)) + ...; the groups' sums are added in order.
  const int64_t nb = L.nb, slots = sv::slots_offset(L);
  const bool use_sum = !alpha_is_zero && alpha != T(0);
  std::vector<T> partial(static_cast<std::size_t>(cfg.ry));
  for (int64_t b = 0; b < L.nt; ++b) {
    const int64_t base = slots + sv::slot_base(L, b) * nb, cnt = sv::slot_count(L, b);
    for (int64_t u = 0; u < nb; ++u) {
      if (use_sum)
        for (int64_t r = 0; r < cfg.ry; ++r) {
          const int64_t U = sv::reduce_unroll(sizeof(T));
          std::vector<T> s(static_cast<std::size_t>(U), T(0));
          int64_t i = r;
          for (; i + (U - 1) * cfg.ry < cnt; i += U * cfg.ry)
            for (int64_t k = 0; k < U; ++k)
              s[std::size_t(k)] += ws.read(base + (i + k * cfg.ry) * nb + u);
          for (; i < cnt; i += cfg.ry) s[0] += ws.read(base + i * nb + u);
          for (int64_t w = 1; w < U; w *= 2)
            for (int64_t k = 0; k + w < U; k += 2 * w)
              s[std::size_t(k)] += s[std::size_t(k + w)];
          partial[std::size_t(r)] = s[0];
        }
      const int64_t row = b * nb + u;
      if (row >= n) continue;
      T sum = T(0);
      if (use_sum) {
        sum = partial[0];
        for (int64_t r = 1; r < cfg.ry; ++r) sum += partial[std::size_t(r)];
      }
      const int64_t off = sv::vector_offset(row, n, incy);
      const T scaled = use_sum ? alpha * sum : T(0);
      if (beta == T(0)) {
        gy.write(off, scaled);
      } else {
        gy.write(off, scaled + beta * gy.read(off));
      }
    }
  }
}

// Element i of a BLAS vector (reference BLAS: from the first element in
// memory for inc > 0, from the last for inc < 0), written independently of
// symv_layout.h's vector_offset so that the reference cannot share its bugs.
int64_t blas_pos(int64_t i, int64_t n, int64_t inc) {
  return inc > 0 ? i * inc : (n - 1 - i) * -inc;
}

// The naive SYMV on the full symmetric matrix (BLAS semantics: alpha = 0 does
// not reference A or x, beta = 0 does not reference y). Elements are exact
// for the integer inputs of these tests.
template <class T>
void naive_symv(bool lower, int64_t n, T alpha, const std::vector<T> &a, int64_t lda,
                const std::vector<T> &x, int64_t incx, T beta, std::vector<T> &y,
                int64_t incy) {
  if (n == 0 || (alpha == T(0) && beta == T(1))) return;
  for (int64_t i = 0; i < n; ++i) {
    T s = T(0);
    if (alpha != T(0))
      for (int64_t j = 0; j < n; ++j) {
        const bool st = lower ? i >= j : i <= j;
        const T aij = st ? a[std::size_t(i + j * lda)] : a[std::size_t(j + i * lda)];
        s += aij * x[std::size_t(blas_pos(j, n, incx))];
      }
    T &yi = y[std::size_t(blas_pos(i, n, incy))];
    yi = beta == T(0) ? alpha * s : alpha * s + beta * yi;
  }
}

template <class T>
T small_int(std::mt19937_64 &rng) {
  return T(int(rng() % 9) - 4);  // -4 .. 4
}

struct EmuCase {
  int64_t n, lda;
  bool lower;
  int64_t incx, incy;
  double alpha, beta;
  bool device_scalars;
  // >= 0: A holds +Inf at (n-1, inf_at) (lower) or (inf_at, n-1) (upper), an
  // element of the last block row/column that edge threads are redirected
  // to, and x[n-1] is non-zero. Only the zeroing of redirected elements
  // keeps Inf * 0 = NaN out of the results the naive product leaves +-Inf.
  int64_t inf_at = -1;
  // x[n-1] = +Inf: the element edge threads' x loads are redirected to.
  bool x_last_inf = false;
};

std::string describe(const EmuCase &c, const EmuConfig &cfg) {
  std::ostringstream s;
  s << "n=" << c.n << " lda=" << c.lda << (c.lower ? " lower" : " upper")
    << " incx=" << c.incx << " incy=" << c.incy << " alpha=" << c.alpha
    << " beta=" << c.beta << (c.device_scalars ? " device scalars" : "")
    << (c.inf_at >= 0 ? " Inf at column/row " + std::to_string(c.inf_at) : "")
    << (c.x_last_inf ? " x[n-1] = Inf" : "") << " | nb=" << cfg.nb << " tv=" << cfg.tv
    << " pieces=" << cfg.pieces << " chunk=" << cfg.chunk << " ry=" << cfg.ry
    << (cfg.x_in_place ? " x in place" : " x packed")
    << (cfg.tile_grid ? " tile grid" : "");
  return s.str();
}

// Builds the inputs (NaN everywhere the call may not read; beta = 0 makes y
// NaN), runs the emulation and the naive SYMV and compares them bit for bit,
// with y's gaps (|incy| > 1) untouched. Returns false on a failure.
template <class T>
bool run_emulation_case(const EmuCase &c, const EmuConfig &cfg, std::mt19937_64 &rng) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T gap = T(-1234.5);  // marks y's gaps: they must stay as they are
  std::vector<T> a(std::size_t(c.lda * std::max<int64_t>(c.n, 1)), nan);
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.n; ++i)
      if (c.lower ? i >= j : i <= j) a[std::size_t(i + j * c.lda)] = small_int<T>(rng);
  std::vector<T> x(std::size_t((c.n - 1) * std::abs(c.incx) + 1), nan);
  for (int64_t i = 0; i < c.n; ++i)
    x[std::size_t(blas_pos(i, c.n, c.incx))] = small_int<T>(rng);
  if (c.inf_at >= 0) {
    const int64_t i = c.lower ? c.n - 1 : c.inf_at, j = c.lower ? c.inf_at : c.n - 1;
    a[std::size_t(i + j * c.lda)] = std::numeric_limits<T>::infinity();
    x[std::size_t(blas_pos(c.n - 1, c.n, c.incx))] = T(3);
  }
  if (c.x_last_inf)
    x[std::size_t(blas_pos(c.n - 1, c.n, c.incx))] = std::numeric_limits<T>::infinity();
  std::vector<T> y(std::size_t((c.n - 1) * std::abs(c.incy) + 1), gap);
  for (int64_t i = 0; i < c.n; ++i)
    y[std::size_t(blas_pos(i, c.n, c.incy))] = c.beta == 0 ? nan : small_int<T>(rng);

  std::vector<T> want = y;
  naive_symv<T>(c.lower, c.n, T(c.alpha), a, c.lda, x, c.incx, T(c.beta), want, c.incy);
  Violations viol;
  viol.where = describe(c, cfg);
  std::vector<T> got = y;
  emulate_symv<T>(cfg, c.lower, c.n, T(c.alpha), a, c.lda, x, c.incx, T(c.beta), got,
                  c.incy, c.device_scalars, viol);
  int bad = 0;
  for (std::size_t m = 0; m < got.size(); ++m)
    if (std::memcmp(&got[m], &want[m], sizeof(T)) != 0 &&
        !(std::isnan(got[m]) && std::isnan(want[m])) && bad++ < 5)
      ADD_FAILURE() << viol.where << ": y memory " << m << " got " << got[m] << " want "
                    << want[m];
  return bad == 0 && viol.count == 0;
}

const int64_t kIncs[][2] = {{1, 1}, {-1, 1}, {3, -2}, {-2, -1}, {2, 3}, {-3, -3}};
const double kScalars[][2] = {{1, 0}, {1, 1},  {-1, 2}, {2, -3},  {0, 0},
                              {0, 1}, {0, -2}, {3, 1},  {0.5, 0}, {-2, 0.5}};

TEST(SymvEmulation, SmallIntegersEqualNaiveSymvExactly) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const int64_t sizes[] = {1,  2,  3,   5,   31,  32,  33,  63,
                           64, 65, 100, 127, 128, 129, 200, 257};
  // {nb, columns per warp, chunk, reduction groups, x read in place, pieces}
  const EmuConfig configs[] = {{64, 8, 16, reduce_groups(64), true},
                               {64, 8, 1, reduce_groups(64), false},
                               {64, 16, 2, 4, true},
                               {64, 4, 3, 1, false},
                               {32, 4, 5, 4, true},
                               {32, 8, 1, 3, false},
                               {32, 4, kHuge, 4, true},
                               {64, 8, kHuge, 2, false},
                               {128, 16, 3, reduce_groups(128), true},
                               {128, 8, 1, reduce_groups(128), false},
                               {128, 4, 2, reduce_groups(128), true, 2},
                               {64, 4, 3, reduce_groups(64), false, 4},
                               {32, 4, 2, 2, true, 2},
                               {128, 16, 1, reduce_groups(128), true, 1, true},
                               {64, 8, 1, reduce_groups(64), false, 1, true},
                               {32, 32, 1, 3, true, 1, true}};
  std::size_t k = 0;
  for (int64_t n : sizes)
    for (const EmuConfig &cfg : configs)
      for (bool lower : {true, false}) {
        ++k;
        const auto &inc = kIncs[k % 6];
        const auto &sc = kScalars[k % 10];
        const EmuCase c{
            n, n + int64_t(k % 4) * 3, lower, inc[0], inc[1], sc[0], sc[1], k % 3 == 0};
        if (!run_emulation_case<double>(c, cfg, rng)) return;
        if (n <= 65 && !run_emulation_case<float>(c, cfg, rng)) return;
      }
}

// Every increment pair and every scalar pair, both triangles, both scalar
// locations, on an order with a partial last block and several chunks.
TEST(SymvEmulation, EveryIncrementAndScalarPair) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const EmuConfig cfg{32, 4, 2, reduce_groups(32), true};
  for (const auto &inc : kIncs)
    for (const auto &sc : kScalars)
      for (bool lower : {true, false})
        for (bool dev : {false, true}) {
          const EmuCase c{77, 80, lower, inc[0], inc[1], sc[0], sc[1], dev};
          if (!run_emulation_case<double>(c, cfg, rng)) return;
        }
}

// The compiled variants' own parameters (nb, columns per warp, chunk) on
// orders where their rows split into several chunks.
TEST(SymvEmulation, CompiledVariants) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < xn::symv_listed_count(); ++i) {
    const xn::SymvVariant &v = xn::symv_listed_variant(i);
    for (int64_t n : {int64_t(1), int64_t(65), int64_t(300), int64_t(1100)})
      for (bool lower : {true, false})
        for (int64_t incx : {1, -2}) {
          const sv::Layout L = xn::symv_layout(v, n, fill(lower));
          const EmuConfig cfg{v.nb, v.cols_per_warp, L.chunk,    reduce_groups(v.nb),
                              true, v.pieces,        v.regs != 0};
          const EmuCase c{n, n + 1, lower, incx, lower ? -1 : 3, 2, -1, false};
          if (!run_emulation_case<double>(c, cfg, rng)) return;
        }
  }
}

// An Inf stored where the edge threads' loads of A (or x) are redirected
// to: the
// results must be those of the naive product (+-Inf or NaN exactly where it
// has them), so the redirected copies must be replaced by zero, not just
// multiplied by a zero x.
TEST(SymvEmulation, InfAtRedirectTargetsIsZeroedNotMultiplied) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  for (int64_t n : {33, 65, 100, 130, 300})
    for (const EmuConfig &cfg : {EmuConfig{64, 8, 2, reduce_groups(64), true},
                                 EmuConfig{32, 4, 16, reduce_groups(32), false},
                                 EmuConfig{128, 16, 3, reduce_groups(128), true},
                                 EmuConfig{64, 8, 1, reduce_groups(64), true, 1, true}})
      for (bool lower : {true, false}) {
        if (n % cfg.nb == 0) continue;
        const int64_t last0 = (sv::ceil_div(n, cfg.nb) - 1) * cfg.nb;
        for (int64_t at : {int64_t(0), last0 > 0 ? last0 - 1 : 0, n - 1}) {
          EmuCase c{n, n + 2, lower, 1, 1, 1, 1, false};
          c.inf_at = at;
          if (!run_emulation_case<double>(c, cfg, rng)) return;
        }
        EmuCase c{n, n + 2, lower, lower ? 1 : -1, 1, 1, 1, false};
        c.x_last_inf = true;
        if (!run_emulation_case<double>(c, cfg, rng)) return;
      }
}

// Large orders: many block rows, many chunks per row.
TEST(SymvEmulation, LargeOrders) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const EmuCase cases[] = {{1000, 1003, true, 1, 1, 1, 0, false},
                           {1000, 1000, false, -1, 2, -1, 1, true},
                           {4097, 4097, true, 2, -1, 3, -2, false},
                           {4097, 4099, false, -3, 1, 1, 1, false}};
  for (const EmuCase &c : cases) {
    if (!run_emulation_case<double>(c, {64, 8, 16, reduce_groups(64), true}, rng)) return;
    if (!run_emulation_case<double>(c, {32, 4, 3, 4, false}, rng)) return;
    if (!run_emulation_case<double>(c, {128, 16, 8, reduce_groups(128), true}, rng))
      return;
  }
}

}  // namespace
