// blas_conventions.h - the BLAS front ends' argument conventions, written
// once for every front end (the host routines' checks, the interposer, the
// distributed routines): Fortran's TRANS characters and CBLAS's layout and
// transpose constants (cblas.h's values, which include/xngemm.h's
// xnLayout_t / xnTranspose_t repeat for callers without a cblas.h).
// CUDA-free; cuBLAS's operations are src/api/internal.h's.
#pragma once

namespace xn::blas {

// A TRANS character in upper case (reference BLAS's LSAME ignores case).
constexpr char upper(char c) { return c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c; }
// 'N', 'T' or 'C', either case.
constexpr bool valid_trans(char t) {
  const char u = upper(t);
  return u == 'N' || u == 'T' || u == 'C';
}
// Whether a valid TRANS transposes its matrix ('T' and 'C' alike: the
// matrices are real).
constexpr bool transposes(char t) { return upper(t) != 'N'; }

// cblas.h's CBLAS_LAYOUT and CBLAS_TRANSPOSE.
constexpr int kRowMajor = 101, kColMajor = 102;
constexpr int kNoTrans = 111, kTrans = 112, kConjTrans = 113;
constexpr bool valid_layout(int layout) { return layout == kRowMajor || layout == kColMajor; }
constexpr bool valid_cblas_trans(int t) { return t == kNoTrans || t == kTrans || t == kConjTrans; }
// The TRANS character of a CBLAS transpose; '?' for any other value.
constexpr char trans_char(int t) {
  return t == kNoTrans ? 'N' : t == kTrans ? 'T' : t == kConjTrans ? 'C' : '?';
}

}  // namespace xn::blas
