// schedule.cpp - the schedule tables, their parser and their checks.
#include "core/schedule.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace xn {

namespace {

using O = Operand;

constexpr const char *kOperandNames[] = {"A11", "A12", "A21", "A22", "B11", "B12",
                                         "B21", "B22", "C11", "C12", "C21", "C22",
                                         "S",   "T",   "U",   "T1",  "T2"};
constexpr int kOperandCount = sizeof kOperandNames / sizeof kOperandNames[0];
static_assert(kOperandCount == int(Operand::None), "a name for every operand");

// ---------------------------------------------------------------- lexer

enum class Tok {
  Name,
  Assign,
  AddAssign,
  SubAssign,
  Times,
  Plus,
  Minus,
  LParen,
  RParen,
  Comma,
  End,
  Bad
};

struct Lexer {
  const char *p;
  Tok tok = Tok::End;
  Operand name = O::None;

  explicit Lexer(const char *text) : p(text) { next(); }

  void next() {
    while (*p == ' ') ++p;
    const char c = *p;
    if (c == '\0') {
      tok = Tok::End;
      return;
    }
    if (std::isalpha(static_cast<unsigned char>(c))) {
      const char *b = p;
      while (std::isalnum(static_cast<unsigned char>(*p))) ++p;
      tok = Tok::Bad;
      for (int i = 0; i < kOperandCount; ++i)
        if (std::strlen(kOperandNames[i]) == std::size_t(p - b) &&
            std::strncmp(kOperandNames[i], b, std::size_t(p - b)) == 0) {
          tok = Tok::Name;
          name = static_cast<Operand>(i);
        }
      return;
    }
    ++p;
    switch (c) {
      case '=':
        tok = Tok::Assign;
        return;
      case '+':
        tok = *p == '=' ? (++p, Tok::AddAssign) : Tok::Plus;
        return;
      case '-':
        tok = *p == '=' ? (++p, Tok::SubAssign) : Tok::Minus;
        return;
      case '*':
        tok = Tok::Times;
        return;
      case '(':
        tok = Tok::LParen;
        return;
      case ')':
        tok = Tok::RParen;
        return;
      case ',':
        tok = Tok::Comma;
        return;
      default:
        tok = Tok::Bad;
        return;
    }
  }
};

// One target's expression: signed operands in the order written.
struct Term {
  Operand o;
  int sign;
};
using Expr = std::vector<Term>;

bool parse_expr(Lexer &lx, Expr *e) {
  int sign = 1;
  if (lx.tok == Tok::Minus) {
    sign = -1;
    lx.next();
  }
  for (;;) {
    if (lx.tok != Tok::Name) return false;
    e->push_back({lx.name, sign});
    lx.next();
    if (lx.tok == Tok::Plus || lx.tok == Tok::Minus) {
      sign = lx.tok == Tok::Plus ? 1 : -1;
      lx.next();
      continue;
    }
    return true;
  }
}

// Orders the operands read by a fused step so that every target's terms
// come in the order written (they are summed in source order): a
// topological sort, ties broken by first appearance. False on a cycle.
bool order_sources(const std::vector<Expr> &exprs, std::vector<Operand> *order) {
  std::vector<Operand> seen;
  for (const Expr &e : exprs)
    for (const Term &t : e) {
      bool found = false;
      for (Operand o : seen) found |= o == t.o;
      if (!found) seen.push_back(t.o);
    }
  const std::size_t n = seen.size();
  auto pos = [&](Operand o) {
    for (std::size_t i = 0; i < n; ++i)
      if (seen[i] == o) return i;
    return n;
  };
  std::vector<std::vector<bool>> before(n, std::vector<bool>(n, false));
  for (const Expr &e : exprs)
    for (std::size_t t = 1; t < e.size(); ++t)
      before[pos(e[t - 1].o)][pos(e[t].o)] = true;
  std::vector<bool> placed(n, false);
  for (std::size_t round = 0; round < n; ++round) {
    std::size_t pick = n;
    for (std::size_t c = 0; c < n && pick == n; ++c) {
      if (placed[c]) continue;
      bool free = true;
      for (std::size_t p = 0; p < n; ++p) free &= placed[p] || !before[p][c];
      if (free) pick = c;
    }
    if (pick == n) return false;
    placed[pick] = true;
    order->push_back(seen[pick]);
  }
  return true;
}

bool fail(std::string *error, const char *name, std::size_t line, const char *text,
          const char *why) {
  if (error) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s, step %zu \"%s\": %s", name, line + 1, text, why);
    *error = buf;
  }
  return false;
}

// Parses one line into a Step (roles and first writes are filled in later).
bool parse_line(const char *text, Step *st, std::string *why) {
  Lexer lx(text);
  std::vector<Operand> dsts;
  if (lx.tok == Tok::LParen) {
    lx.next();
    for (;;) {
      if (lx.tok != Tok::Name) return *why = "expected a target", false;
      dsts.push_back(lx.name);
      lx.next();
      if (lx.tok == Tok::Comma) {
        lx.next();
        continue;
      }
      if (lx.tok != Tok::RParen) return *why = "expected ')'", false;
      lx.next();
      break;
    }
  } else if (lx.tok == Tok::Name) {
    dsts.push_back(lx.name);
    lx.next();
  } else {
    return *why = "expected a target", false;
  }
  if (dsts.size() > std::size_t(kMaxDst)) return *why = "too many targets", false;
  const Tok op = lx.tok;
  if (op != Tok::Assign && op != Tok::AddAssign && op != Tok::SubAssign)
    return *why = "expected '=', '+=' or '-='", false;
  lx.next();

  // A product: "D = X * Y" or "D += X * Y".
  {
    Lexer probe = lx;
    if (probe.tok == Tok::Name) {
      const Operand x = probe.name;
      probe.next();
      if (probe.tok == Tok::Times) {
        probe.next();
        if (probe.tok != Tok::Name) return *why = "expected a factor", false;
        const Operand y = probe.name;
        probe.next();
        if (probe.tok != Tok::End) return *why = "trailing text after a product", false;
        if (dsts.size() != 1 || op == Tok::SubAssign)
          return *why = "a product has one target, '=' or '+='", false;
        st->kind = StepKind::Product;
        st->ndst = 1;
        st->dst[0] = dsts[0];
        st->nsrc = 2;
        st->src[0] = x;
        st->src[1] = y;
        st->accumulate = op == Tok::AddAssign;
        return true;
      }
    }
  }

  // A combination: one expression per target, or one for all of them.
  std::vector<Expr> exprs;
  if (op == Tok::Assign && lx.tok == Tok::LParen) {
    lx.next();
    for (;;) {
      Expr e;
      if (!parse_expr(lx, &e)) return *why = "bad expression", false;
      exprs.push_back(e);
      if (lx.tok == Tok::Comma) {
        lx.next();
        continue;
      }
      if (lx.tok != Tok::RParen) return *why = "expected ')'", false;
      lx.next();
      break;
    }
    if (exprs.size() != dsts.size())
      return *why = "targets and expressions differ", false;
  } else {
    Expr e;
    if (!parse_expr(lx, &e)) return *why = "bad expression", false;
    for (Operand d : dsts) {
      Expr full;
      if (op != Tok::Assign) full.push_back({d, 1});  // D +=/-= e: D + e or D - e
      for (Term t : e) full.push_back({t.o, op == Tok::SubAssign ? -t.sign : t.sign});
      exprs.push_back(full);
    }
  }
  if (lx.tok != Tok::End) return *why = "trailing text", false;
  for (const Expr &e : exprs)
    for (std::size_t a = 0; a < e.size(); ++a)
      for (std::size_t b = a + 1; b < e.size(); ++b)
        if (e[a].o == e[b].o) return *why = "an operand twice in one expression", false;
  std::vector<Operand> order;
  if (!order_sources(exprs, &order))
    return *why = "no source order fits every expression", false;
  if (order.size() > std::size_t(kMaxSrc)) return *why = "too many operands", false;
  st->kind = StepKind::Combine;
  st->ndst = int(dsts.size());
  for (std::size_t d = 0; d < dsts.size(); ++d) st->dst[d] = dsts[d];
  st->nsrc = int(order.size());
  for (std::size_t s = 0; s < order.size(); ++s) st->src[s] = order[s];
  for (std::size_t d = 0; d < exprs.size(); ++d)
    for (const Term &t : exprs[d])
      for (std::size_t s = 0; s < order.size(); ++s)
        if (order[s] == t.o) st->coef[d][s] = static_cast<signed char>(t.sign);
  return true;
}

// ---------------------------------------------------------------- tables
// clang-format off

// Badin et al., ICS'13, Table 1, one row per line of the table ("Multiplication #").
// M1 = A11 B11, M2 = A12 B21, M3 = S4 B22, M4 = A22 T4, M5 = S1 T1,
// M6 = S2 T2, M7 = S3 T3 (Winograd's names):
//   C11 = M1 + M2, C12 = M1 + M6 + M5 + M3, C21 = M1 + M6 + M7 - M4,
//   C22 = M1 + M6 + M7 + M5.
constexpr const char *kWinogradNonNeg[] = {
    "S = A21 + A22", "T = B12 - B11", "U = S * T", "(C12, C22) = U",        // 1
    "U = A11 * B11", "C11 = U",                                             // 2
    "C11 += A12 * B21",                                                     // 3
    "S = S - A11", "T = B22 - T", "U += S * T", "C12 += U",                 // 4
    "S = A12 - S", "C12 += S * B22",                                        // 5
    "T = B21 - T", "C21 = A22 * T",                                         // 6
    "S = A11 - A21", "T = B22 - B12", "U += S * T", "(C22, C21) += U",      // 7
};

// Li, Ranka, Sahni, ICPADS'11, Figure 16 (Figure 2 as a recursion): Strassen
// with C12, C21 as scratch for the pre-additions and two temporaries, T1 and
// T2, for beta = 0. M1 = (A11 + A22)(B11 + B22), M2 = (A21 + A22) B11,
// M3 = A11 (B12 - B22), M4 = A22 (B21 - B11), M5 = (A11 + A12) B22,
// M6 = (A21 - A11)(B11 + B12), M7 = (A12 - A22)(B21 + B22);
// C11 = M1 + M4 - M5 + M7, C12 = M3 + M5, C21 = M2 + M4,
// C22 = M1 - M2 + M3 + M6. Fused beyond the figure (docs/design.md counts
// the bytes): "T2 = A21 + A22" is formed in the pass of "C12 = A11 + A22"
// (A22 read once; T2 is free until M2), "C22 -= C21" (after M2) joins the
// pass after M4 that reads C21 anyway, and "C22 += C12" (after M3) the
// last pass, which reads C12 anyway: 48 instead of 51 quadrant moves.
constexpr const char *kStrassen[] = {
    "C12 = A21 - A11", "C21 = B11 + B12", "C22 = C12 * C21",                  // M6
    "C12 = A12 - A22", "C21 = B21 + B22", "C11 = C12 * C21",                  // M7
    "(C12, T2) = (A11 + A22, A21 + A22)", "C21 = B11 + B22", "T1 = C12 * C21",  // M1
    "(C11, C22) += T1",
    "C21 = T2 * B11",                                                         // M2
    "T1 = B21 - B11", "T2 = A22 * T1",                                        // M4
    "(C11, C21, C22) = (C11 + T2, C21 + T2, C22 - C21)",
    "T1 = B12 - B22", "C12 = A11 * T1",                                       // M3
    "T2 = A11 + A12", "T1 = T2 * B22",                                        // M5
    "(C11, C12, C22) = (C11 - T1, C12 + T1, C22 + C12)",
};

// Strassen's seven products accumulated into C (the first write of each
// quadrant adds beta * C): for the level that runs with the caller's beta
// (Li et al. leave it out, their product being C = AB). C holds data until
// its last update, so it cannot be scratch: S, T and U take the
// pre-additions and the product, each product below runs with beta = 0.
// Each quadrant receives its terms in the order of Strassen's formulas.
constexpr const char *kStrassenAccumulate[] = {
    "S = A11 + A22", "T = B11 + B22", "U = S * T", "(C11, C22) = U",          // M1
    "S = A21 + A22", "U = S * B11", "(C21, C22) = (U, C22 - U)",              // M2
    "T = B12 - B22", "U = A11 * T", "(C12, C22) = (U, C22 + U)",              // M3
    "T = B21 - B11", "U = A22 * T", "(C11, C21) += U",                        // M4
    "S = A11 + A12", "U = S * B22", "(C11, C12) = (C11 - U, C12 + U)",        // M5
    "S = A21 - A11", "T = B11 + B12", "U = S * T", "C22 += U",                // M6
    "S = A12 - A22", "T = B21 + B22", "U = S * T", "C11 += U",                // M7
};

// Li, Ranka, Sahni, ICPADS'11, Figure 23 (Figure 3 as a recursion; Douglas
// et al.'s schedule): Winograd's variant with two temporaries for beta = 0.
// S1 = A21 + A22, S2 = S1 - A11, S3 = A11 - A21, S4 = A12 - S2,
// S5 = B12 - B11, S6 = B22 - S5, S7 = B22 - B12, S8 = S6 - B21;
// M1 = S2 S6, M2 = A11 B11, M3 = A12 B21, M4 = S3 S7, M5 = S1 S5,
// M6 = S4 B22, M7 = A22 S8; V1 = M1 + M2, V2 = V1 + M4;
// C11 = M2 + M3, C12 = V1 + M5 + M6, C21 = V2 - M7, C22 = V2 + M5.
// Fused beyond the figure: "C12 += C22" (after M6) joins the pass after M2
// that reads C12 anyway (39 instead of 41 quadrant moves), summed as
// Winograd's V1 + M5 + M6 so that V1 rounds alike in C12 and in V2.
constexpr const char *kWinograd[] = {
    "T1 = A11 - A21", "T2 = B22 - B12", "C21 = T1 * T2",                      // M4
    "T1 = A21 + A22", "T2 = B12 - B11", "C22 = T1 * T2",                      // M5
    "T1 = T1 - A11", "T2 = B22 - T2", "C11 = T1 * T2",                        // M1
    "T1 = A12 - T1", "C12 = T1 * B22",                                        // M6
    "T1 = A11 * B11",                                                         // M2
    "(C12, C11) = (C11 + T1 + C22 + C12, C11 + T1 + C21)",                    // C12, V2
    "T2 = T2 - B21", "C21 = A22 * T2",                                        // M7
    "(C21, C22) = (C11 - C21, C11 + C22)",
    "C11 = A12 * B21",                                                        // M3
    "C11 += T1",
};

// Winograd's seven products accumulated into C for any beta (S, T, U; see
// kStrassenAccumulate). M2 first: it reaches every quadrant, whose first
// write adds beta * C.
constexpr const char *kWinogradAccumulate[] = {
    "U = A11 * B11", "(C11, C12, C21, C22) = U",                              // M2
    "S = A21 + A22", "T = B12 - B11", "U = S * T", "(C12, C22) += U",         // M5
    "S = S - A11", "T = B22 - T", "U = S * T", "(C12, C21, C22) += U",        // M1
    "S = A12 - S", "U = S * B22", "C12 += U",                                 // M6
    "T = T - B21", "U = A22 * T", "C21 -= U",                                 // M7
    "S = A11 - A21", "T = B22 - B12", "U = S * T", "(C21, C22) += U",         // M4
    "U = A12 * B21", "C11 += U",                                              // M3
};

// clang-format on
// Tables are compiled in; the unit tests parse every one of them, so a
// failure here is a defect of the build, reported before anything runs.
template <std::size_t N>
Schedule parse_or_abort(const char *name, const char *const (&lines)[N], bool any_beta) {
  Schedule out;
  std::string error;
  if (!parse_schedule(name, lines, N, any_beta, &out, &error)) {
    std::fprintf(stderr, "xngemm: internal schedule table: %s\n", error.c_str());
    std::abort();
  }
  return out;
}

}  // namespace

const char *operand_name(Operand o) {
  const int i = static_cast<int>(o);
  return i >= 0 && i < kOperandCount ? kOperandNames[i] : "None";
}

bool parse_schedule(const char *name, const char *const *lines, std::size_t count,
                    bool any_beta, Schedule *out, std::string *error) {
  Schedule s;
  s.name = name;
  s.any_beta = any_beta;
  // Current role of each quadrant of C and temporary; -1 = nothing written.
  int c_role[4] = {-1, -1, -1, -1}, t_role[kTempCount] = {-1, -1, -1, -1, -1};
  auto role_of = [&](Operand o) -> int {
    if (is_a_quadrant(o)) return int(Role::A);
    if (is_b_quadrant(o)) return int(Role::B);
    if (is_c_quadrant(o)) return c_role[c_index(o)];
    if (is_temporary(o)) return t_role[temp_index(o)];
    return -1;
  };
  for (std::size_t i = 0; i < count; ++i) {
    Step st;
    std::string why;
    if (!parse_line(lines[i], &st, &why))
      return fail(error, name, i, lines[i], why.c_str());
    for (int d = 0; d < st.ndst; ++d)
      if (!is_c_quadrant(st.dst[d]) && !is_temporary(st.dst[d]))
        return fail(error, name, i, lines[i], "only C and temporaries are written");
    for (int a = 0; a < st.ndst; ++a)
      for (int b = a + 1; b < st.ndst; ++b)
        if (st.dst[a] == st.dst[b])
          return fail(error, name, i, lines[i], "a target twice");
    for (int r = 0; r < st.nsrc; ++r)
      if (role_of(st.src[r]) < 0)
        return fail(error, name, i, lines[i], "reads an operand before it is written");
    Role role = Role::C;
    if (st.kind == StepKind::Product) {
      ++s.products;
      // The recursion writes its target while it reads its factors.
      if (st.dst[0] == st.src[0] || st.dst[0] == st.src[1])
        return fail(error, name, i, lines[i], "a product's target is one of its factors");
      if (role_of(st.src[0]) != int(Role::A) || role_of(st.src[1]) != int(Role::B))
        return fail(error, name, i, lines[i], "a product needs an A-role times a B-role");
      if (st.accumulate && role_of(st.dst[0]) != int(Role::C))
        return fail(error, name, i, lines[i], "'+=' into something not holding C's role");
    } else {
      role = Role(role_of(st.src[0]));
      for (int r = 1; r < st.nsrc; ++r)
        if (role_of(st.src[r]) != int(role))
          return fail(error, name, i, lines[i], "operands of different roles");
      // With op(A) or op(B) transposed and its values stored non-transposed
      // (plan.h, stores_s_normal, stores_t_normal), a step that reads one of
      // their quadrants runs as one transposing pass "D = X +/- Y" per
      // target (executor.h): two terms per target, not both negative, and
      // with several targets none of them read by the step.
      bool reads_input = false;
      for (int r = 0; r < st.nsrc; ++r)
        reads_input |= is_a_quadrant(st.src[r]) || is_b_quadrant(st.src[r]);
      for (int d = 0; reads_input && d < st.ndst; ++d) {
        int terms = 0, negative = 0;
        for (int r = 0; r < st.nsrc; ++r) {
          terms += st.coef[d][r] != 0;
          negative += st.coef[d][r] < 0;
          if (st.ndst > 1 && st.src[r] == st.dst[d])
            return fail(error, name, i, lines[i],
                        "a step reading op(A) or op(B) reads its own target "
                        "(it must split into transposing passes)");
        }
        if (terms != 2 || negative == 2)
          return fail(error, name, i, lines[i],
                      "a step reading op(A) or op(B) must be D = X +/- Y per target "
                      "(a transposing pass)");
      }
    }
    st.role = role;
    for (int d = 0; d < st.ndst; ++d) {
      const Operand o = st.dst[d];
      if (is_c_quadrant(o)) {
        int &cr = c_role[c_index(o)];
        st.c_first[d] = cr < 0;
        if (any_beta && role != Role::C)
          return fail(error, name, i, lines[i], "C used as scratch in an any-beta table");
        // With any beta, C's old value (beta * C) must survive every later
        // write: a product adds into it, a combination keeps it with +1.
        if (any_beta && !st.c_first[d]) {
          bool keeps = st.kind == StepKind::Product && st.accumulate;
          for (int r = 0; r < st.nsrc && st.kind == StepKind::Combine; ++r)
            keeps |= st.src[r] == o && st.coef[d][r] == 1;
          if (!keeps)
            return fail(error, name, i, lines[i], "overwrites C in an any-beta table");
        }
        cr = int(role);
        s.c_roles[c_index(o)] |= role_bit(role);
      } else {
        t_role[temp_index(o)] = int(role);
        s.temp_roles[temp_index(o)] |= role_bit(role);
      }
    }
    s.steps.push_back(st);
  }
  for (int q = 0; q < 4; ++q)
    if (c_role[q] != int(Role::C))
      return fail(error, name, count ? count - 1 : 0, "(end)",
                  "a quadrant of C does not end with C's role");
  if (s.products != 7) return fail(error, name, 0, "(table)", "not 7 products");
  *out = std::move(s);
  return true;
}

const Schedule &winograd_nonneg_schedule() {
  static const Schedule s = parse_or_abort(
      "winograd-nonneg (Badin et al., ICS'13, Table 1)", kWinogradNonNeg, true);
  return s;
}
const Schedule &strassen_schedule() {
  static const Schedule s = parse_or_abort(
      "strassen (Li, Ranka, Sahni, ICPADS'11, Figure 16)", kStrassen, false);
  return s;
}
const Schedule &strassen_accumulate_schedule() {
  static const Schedule s =
      parse_or_abort("strassen-accumulate", kStrassenAccumulate, true);
  return s;
}
const Schedule &winograd_schedule() {
  static const Schedule s = parse_or_abort(
      "winograd (Li, Ranka, Sahni, ICPADS'11, Figure 23)", kWinograd, false);
  return s;
}
const Schedule &winograd_accumulate_schedule() {
  static const Schedule s =
      parse_or_abort("winograd-accumulate", kWinogradAccumulate, true);
  return s;
}

const GemmAlgorithm &nonneg_winograd_algorithm() {
  static const GemmAlgorithm a{GemmKind::NonNegWinograd, "winograd-nonneg",
                               &winograd_nonneg_schedule(), &winograd_nonneg_schedule(),
                               true, 1, 2};
  return a;
}
const GemmAlgorithm &strassen_algorithm() {
  static const GemmAlgorithm a{GemmKind::Strassen, "strassen", &strassen_schedule(),
                               &strassen_accumulate_schedule(), false, 2, 9};
  return a;
}
const GemmAlgorithm &winograd_algorithm() {
  static const GemmAlgorithm a{GemmKind::Winograd, "winograd", &winograd_schedule(),
                               &winograd_accumulate_schedule(), false, 2, 9};
  return a;
}

}  // namespace xn
