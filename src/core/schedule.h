// schedule.h - recursive 2x2 schedules as data.
//
// A schedule is a table of steps over the quadrants of op(A), op(B), C and
// three temporaries: S (shaped like a quadrant of op(A), stored with A's
// orientation), T (like a quadrant of op(B), B's orientation) and U (like a
// quadrant of C). One executor (executor.h) runs any table; tests check every
// table symbolically against the classical product.
#pragma once

#include <cstddef>

namespace xn {

// clang-format off
enum class Operand : unsigned char {
  A11, A12, A21, A22,  // quadrants of op(A)
  B11, B12, B21, B22,  // quadrants of op(B)
  C11, C12, C21, C22,  // quadrants of C
  S, T, U,             // temporaries
  None
};
// clang-format on

enum class StepKind : unsigned char {
  Sum,      // dst = x + y              (dst is S or T)
  Diff,     // dst = x - y              (dst is S or T)
  Product,  // dst (= or +=) x * y      (recursive; dst is U or a C quadrant)
  Store     // dst (= or +=) x, and dst2 likewise when given (x is U)
};

struct Step {
  StepKind kind;
  Operand dst;
  Operand x;
  Operand y;        // None for Store
  bool accumulate;  // Product/Store: += instead of =
  Operand dst2;     // Store only: a second destination, else None
};

struct Schedule {
  const char *name;
  const Step *steps;
  std::size_t count;
  int products;  // number of Product steps: 7 for Strassen-like schedules
};

// Badin et al., ICS'13, section 4.2, Table 1: Winograd's variant of
// Strassen's algorithm, scheduled so that C (and the temporary U) is written
// only by assignment or addition. On non-negative A and B every product but
// two is of non-negative operands, and nothing is ever subtracted from C.
// With M1 = A11 B11, M2 = A12 B21, M3 = S4 B22, M4 = A22 T4, M5 = S1 T1,
// M6 = S2 T2, M7 = S3 T3 (Winograd's names):
//   C11 = M1 + M2, C12 = M1 + M6 + M5 + M3, C21 = M1 + M6 + M7 - M4,
//   C22 = M1 + M6 + M7 + M5.
const Schedule &winograd_nonneg_schedule();

// True if the table is well formed: every C quadrant is assigned exactly once
// before it is accumulated into, and every temporary is written before it is
// read. The executor relies on this to place beta at the first write.
bool schedule_is_well_formed(const Schedule &s);

inline bool is_c_quadrant(Operand o) {
  return o == Operand::C11 || o == Operand::C12 || o == Operand::C21 || o == Operand::C22;
}
inline bool is_a_quadrant(Operand o) {
  return o == Operand::A11 || o == Operand::A12 || o == Operand::A21 || o == Operand::A22;
}
inline bool is_b_quadrant(Operand o) {
  return o == Operand::B11 || o == Operand::B12 || o == Operand::B21 || o == Operand::B22;
}

}  // namespace xn
