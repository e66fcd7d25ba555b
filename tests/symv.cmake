# symv.cmake - xnSsymv/xnDsymv's suites (included by tests/CMakeLists.txt):
# the block decomposition and a host emulation of the kernels (unit), the
# argument checks without a device (api), and the GPU suite (gpu; skipped
# without a device), also under compute-sanitizer.
xn_add_test(test_symv_layout LABELS unit SOURCES test_symv_layout.cpp)
xn_add_test(test_symv_api LABELS api SOURCES test_symv_api.cpp)
xn_add_test(test_symv_gpu LABELS gpu SOURCES test_symv_gpu.cpp)

# A small subset under compute-sanitizer: memcheck on the edge sizes, the
# increments, the scalars, the redirect targets, misaligned pointers and
# every compiled variant on small orders; racecheck on the tile kernels'
# shared memory (the warp row sums, the pair tiles' even/odd row sums, and
# in a build with XN_BUILD_TUNING the copy ring and its mbarriers) for every
# compiled variant. Skipped (exit 77) where there is no device or no
# sanitizer.
xn_add_sanitizer_tests(gpu_symv_sanitizer test_symv_gpu
  MEMCHECK "GpuSymv.SmallSizes*:GpuSymv.EveryIncrementSign*:GpuSymv.AlphaBeta*:GpuSymv.InfAtRedirectTargets*:GpuSymv.MisalignedPointers*:GpuSymvVariants.EveryVariantSmall*"
  RACECHECK "GpuSymv.SmallSizes*:GpuSymv.MisalignedPointers*:GpuSymvVariants.EveryVariantSmall*")
