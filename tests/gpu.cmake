# GPU suites (label gpu): they skip cleanly (GTEST_SKIP) without a device.
xn_add_test(test_gpu_ngemm LABELS gpu SOURCES test_gpu_ngemm.cpp)

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
            $<TARGET_FILE:test_gpu_ngemm> --gtest_filter=${filter})
  set_tests_properties(gpu_sanitizer_${tool} PROPERTIES LABELS gpu
    SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()
