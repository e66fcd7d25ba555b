// paper_matrix.h - the test matrices of Li, Ranka, Sahni, ICPADS'11,
// section 8.1.2: A = I + u v^T and B = I - u v^T / (1 + v^T u) with
// u_i = 1 / (N + 1 - i) and v_i = sqrt(i), i = 1..N. By Sherman-Morrison
// B = A^-1, so the exact product of the unrounded matrices is I; the
// entries span a wide range (u from 1/N to 1, v from 1 to sqrt(N)), which
// makes them a harder case than uniform data for a fast algorithm's
// normwise error. Computed in double and rounded once to T; accuracy tests
// compare with the exact product of the stored (rounded) A and B, which is
// I only up to the rounding of the inputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "support/dd_reference.h"

namespace xn_test {

class PaperMatrix {
 public:
  explicit PaperMatrix(std::int64_t n) : u_(std::size_t(n)), v_(std::size_t(n)) {
    // 1 + v^T u in double-double, so that B's entries carry only their own
    // rounding (and that of u, v): one generator for the tests and xnbench.
    xn::DD s{1.0, 0.0};
    for (std::int64_t i = 0; i < n; ++i) {
      // 1-based in the paper: u_i = 1 / (N + 1 - i), v_i = sqrt(i).
      u_[std::size_t(i)] = 1.0 / double(n - i);
      v_[std::size_t(i)] = std::sqrt(double(i + 1));
      s = xn::dd_add(s, xn::two_prod(v_[std::size_t(i)], u_[std::size_t(i)]));
    }
    sigma_ = xn::dd_to_double(s);
  }

  // Entries (0-based) of A and B, in double.
  double a(std::int64_t i, std::int64_t j) const {
    const double a = u_[std::size_t(i)] * v_[std::size_t(j)];
    return i == j ? 1.0 + a : a;
  }
  double b(std::int64_t i, std::int64_t j) const {
    const double a = u_[std::size_t(i)] * v_[std::size_t(j)];
    return i == j ? 1.0 - a / sigma_ : -(a / sigma_);
  }

  // Stores A (or B) rounded to T, column-major with leading dimension ld,
  // transposed in storage when `trans` (so that op(X) is the matrix); the
  // padding rows get `pad`.
  template <class T>
  void store(bool is_b, bool trans, std::int64_t ld, T pad, std::vector<T> &out) const {
    const std::int64_t n = std::int64_t(u_.size());
    out.assign(std::size_t(ld * n), pad);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        const T x = T(is_b ? b(i, j) : a(i, j));
        out[std::size_t(trans ? j + i * ld : i + j * ld)] = x;
      }
  }

 private:
  std::vector<double> u_, v_;
  double sigma_ = 1;  // 1 + v^T u
};

}  // namespace xn_test
