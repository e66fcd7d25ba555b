# symv.cmake - xnSsymv/xnDsymv's suites (included by tests/CMakeLists.txt):
# the block decomposition and a host emulation of the kernels (unit), the
# argument checks without a device (api), and the GPU suite (gpu; skipped
# without a device), also under compute-sanitizer.
xn_add_test(test_symv_layout LABELS unit SOURCES test_symv_layout.cpp)
xn_add_test(test_symv_api LABELS api SOURCES test_symv_api.cpp)
xn_add_test(test_symv_gpu LABELS gpu SOURCES test_symv_gpu.cpp)

# A small subset under compute-sanitizer: memcheck on the edge sizes, the
# increments, the scalars, the redirect targets, misaligned pointers and
# every variant on small orders; racecheck on the tile kernel's shared memory
# (the copy ring and its mbarriers, the mirrored diagonal tile, the warp row
# sums) for every variant and for the element-by-element copy path. Skipped
# (exit 77) where there is no device or no sanitizer.
foreach(tool memcheck racecheck)
  if(tool STREQUAL memcheck)
    set(filter "GpuSymv.SmallSizes*:GpuSymv.EveryIncrementSign*:GpuSymv.AlphaBeta*:GpuSymv.InfAtRedirectTargets*:GpuSymv.MisalignedPointers*:GpuSymvVariants.EveryVariantSmall*")
  else()
    set(filter "GpuSymv.SmallSizes*:GpuSymv.MisalignedPointers*:GpuSymvVariants.EveryVariantSmall*")
  endif()
  add_test(NAME gpu_symv_sanitizer_${tool}
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/run_sanitizer.sh ${tool}
            $<TARGET_FILE:test_symv_gpu> --gtest_filter=${filter})
  set_tests_properties(gpu_symv_sanitizer_${tool} PROPERTIES LABELS gpu
    SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()
