# ngemm.cmake - xnSngemm/xnDngemm's suites (included by tests/CMakeLists.txt):
# the schedule tables and the executor (unit), the CPU backend against MPFR
# (accuracy), and the GPU suite (gpu; skipped cleanly without a device), also
# under compute-sanitizer.
xn_add_test(test_ngemm_schedule LABELS unit SOURCES test_ngemm_schedule.cpp)
xn_add_test(test_ngemm_cpu LABELS accuracy SOURCES test_ngemm_cpu.cpp)
xn_add_test(test_ngemm_gpu LABELS gpu SOURCES test_ngemm_gpu.cpp)

# The same suite under compute-sanitizer: memcheck on everything, racecheck on
# the kernels' tests. Skipped (exit 77) where there is no device or no
# sanitizer.
foreach(tool memcheck racecheck)
  if(tool STREQUAL memcheck)
    set(filter "GpuNgemm.*:GpuHostApi.*")
  else()
    set(filter "GpuNgemm.AlphaBeta*:GpuNgemm.DevicePointer*:GpuNgemm.SizeTranspose*")
  endif()
  add_test(NAME gpu_sanitizer_${tool}
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/run_sanitizer.sh ${tool}
            $<TARGET_FILE:test_ngemm_gpu> --gtest_filter=${filter})
  set_tests_properties(gpu_sanitizer_${tool} PROPERTIES LABELS gpu
    SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()
