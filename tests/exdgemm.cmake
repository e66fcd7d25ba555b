# exdgemm.cmake - the correctly rounded DGEMM's suites (included by
# tests/CMakeLists.txt): the CPU backend against MPFR (accuracy) and the
# GPU against MPFR and the CPU, bit for bit (gpu; skipped without a device).
xn_add_test(test_exdgemm_cpu LABELS accuracy SOURCES test_exdgemm_cpu.cpp)
xn_add_test(test_gpu_exdgemm LABELS gpu SOURCES test_gpu_exdgemm.cpp)
