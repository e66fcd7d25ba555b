// test_dist_strip_plan.cpp - the exchange plans of the device engine
// (src/distributed/strip_plan.h), replayed for a whole process grid in one
// process: every process packs what its plan says from its local array
// (the pack kernel's rule, done on the host), the blocks go where the
// sends say, every process unpacks what its plan says, and each strip must
// then be exactly op(sub(X)) on the rows (columns) of sub(C) the process
// holds, for the panel of K asked. Random grids (1 x 1 to 3 x 4), block
// sizes, first blocks, source processes (replicated ones included),
// offsets, transposes and panels, from a fresh seed printed on failure.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "distributed/strip_plan.h"

namespace {

using xn::dist::Axis;
using xn::dist::Grid;
using xn::dist::StripPlan;

// A global matrix dealt out over a grid: entry (i, j) = i * 100000 + j + 1.
struct Dealt {
  Axis row, col;
  std::int64_t m = 0, n = 0;
  std::vector<std::vector<double>> local;  // per process, column-major
  std::vector<std::int64_t> lld;
};

Dealt deal(std::int64_t m, std::int64_t n, const Axis &row, const Axis &col, int P, int Q,
           int pad) {
  Dealt d;
  d.row = row;
  d.col = col;
  d.m = m;
  d.n = n;
  for (int t = 0; t < P * Q; ++t) {
    const int p = t / Q, q = t % Q;
    const std::int64_t lr = xn::dist::local_count(m, 0, row.ib, row.b, p, row.src, P);
    const std::int64_t lc = xn::dist::local_count(n, 0, col.ib, col.b, q, col.src, Q);
    d.lld.push_back(lr + pad + 1);
    d.local.emplace_back(std::size_t((lr + pad + 1) * std::max<std::int64_t>(lc, 1)),
                         -1.0);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        if (row.src >= 0 && row.owner(i) != p) continue;
        if (col.src >= 0 && col.owner(j) != q) continue;
        d.local.back()[std::size_t(row.local(i, p) + col.local(j, q) * d.lld.back())] =
            double(i * 100000 + j + 1);
      }
  }
  return d;
}

Axis random_axis(std::mt19937_64 &rng, int procs) {
  Axis a;
  a.b = 1 + std::int64_t(rng() % 5);
  a.ib = 1 + std::int64_t(rng() % 7);
  a.procs = procs;
  a.src = int(rng() % (procs + 1)) - 1;  // -1: replicated
  return a;
}

TEST(DistStripPlan, EveryProcessEndsWithExactlyItsStrips) {
  const std::uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " round " << round);
    const int P = 1 + int(rng() % 3), Q = 1 + int(rng() % 4);
    const bool a_strip = rng() % 2 == 0, trans = rng() % 2 == 0;
    // sub(C) = C(c0.., ..) of `count` rows (A strip) or columns (B strip);
    // op(sub(X)) of count x k (A) or k x count (B), X at (x0, y0).
    const std::int64_t count = 1 + std::int64_t(rng() % 23),
                       k = 1 + std::int64_t(rng() % 19);
    const std::int64_t c0 = std::int64_t(rng() % 6), x0 = std::int64_t(rng() % 5),
                       y0 = std::int64_t(rng() % 5);
    const std::int64_t k0 = std::int64_t(rng() % k),
                       w = 1 + std::int64_t(rng() % (k - k0));
    // X's own shape: the part along sub(C) and the part along K.
    const std::int64_t part_len = count, k_len = k;
    const bool part_on_rows = a_strip != trans;  // sub(C)'s axis runs along X's rows
    const std::int64_t xm = (part_on_rows ? part_len : k_len) + x0 + 2;
    const std::int64_t xn = (part_on_rows ? k_len : part_len) + y0 + 2;
    const Axis xrow = random_axis(rng, P), xcol = random_axis(rng, Q);
    const Dealt X = deal(xm, xn, xrow, xcol, P, Q, int(rng() % 3));
    Grid g;
    g.nprow = P;
    g.npcol = Q;
    xn::dist::PanelStrips ps{};
    ps.g = &g;
    ps.crow = random_axis(rng, P);
    ps.ccol = random_axis(rng, Q);
    ps.c0 = c0;
    ps.count = count;
    ps.x_part = part_on_rows ? x0 : y0;
    ps.x_k = (part_on_rows ? y0 : x0) + k0;
    ps.w = w;
    const xn::dist::StripOf strip_of = a_strip ? xn::dist::a_strip : xn::dist::b_strip;

    // Every process's plan, and its packs.
    std::vector<StripPlan> plans;
    std::vector<std::vector<double>> send(std::size_t(P * Q));
    for (int t = 0; t < P * Q; ++t) {
      g.myrow = t / Q;
      g.mycol = t % Q;
      plans.push_back(xn::dist::plan_strip(g, xrow, xcol, trans, strip_of, &ps));
      const StripPlan &pl = plans.back();
      send[std::size_t(t)].assign(std::size_t(pl.send_elems), -2.0);
      for (const xn::dist::Pack &pk : pl.packs)
        for (std::int64_t b = 0; b < pk.cols; ++b)
          for (std::int64_t a = 0; a < pk.rows; ++a) {
            const std::int64_t u = trans ? pk.u[std::size_t(b)] : pk.u[std::size_t(a)];
            const std::int64_t v = trans ? pk.v[std::size_t(a)] : pk.v[std::size_t(b)];
            send[std::size_t(t)][std::size_t(pk.offset + a + b * pk.rows)] =
                X.local[std::size_t(t)][std::size_t(u + v * X.lld[std::size_t(t)])];
          }
    }
    // Every process's strip from what the others sent it.
    for (int t = 0; t < P * Q; ++t) {
      g.myrow = t / Q;
      g.mycol = t % Q;
      const xn::dist::StripIndices want = strip_of(&ps, t);
      const std::int64_t rows = std::int64_t(want.rows.size()),
                         cols = std::int64_t(want.cols.size());
      std::vector<double> strip(std::size_t(rows * cols), -3.0);
      std::int64_t covered = 0;
      for (const xn::dist::Unpack &un : plans[std::size_t(t)].unpacks) {
        const double *block = nullptr;
        if (un.from_send) {
          ASSERT_EQ(un.peer, t);
          block = send[std::size_t(t)].data() + un.offset;
        } else {
          // The one send of the peer to this process, of the same size.
          int found = 0;
          for (const xn::dist::Send &s : plans[std::size_t(un.peer)].sends)
            if (s.peer == t) {
              ++found;
              ASSERT_EQ(s.count, un.count());
              block = send[std::size_t(un.peer)].data() + s.offset;
            }
          ASSERT_EQ(found, 1) << "process " << un.peer << " to " << t;
        }
        const std::int64_t ur = std::int64_t(un.row_pos.size());
        for (std::size_t b = 0; b < un.col_pos.size(); ++b)
          for (std::size_t a = 0; a < un.row_pos.size(); ++a)
            strip[std::size_t(un.row_pos[a] + un.col_pos[b] * rows)] =
                block[std::int64_t(a) + std::int64_t(b) * ur];
        covered += un.count();
      }
      ASSERT_EQ(covered, rows * cols) << "process " << t;
      // Each entry is op(sub(X)) at its global place: strip row a is X's
      // index want.rows[a] along the strip's row axis.
      for (std::int64_t b = 0; b < cols; ++b)
        for (std::int64_t a = 0; a < rows; ++a) {
          const std::int64_t xr =
              trans ? want.cols[std::size_t(b)] : want.rows[std::size_t(a)];
          const std::int64_t xc =
              trans ? want.rows[std::size_t(a)] : want.cols[std::size_t(b)];
          ASSERT_EQ(strip[std::size_t(a + b * rows)], double(xr * 100000 + xc + 1))
              << "process " << t << " entry (" << a << ", " << b << ")";
        }
      // The strip's indices are the rows (columns) of sub(C) this process
      // holds and the panel.
      const int mine = a_strip ? t / Q : t % Q;
      const Axis &caxis = a_strip ? ps.crow : ps.ccol;
      std::vector<std::int64_t> part, panel;
      for (std::int64_t i = 0; i < count; ++i)
        if (caxis.src < 0 || caxis.owner(c0 + i) == mine) part.push_back(ps.x_part + i);
      for (std::int64_t l = 0; l < w; ++l) panel.push_back(ps.x_k + l);
      EXPECT_EQ(a_strip ? want.rows : want.cols, part);
      EXPECT_EQ(a_strip ? want.cols : want.rows, panel);
    }
    // No process sends to another what that one does not unpack.
    for (int t = 0; t < P * Q; ++t)
      for (const xn::dist::Send &s : plans[std::size_t(t)].sends) {
        int found = 0;
        for (const xn::dist::Unpack &un : plans[std::size_t(s.peer)].unpacks)
          found += un.peer == t && !un.from_send;
        EXPECT_EQ(found, 1) << t << " -> " << s.peer;
      }
  }
}

// Processes of one grid row need the same rows of op(A): one pack serves
// them all (the send buffer holds it once).
TEST(DistStripPlan, ProcessesNeedingTheSameBlockShareOnePack) {
  Grid g;
  g.nprow = 2;
  g.npcol = 3;
  g.myrow = 1;
  g.mycol = 2;
  const Axis xrow{4, 4, 0, 2}, xcol{4, 4, 0, 3};
  xn::dist::PanelStrips ps{};
  ps.g = &g;
  ps.crow = Axis{4, 4, 0, 2};
  ps.ccol = Axis{4, 4, 0, 3};
  ps.c0 = 0;
  ps.count = 24;
  ps.x_part = 0;
  ps.x_k = 0;
  ps.w = 36;
  const StripPlan p = xn::dist::plan_strip(g, xrow, xcol, false, xn::dist::a_strip, &ps);
  // Rows 4-7, 12-15, 20-23 are process row 1's; columns 8-11, 20-23, 32-35
  // process column 2's: one 12 x 12 pack, sent to (1, 0) and (1, 1).
  ASSERT_EQ(p.packs.size(), 1u);
  EXPECT_EQ(p.send_elems, 144);
  ASSERT_EQ(p.sends.size(), 2u);
  EXPECT_EQ(p.sends[0].peer, 3);
  EXPECT_EQ(p.sends[1].peer, 4);
  EXPECT_EQ(p.sends[0].offset, p.sends[1].offset);
  // It receives its other 24 columns from (1, 0) and (1, 1), keeps 12.
  EXPECT_EQ(p.recv_elems, 12 * 24);
}

}  // namespace
