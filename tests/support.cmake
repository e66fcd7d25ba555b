# support.cmake - the test support library's exact MPFR oracle and its
# self-test (included by tests/CMakeLists.txt before the family suites).

# MPFR and GMP (Debian: libmpfr-dev, libgmp-dev; gmp.h lives in the
# multiarch include folder).
find_path(XN_MPFR_INCLUDE_DIR mpfr.h REQUIRED)
find_path(XN_GMP_INCLUDE_DIR gmp.h
  HINTS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE} REQUIRED)
find_library(XN_MPFR_LIBRARY mpfr REQUIRED)
find_library(XN_GMP_LIBRARY gmp REQUIRED)

target_sources(xn_test_support PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/support/mpfr_oracle.cpp)
target_include_directories(xn_test_support PUBLIC
  ${XN_MPFR_INCLUDE_DIR} ${XN_GMP_INCLUDE_DIR})
target_link_libraries(xn_test_support PUBLIC
  ${XN_MPFR_LIBRARY} ${XN_GMP_LIBRARY})

# The oracle's self-tests are fast and exact: unit.
xn_add_test(test_support_oracle LABELS unit SOURCES test_support_oracle.cpp)

# The IEEE oracle of the correctly rounded DGEMM's contract (exact classes
# and signed zeros; every finite rounding done by MPFR and by GMP and
# cross-checked) and its self-test on hand-computed boundary values.
target_sources(xn_test_support PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/support/ieee_oracle.cpp)
xn_add_test(test_support_ieee_oracle LABELS unit SOURCES test_support_ieee_oracle.cpp)
