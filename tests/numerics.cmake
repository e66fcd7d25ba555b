# numerics.cmake - the shared __host__ __device__ numerics of kernels/numerics/
# that the exdgemm engine is built from: NearSum and the wide accumulator,
# against MPFR (unit).
xn_add_test(test_numerics_nearsum LABELS unit SOURCES test_numerics_nearsum.cpp)
xn_add_test(test_numerics_wide_accumulator LABELS unit
  SOURCES test_numerics_wide_accumulator.cpp)
# The modular engine's residues and reconstruction against GMP.
xn_add_test(test_numerics_modular LABELS unit SOURCES test_numerics_modular.cpp)
target_include_directories(test_numerics_modular PRIVATE ${XN_GMP_INCLUDE_DIR})
target_link_libraries(test_numerics_modular PRIVATE ${XN_GMP_LIBRARY})
# Its own rounding (round_fast) against MPFR, every limb count compiled.
xn_add_test(test_numerics_modular_round LABELS unit SOURCES test_numerics_modular_round.cpp)
xn_add_test(test_numerics_exact_dot LABELS unit accuracy SOURCES test_numerics_exact_dot.cpp)
