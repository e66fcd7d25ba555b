# ngemm.cmake - xnSngemm/xnDngemm's suites (included by tests/CMakeLists.txt):
# the schedule tables and the executor (unit), the CPU backend against MPFR
# (accuracy), and the GPU suite (gpu; skipped cleanly without a device), also
# under compute-sanitizer.
xn_add_test(test_ngemm_schedule LABELS unit SOURCES test_ngemm_schedule.cpp)
xn_add_test(test_ngemm_cpu LABELS accuracy SOURCES test_ngemm_cpu.cpp)
# Data of unequal scales: the depth rule from the scan's block maxima (unit)
# and the checked product against MPFR (accuracy).
xn_add_test(test_ngemm_scaling LABELS accuracy unit SOURCES test_ngemm_scaling.cpp)
xn_add_test(test_ngemm_gpu LABELS gpu SOURCES test_ngemm_gpu.cpp)

# The same suite under compute-sanitizer: memcheck on everything, racecheck on
# the kernels' tests. Skipped (exit 77) where there is no device or no
# sanitizer.
xn_add_sanitizer_tests(gpu_sanitizer test_ngemm_gpu
  MEMCHECK "GpuNgemm.*:GpuHostApi.*"
  RACECHECK "GpuNgemm.AlphaBeta*:GpuNgemm.DevicePointer*:GpuNgemm.SizeTranspose*")
