# fastgemm.cmake - xn?gemmStrassen / xn?gemmWinograd's suites (included by
# tests/CMakeLists.txt): the schedule language and tables with the executor
# on integers (unit), the CPU backend against MPFR within the stated error
# bounds (accuracy), and the GPU suite (gpu; skipped cleanly without a
# device), also under compute-sanitizer.
xn_add_test(test_fastgemm_schedule LABELS unit SOURCES test_fastgemm_schedule.cpp)
