// strip_plan.cpp - see strip_plan.h.
#include "distributed/strip_plan.h"

#include <cstddef>
#include <functional>
#include <unordered_map>

namespace xn::dist {

namespace {

// The process along one grid dimension that sends entry x of an axis to a
// receiver at coordinate `receiver` of that dimension.
int source_of(const Axis &axis, std::int64_t x, int receiver) {
  return axis.src < 0 ? receiver : axis.owner(x);
}

std::size_t hash_lists(const std::vector<int> &u, const std::vector<int> &v) {
  std::size_t h = u.size() * 0x9e3779b97f4a7c15ull ^ v.size();
  for (int x : u) h = h * 1099511628211ull ^ std::size_t(x);
  for (int x : v) h = h * 1099511628211ull ^ std::size_t(x);
  return h;
}

}  // namespace

StripPlan plan_strip(const Grid &g, const Axis &xrow, const Axis &xcol, bool trans,
                     StripOf strip_of, const void *ctx) {
  const int procs = g.nprow * g.npcol;
  const int me = g.myrow * g.npcol + g.mycol;
  // The strip's rows run along X's rows (grid rows) unless transposed.
  const Axis &row_axis = trans ? xcol : xrow;
  const Axis &col_axis = trans ? xrow : xcol;
  auto row_coord = [&](int t) { return trans ? t % g.npcol : t / g.npcol; };
  auto col_coord = [&](int t) { return trans ? t / g.npcol : t % g.npcol; };

  StripPlan plan;
  std::unordered_multimap<std::size_t, std::size_t> seen;  // hash -> pack
  std::int64_t my_pack = -1;                               // the pack for myself
  for (int t = 0; t < procs; ++t) {
    const StripIndices s = strip_of(ctx, t);
    std::vector<int> rows, cols;  // local indices along the strip's axes
    for (std::int64_t x : s.rows)
      if (source_of(row_axis, x, row_coord(t)) == row_coord(me))
        rows.push_back(int(row_axis.local(x, row_coord(me))));
    if (rows.empty()) continue;
    for (std::int64_t x : s.cols)
      if (source_of(col_axis, x, col_coord(t)) == col_coord(me))
        cols.push_back(int(col_axis.local(x, col_coord(me))));
    if (cols.empty()) continue;
    Pack p;
    p.rows = std::int64_t(rows.size());
    p.cols = std::int64_t(cols.size());
    p.u = trans ? std::move(cols) : std::move(rows);  // local rows of X
    p.v = trans ? std::move(rows) : std::move(cols);  // local columns of X
    const std::size_t h = hash_lists(p.u, p.v);
    std::int64_t index = -1;
    for (auto [it, end] = seen.equal_range(h); it != end; ++it) {
      const Pack &q = plan.packs[it->second];
      if (q.u == p.u && q.v == p.v) index = std::int64_t(it->second);
    }
    if (index < 0) {
      p.offset = plan.send_elems;
      plan.send_elems += p.rows * p.cols;
      index = std::int64_t(plan.packs.size());
      seen.emplace(h, plan.packs.size());
      plan.packs.push_back(std::move(p));
    }
    const Pack &q = plan.packs[std::size_t(index)];
    if (t == me)
      my_pack = index;
    else
      plan.sends.push_back(Send{t, q.offset, q.rows * q.cols});
  }

  // What arrives, in the order the senders packed it.
  const StripIndices mine = strip_of(ctx, me);
  for (int s = 0; s < procs; ++s) {
    Unpack un;
    un.peer = s;
    for (std::size_t a = 0; a < mine.rows.size(); ++a)
      if (source_of(row_axis, mine.rows[a], row_coord(me)) == row_coord(s))
        un.row_pos.push_back(int(a));
    if (un.row_pos.empty()) continue;
    for (std::size_t b = 0; b < mine.cols.size(); ++b)
      if (source_of(col_axis, mine.cols[b], col_coord(me)) == col_coord(s))
        un.col_pos.push_back(int(b));
    if (un.col_pos.empty()) continue;
    if (s == me) {
      un.from_send = true;
      un.offset = plan.packs[std::size_t(my_pack)].offset;
    } else {
      un.offset = plan.recv_elems;
      plan.recv_elems += un.count();
    }
    plan.unpacks.push_back(std::move(un));
  }
  return plan;
}

StripIndices a_strip(const void *panel, int t) {
  const PanelStrips &s = *static_cast<const PanelStrips *>(panel);
  const int pt = t / s.g->npcol;
  StripIndices r;
  for (std::int64_t i = 0; i < s.count; ++i)
    if (s.crow.src < 0 || s.crow.owner(s.c0 + i) == pt) r.rows.push_back(s.x_part + i);
  for (std::int64_t l = 0; l < s.w; ++l) r.cols.push_back(s.x_k + l);
  return r;
}

StripIndices b_strip(const void *panel, int t) {
  const PanelStrips &s = *static_cast<const PanelStrips *>(panel);
  const int qt = t % s.g->npcol;
  StripIndices r;
  for (std::int64_t l = 0; l < s.w; ++l) r.rows.push_back(s.x_k + l);
  for (std::int64_t j = 0; j < s.count; ++j)
    if (s.ccol.src < 0 || s.ccol.owner(s.c0 + j) == qt) r.cols.push_back(s.x_part + j);
  return r;
}

}  // namespace xn::dist
