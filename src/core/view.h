// view.h - matrix views with orientation: op(X) without copies.
//
// A MatView describes the logical matrix op(X) (rows x cols) over column-major
// storage. If `trans` is false, element (i, j) lives at p[i + j*ld]; if true,
// the stored matrix is X (cols x rows) and op(X)(i, j) lives at p[j + i*ld].
// Sub-blocks and quadrants of op(X) are taken on the stored matrix, so a
// transposed operand is never copied: the flag passes through to the leaf GEMM
// (docs/design.md, "Views, orientation, peeling").
#pragma once

#include "core/types.h"

namespace xn {

template <class T>
struct MatView {
  T *p = nullptr;
  index_t rows = 0;  // rows of op(X)
  index_t cols = 0;  // columns of op(X)
  index_t ld = 1;    // leading dimension of the stored matrix
  bool trans = false;

  // Shape of the stored (column-major) array this view covers.
  index_t stored_rows() const { return trans ? cols : rows; }
  index_t stored_cols() const { return trans ? rows : cols; }

  // Address of op(X)(i, j).
  T *at(index_t i, index_t j) const { return trans ? p + j + i * ld : p + i + j * ld; }

  // The r x c block of op(X) whose top-left entry is op(X)(i0, j0).
  MatView block(index_t i0, index_t j0, index_t r, index_t c) const {
    return MatView{at(i0, j0), r, c, ld, trans};
  }

  // Quadrant (qi, qj), qi, qj in {0, 1}, of a view with even rows and cols.
  MatView quad(int qi, int qj) const {
    const index_t r = rows / 2, c = cols / 2;
    return block(qi * r, qj * c, r, c);
  }

  // The same memory, read-only.
  MatView<const T> as_const() const { return MatView<const T>{p, rows, cols, ld, trans}; }

  bool empty() const { return rows == 0 || cols == 0; }
};

}  // namespace xn
