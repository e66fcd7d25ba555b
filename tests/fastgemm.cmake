# fastgemm.cmake - xn?gemmStrassen / xn?gemmWinograd's suites (included by
# tests/CMakeLists.txt): the schedule language and tables with the executor
# on integers (unit), the CPU backend against MPFR within the stated error
# bounds (accuracy), and the GPU suite (gpu; skipped cleanly without a
# device), also under compute-sanitizer.
xn_add_test(test_fastgemm_schedule LABELS unit SOURCES test_fastgemm_schedule.cpp)
xn_add_test(test_fastgemm_cpu LABELS accuracy SOURCES test_fastgemm_cpu.cpp)
xn_add_test(test_fastgemm_gpu LABELS gpu SOURCES test_fastgemm_gpu.cpp)

# The GPU suite under compute-sanitizer (about 100x slower): memcheck on the
# small cases of every path (GpuFastGemmSanitized) and on the tests of device
# scalars, NaN-filled supplied workspaces of exact and too small sizes, the
# packed op(B), NaN/Inf and the host names (11 s on the H200); racecheck
# (shared-memory hazards only: the transposing kernel of the B-side steps;
# the combine kernel uses no shared memory, and the exact tests are what
# check its in-place steps) on the small exact cases (32 s).
xn_add_sanitizer_tests(gpu_fastgemm_sanitizer test_fastgemm_gpu
  MEMCHECK "GpuFastGemmSanitized.*:GpuFastGemm.DevicePointerMode*:GpuFastGemm.PackTrans*:GpuFastGemm.WorkspaceQuery*:GpuFastGemm.NanAndInf*:GpuFastGemmHostApi.*"
  RACECHECK "GpuFastGemmSanitized.Exact*:GpuFastGemmSanitized.*Stream*")
