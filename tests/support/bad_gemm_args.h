// bad_gemm_args.h - the bad-argument cases of the host GEMM entry points,
// shared by every family's host API tests: the Fortran argument list (with
// reference DGEMM's INFO) and the CBLAS one (with reference CBLAS's
// parameter position, layout = 1), and a C the library must leave bitwise
// alone after a bad argument.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "xngemm.h"

namespace xn_test {

struct BadF77 {
  char ta, tb;
  int m, n, k, lda, ldb, ldc;
  int info;  // reference DGEMM's INFO
};
// m = 4, n = 5, k = 6 unless a dimension is the bad one.
inline constexpr BadF77 kBadF77[] = {
    {'X', 'N', 4, 5, 6, 4, 6, 4, 1},    {'N', 'Y', 4, 5, 6, 4, 6, 4, 2},
    {'N', 'N', -1, 5, 6, 4, 6, 4, 3},   {'N', 'N', 4, -1, 6, 4, 6, 4, 4},
    {'N', 'N', 4, 5, -1, 4, 6, 4, 5},   {'N', 'N', 4, 5, 6, 3, 6, 4, 8},
    {'T', 'N', 4, 5, 6, 4, 6, 4, 8},    {'N', 'N', 4, 5, 6, 4, 5, 4, 10},
    {'N', 't', 4, 5, 6, 4, 4, 4, 10},   {'N', 'N', 4, 5, 6, 4, 6, 3, 13},
    {'N', 'N', 0, 5, 6, 0, 6, 1, 8},    {'N', 'N', 4, 5, 6, 3, 5, 3, 8},
    {'N', 'N', -1, -1, -1, 0, 0, 0, 3},
};

struct BadCblas {
  int layout, ta, tb, m, n, k, lda, ldb, ldc;
  int pos;  // reference CBLAS's position (layout = 1)
};
inline constexpr int kRowMajor = XnRowMajor, kColMajor = XnColMajor;
inline constexpr BadCblas kBadCblas[] = {
    {100, XnNoTrans, XnNoTrans, 4, 5, 6, 4, 6, 4, 1},
    {kColMajor, 0, XnNoTrans, 4, 5, 6, 4, 6, 4, 2},
    {kRowMajor, 0, XnNoTrans, 4, 5, 6, 6, 5, 5, 2},
    {kColMajor, XnNoTrans, 114, 4, 5, 6, 4, 6, 4, 3},
    {kRowMajor, XnNoTrans, 114, 4, 5, 6, 6, 5, 5, 3},
    {kColMajor, XnNoTrans, XnNoTrans, -1, 5, 6, 4, 6, 4, 4},
    {kRowMajor, XnNoTrans, XnNoTrans, -1, 5, 6, 6, 5, 5, 4},
    {kColMajor, XnNoTrans, XnNoTrans, 4, -1, 6, 4, 6, 4, 5},
    {kRowMajor, XnNoTrans, XnNoTrans, 4, -1, 6, 6, 5, 5, 5},
    {kColMajor, XnNoTrans, XnNoTrans, 4, 5, -1, 4, 6, 4, 6},
    {kRowMajor, XnNoTrans, XnNoTrans, 4, 5, -1, 6, 5, 5, 6},
    {kColMajor, XnNoTrans, XnNoTrans, 4, 5, 6, 3, 6, 4, 9},
    {kRowMajor, XnNoTrans, XnNoTrans, 4, 5, 6, 5, 5, 5, 9},  // row: lda >= k, NoTrans
    {kRowMajor, XnTrans, XnNoTrans, 4, 5, 6, 3, 5, 5, 9},    // row: lda >= m, Trans
    {kColMajor, XnNoTrans, XnNoTrans, 4, 5, 6, 4, 5, 4, 11},
    {kRowMajor, XnNoTrans, XnNoTrans, 4, 5, 6, 6, 4, 5, 11},  // row: ldb >= n, NoTrans
    {kRowMajor, XnNoTrans, XnTrans, 4, 5, 6, 6, 5, 5, 11},    // row: ldb >= k, Trans
    {kColMajor, XnNoTrans, XnNoTrans, 4, 5, 6, 4, 6, 3, 14},
    {kRowMajor, XnNoTrans, XnNoTrans, 4, 5, 6, 6, 5, 4, 14},  // row: ldc >= n
    // Order: row-major reports n before m and ldb before lda.
    {kRowMajor, XnNoTrans, XnNoTrans, -1, -1, 6, 6, 5, 5, 5},
    {kRowMajor, XnNoTrans, XnNoTrans, 4, 5, 6, 5, 4, 5, 11},
    {kColMajor, XnNoTrans, XnNoTrans, -1, -1, 6, 4, 6, 4, 4},
    {kColMajor, XnNoTrans, XnNoTrans, 4, 5, 6, 3, 5, 4, 9},
};

// A C pattern the library must leave bitwise alone: NaN with a payload, -0,
// infinities, a denormal.
template <class T>
std::vector<T> c_pattern() {
  std::vector<T> c(64);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = T(i) + T(0.25);
  c[0] = std::numeric_limits<T>::quiet_NaN();
  c[1] = T(-0.0);
  c[2] = std::numeric_limits<T>::infinity();
  c[3] = -std::numeric_limits<T>::infinity();
  c[4] = std::numeric_limits<T>::denorm_min();
  c[5] = -std::numeric_limits<T>::quiet_NaN();
  return c;
}

}  // namespace xn_test
