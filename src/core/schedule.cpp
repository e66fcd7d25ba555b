// schedule.cpp - the schedule tables and their well-formedness check.
#include "core/schedule.h"

namespace xn {

namespace {

using O = Operand;
using K = StepKind;
constexpr bool kAssign = false;
constexpr bool kAdd = true;

// Badin et al., ICS'13, Table 1, one row per line of the table ("Multiplication #").
constexpr Step kWinogradNonNeg[] = {
    // 1: S = A21 + A22, T = B12 - B11, U = S x T, C12 = U, C22 = U
    {K::Sum, O::S, O::A21, O::A22, kAssign, O::None},
    {K::Diff, O::T, O::B12, O::B11, kAssign, O::None},
    {K::Product, O::U, O::S, O::T, kAssign, O::None},
    {K::Store, O::C12, O::U, O::None, kAssign, O::C22},
    // 2: U = A11 x B11, C11 = U
    {K::Product, O::U, O::A11, O::B11, kAssign, O::None},
    {K::Store, O::C11, O::U, O::None, kAssign, O::None},
    // 3: C11 += A12 x B21
    {K::Product, O::C11, O::A12, O::B21, kAdd, O::None},
    // 4: S = S - A11, T = B22 - T, U += S x T, C12 += U
    {K::Diff, O::S, O::S, O::A11, kAssign, O::None},
    {K::Diff, O::T, O::B22, O::T, kAssign, O::None},
    {K::Product, O::U, O::S, O::T, kAdd, O::None},
    {K::Store, O::C12, O::U, O::None, kAdd, O::None},
    // 5: S = A12 - S, C12 += S x B22
    {K::Diff, O::S, O::A12, O::S, kAssign, O::None},
    {K::Product, O::C12, O::S, O::B22, kAdd, O::None},
    // 6: T = B21 - T, C21 = A22 x T
    {K::Diff, O::T, O::B21, O::T, kAssign, O::None},
    {K::Product, O::C21, O::A22, O::T, kAssign, O::None},
    // 7: S = A11 - A21, T = B22 - B12, U += S x T, C22 += U, C21 += U
    {K::Diff, O::S, O::A11, O::A21, kAssign, O::None},
    {K::Diff, O::T, O::B22, O::B12, kAssign, O::None},
    {K::Product, O::U, O::S, O::T, kAdd, O::None},
    {K::Store, O::C22, O::U, O::None, kAdd, O::C21},
};

const Schedule kWinogradNonNegSchedule{
    "winograd-nonneg (Badin et al., ICS'13, Table 1)", kWinogradNonNeg,
    sizeof(kWinogradNonNeg) / sizeof(kWinogradNonNeg[0]), 7};

int c_index(Operand o) { return static_cast<int>(o) - static_cast<int>(O::C11); }

}  // namespace

const Schedule &winograd_nonneg_schedule() { return kWinogradNonNegSchedule; }

bool schedule_is_well_formed(const Schedule &s) {
  bool c_written[4] = {false, false, false, false};
  bool s_written = false, t_written = false, u_written = false;
  int products = 0;

  auto readable = [&](Operand o) {
    if (is_a_quadrant(o) || is_b_quadrant(o)) return true;
    if (o == O::S) return s_written;
    if (o == O::T) return t_written;
    if (o == O::U) return u_written;
    return false;  // C is never read by a step, only written
  };
  // A write to C must be "=" exactly once, before any "+=".
  auto write_c = [&](Operand o, bool accumulate) {
    bool &w = c_written[c_index(o)];
    if (accumulate != w) return false;
    w = true;
    return true;
  };

  for (std::size_t i = 0; i < s.count; ++i) {
    const Step &st = s.steps[i];
    switch (st.kind) {
      case K::Sum:
      case K::Diff: {
        if (!readable(st.x) || !readable(st.y)) return false;
        // S is built from A's quadrants (or S), T from B's (or T).
        const bool s_ok = st.dst == O::S && (is_a_quadrant(st.x) || st.x == O::S) &&
                          (is_a_quadrant(st.y) || st.y == O::S);
        const bool t_ok = st.dst == O::T && (is_b_quadrant(st.x) || st.x == O::T) &&
                          (is_b_quadrant(st.y) || st.y == O::T);
        if (!s_ok && !t_ok) return false;
        (st.dst == O::S ? s_written : t_written) = true;
        break;
      }
      case K::Product: {
        ++products;
        const bool x_ok = (is_a_quadrant(st.x) || st.x == O::S) && readable(st.x);
        const bool y_ok = (is_b_quadrant(st.y) || st.y == O::T) && readable(st.y);
        if (!x_ok || !y_ok) return false;
        if (st.dst == O::U) {
          if (st.accumulate && !u_written) return false;
          u_written = true;
        } else if (is_c_quadrant(st.dst)) {
          if (!write_c(st.dst, st.accumulate)) return false;
        } else {
          return false;
        }
        break;
      }
      case K::Store: {
        if (st.x != O::U || !u_written) return false;
        if (!is_c_quadrant(st.dst) || !write_c(st.dst, st.accumulate)) return false;
        if (st.dst2 != O::None && (!is_c_quadrant(st.dst2) || st.dst2 == st.dst ||
                                   !write_c(st.dst2, st.accumulate)))
          return false;
        break;
      }
    }
  }
  for (bool w : c_written)
    if (!w) return false;
  return products == s.products;
}

}  // namespace xn
