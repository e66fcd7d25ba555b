// schedule.h - recursive 2x2 schedules as data.
//
// A schedule is a table of steps over the quadrants of op(A), op(B), C and a
// few temporaries, written as text in the papers' own notation and parsed
// once (parse_schedule):
//
//   "T1 = A11 - A21"                  a pre-addition
//   "C21 = T1 * T2"                   a product (one recursive call)
//   "C11 += A12 * B21"                a product added into its target
//   "(C11, C22) += T1"                one read of T1 feeds two targets
//   "(C21, C22) = (C11 - C21, C11 + C22)"   a fused step: every operand read once
//   "(C12, C22) = U"                  both targets get U
//
// A value is shaped like a quadrant of op(A) (role A), of op(B) (role B) or
// of C (role C). Quadrants of C may hold A- or B-shaped values (the
// two-temporary schedules of Li, Ranka, Sahni, ICPADS'11, Figures 2 and 3,
// use C as scratch), temporaries may hold values of any role over time; the
// parser tracks the role of every operand at every step, which is how the
// executor knows each view's shape and the workspace planner each
// temporary's size (plan.h).
//
// The caller's beta: the first write of each quadrant of C also adds
// beta * (its old value). Schedules that use C as scratch are only run with
// beta = 0 (Schedule::any_beta false); GemmAlgorithm pairs each with one
// that may run with any beta. One executor (executor.h) runs every table;
// tests check every table symbolically against the classical product.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/types.h"

namespace xn {

// clang-format off
enum class Operand : unsigned char {
  A11, A12, A21, A22,  // quadrants of op(A)
  B11, B12, B21, B22,  // quadrants of op(B)
  C11, C12, C21, C22,  // quadrants of C
  S, T, U, T1, T2,     // temporaries (S, T, U: Badin et al.; T1, T2: Li et al.)
  None
};
// clang-format on
constexpr int kTempCount = 5;  // S, T, U, T1, T2

// The shape of a value: a quadrant of op(A) (hm x hk, stored with A's
// orientation), of op(B) (hk x hn, B's orientation or non-transposed, see
// plan.h), or of C (hm x hn, non-transposed).
enum class Role : unsigned char { A = 0, B = 1, C = 2 };
constexpr unsigned role_bit(Role r) { return 1u << static_cast<unsigned>(r); }

enum class StepKind : unsigned char {
  Combine,  // dst[d] = sum_s coef[d][s] * src[s]  (+ beta * old at a first write of C)
  Product   // dst[0] (= or +=) src[0] * src[1]   (recursive)
};

constexpr int kMaxDst = 4;
constexpr int kMaxSrc = 6;

struct Step {
  StepKind kind = StepKind::Combine;
  Role role = Role::C;  // Combine: the role of every operand; Product: C
  int ndst = 0;
  Operand dst[kMaxDst] = {Operand::None, Operand::None, Operand::None, Operand::None};
  int nsrc = 0;
  // Combine: every operand read, in an order consistent with each target's
  // expression as written, which is the order it is summed in (left to
  // right). Product: src[0] * src[1].
  Operand src[kMaxSrc] = {Operand::None, Operand::None, Operand::None,
                          Operand::None, Operand::None, Operand::None};
  signed char coef[kMaxDst][kMaxSrc] = {};  // Combine: -1, 0 or +1
  bool accumulate = false;                  // Product: dst += x * y
  // dst[d] is a quadrant of C written for the first time in the table: the
  // caller's beta applies (beta * old is added; beta = 0 never reads it).
  bool c_first[kMaxDst] = {false, false, false, false};
};

struct Schedule {
  std::string name;
  std::vector<Step> steps;
  int products = 0;       // Product steps: 7 for Strassen-like schedules
  bool any_beta = false;  // may run with beta != 0 (C is never scratch)
  // Roles each temporary (S, T, U, T1, T2) and each quadrant of C (C11..C22)
  // takes over the table (role_bit masks; 0 for an unused temporary).
  unsigned temp_roles[kTempCount] = {};
  unsigned c_roles[4] = {};
};

// Parses and checks a table; on failure returns false and says why in
// *error. Checks: every operand is read only after it was written (a
// quadrant of C never before its first write), the operands of a step have
// the role it needs (products: A-role times B-role), every quadrant of C
// ends holding a C-role value, 7 products, and with `any_beta` no quadrant
// of C ever holds anything but a C-role value.
bool parse_schedule(const char *name, const char *const *lines, std::size_t count,
                    bool any_beta, Schedule *out, std::string *error);

// Badin et al., ICS'13, section 4.2, Table 1: Winograd's variant of
// Strassen's algorithm, scheduled so that C (and the temporary U) is written
// only by assignment or addition. On non-negative A and B every product but
// two is of non-negative operands, and nothing is ever subtracted from C.
// Runs with any beta (C is never scratch).
const Schedule &winograd_nonneg_schedule();

// Li, Ranka, Sahni, ICPADS'11: Strassen's algorithm with two temporaries per
// level (Figure 2, multi-level Figure 16) for beta = 0, and the same seven
// products accumulated into C for any beta (S, T, U at the top level only).
const Schedule &strassen_schedule();
const Schedule &strassen_accumulate_schedule();

// Li, Ranka, Sahni, ICPADS'11: Winograd's variant after Douglas et al. with
// two temporaries per level (Figure 3, multi-level Figure 23) for beta = 0,
// and Winograd's seven products accumulated into C for any beta.
const Schedule &winograd_schedule();
const Schedule &winograd_accumulate_schedule();

// A recursive GEMM: the table for levels that run with beta = 0 and the one
// for levels that may not (the top level with the caller's beta, and the
// targets of "+=" products). Recursion below a table's products uses the
// table their beta calls for.
struct GemmAlgorithm {
  GemmKind kind;
  const char *name;
  const Schedule *zero_beta;  // C quadrants may be scratch
  const Schedule *any_beta;
  bool nonneg_contract;  // ?ngemm: the non-negative check applies
  // The packed quadrant of op(B) (plan.h, packed_b_elems) is used only while
  // the call's whole workspace stays within this fraction of the elements of
  // A, B and C: 1/2 for ?ngemm; 2/9 for Strassen and Winograd, which is
  // their 2 n^2 / 3 for square n, so packing never breaks that bound.
  int pack_budget_num, pack_budget_den;
  const Schedule &table_for(bool beta_may_be_nonzero) const {
    return beta_may_be_nonzero ? *any_beta : *zero_beta;
  }
};

const GemmAlgorithm &nonneg_winograd_algorithm();  // xnSngemm/xnDngemm
const GemmAlgorithm &strassen_algorithm();         // xn?gemmStrassen
const GemmAlgorithm &winograd_algorithm();         // xn?gemmWinograd

inline bool is_c_quadrant(Operand o) {
  return o == Operand::C11 || o == Operand::C12 || o == Operand::C21 || o == Operand::C22;
}
inline bool is_a_quadrant(Operand o) {
  return o == Operand::A11 || o == Operand::A12 || o == Operand::A21 || o == Operand::A22;
}
inline bool is_b_quadrant(Operand o) {
  return o == Operand::B11 || o == Operand::B12 || o == Operand::B21 || o == Operand::B22;
}
inline bool is_temporary(Operand o) { return o >= Operand::S && o <= Operand::T2; }
inline int temp_index(Operand o) {
  return static_cast<int>(o) - static_cast<int>(Operand::S);
}
inline int c_index(Operand o) {
  return static_cast<int>(o) - static_cast<int>(Operand::C11);
}
const char *operand_name(Operand o);

}  // namespace xn
