// xerbla_log.h - records what the host entry points report through XERBLA.
//
// Include in exactly one source file of a test executable: its definition of
// xerbla_ interposes the one the library would otherwise reach (OpenBLAS's,
// which prints), so a test can check the routine name and parameter
// position reference BLAS would report.
#pragma once

#include <cstddef>
#include <string>

namespace xn_test {
struct XerblaLog {
  std::string name;  // trailing blanks removed
  int info = 0;      // the parameter position
  int calls = 0;
};
inline XerblaLog g_xerbla;
}  // namespace xn_test

extern "C" void xerbla_(const char *srname, const int *info, std::size_t len) {
  std::string s(srname, len);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  xn_test::g_xerbla.name = s;
  xn_test::g_xerbla.info = *info;
  ++xn_test::g_xerbla.calls;
}
