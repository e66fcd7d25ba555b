// schedule_symbolic.h - runs a schedule table (core/schedule.h) on formal
// quadrants: every value is a form over the quadrants of op(A) and op(B),
// their products A_p B_q and the old quadrants of C (times beta). A table is
// right when each quadrant of C ends as sum_l A_il B_lj (+ beta C_ij when the
// table runs with beta != 0) and nothing else.
#pragma once

#include <array>

#include "core/schedule.h"

namespace xn_test {

struct Form {
  std::array<int, 4> a{}, b{};             // linear in A_p, B_q
  std::array<std::array<int, 4>, 4> ab{};  // coefficient of A_p B_q
  std::array<int, 4> c0{};                 // coefficient of beta * C_q (old)

  Form &add(const Form &o, int coef) {
    for (int p = 0; p < 4; ++p) {
      a[p] += coef * o.a[p];
      b[p] += coef * o.b[p];
      c0[p] += coef * o.c0[p];
      for (int q = 0; q < 4; ++q) ab[p][q] += coef * o.ab[p][q];
    }
    return *this;
  }
  bool operator==(const Form &o) const {
    return a == o.a && b == o.b && ab == o.ab && c0 == o.c0;
  }
};

// The classical product's quadrant C_ij (p = 2 i + l, q = 2 l + j), plus
// beta C_ij when `beta`.
inline Form classical_quadrant(int i, int j, bool beta) {
  Form f;
  for (int l = 0; l < 2; ++l) f.ab[2 * i + l][2 * l + j] = 1;
  if (beta) f.c0[2 * i + j] = 1;
  return f;
}

// The four quadrants of C after the table, run with beta != 0 or not.
// `on_product(x, y)`, if given, sees the factors of every product.
template <class OnProduct>
std::array<Form, 4> evaluate(const xn::Schedule &s, bool beta_nonzero,
                             OnProduct &&on_product) {
  using xn::Operand;
  std::array<Form, 4> c{};
  std::array<Form, xn::kTempCount> t{};
  auto value = [&](Operand o) {
    Form f;
    const int v = static_cast<int>(o);
    if (xn::is_a_quadrant(o))
      f.a[v - int(Operand::A11)] = 1;
    else if (xn::is_b_quadrant(o))
      f.b[v - int(Operand::B11)] = 1;
    else if (xn::is_c_quadrant(o))
      f = c[xn::c_index(o)];
    else
      f = t[xn::temp_index(o)];
    return f;
  };
  auto target = [&](Operand o) -> Form & {
    return xn::is_c_quadrant(o) ? c[xn::c_index(o)] : t[xn::temp_index(o)];
  };
  for (const xn::Step &st : s.steps) {
    std::array<Form, xn::kMaxDst> out{};
    if (st.kind == xn::StepKind::Combine) {
      for (int d = 0; d < st.ndst; ++d)
        for (int r = 0; r < st.nsrc; ++r) out[d].add(value(st.src[r]), st.coef[d][r]);
    } else {
      const Form x = value(st.src[0]), y = value(st.src[1]);
      on_product(x, y);
      if (st.accumulate) out[0] = value(st.dst[0]);
      for (int p = 0; p < 4; ++p)
        for (int q = 0; q < 4; ++q) out[0].ab[p][q] += x.a[p] * y.b[q];
    }
    // The first write of a quadrant of C adds beta times its old value.
    for (int d = 0; d < st.ndst; ++d)
      if (st.c_first[d] && beta_nonzero) out[d].c0[xn::c_index(st.dst[d])] += 1;
    for (int d = 0; d < st.ndst; ++d) target(st.dst[d]) = out[d];
  }
  return c;
}

inline std::array<Form, 4> evaluate(const xn::Schedule &s, bool beta_nonzero) {
  return evaluate(s, beta_nonzero, [](const Form &, const Form &) {});
}

}  // namespace xn_test
