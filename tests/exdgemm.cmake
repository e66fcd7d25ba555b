# exdgemm.cmake - the correctly rounded DGEMM's suites (included by
# tests/CMakeLists.txt): the CPU backend against MPFR (accuracy) and the
# GPU against MPFR and the CPU, bit for bit (gpu; skipped without a device).
xn_add_test(test_exdgemm_cpu LABELS accuracy SOURCES test_exdgemm_cpu.cpp)
xn_add_test(test_exdgemm_gpu LABELS gpu SOURCES test_exdgemm_gpu.cpp)
xn_add_test(test_exdgemm_native_dgemm LABELS unit SOURCES test_exdgemm_native_dgemm.cpp)
# The IEEE contract (subnormal and overflow boundaries, specials, signed
# zeros, operands without a nonzero finite entry), bit for bit against the
# IEEE oracle: the CPU backend and host API (accuracy), the GPU (gpu).
xn_add_test(test_exdgemm_ieee LABELS accuracy SOURCES test_exdgemm_ieee.cpp)
xn_add_test(test_exdgemm_ieee_gpu LABELS gpu SOURCES test_exdgemm_ieee_gpu.cpp)
# The slice-product and emulation tests again with cuBLAS's FP64 emulation
# switched on for the whole process (eager, 8-bit mantissa): an emulated slice
# product would then be wrong, so these fail if one slips through. The slice
# engine is forced (XN_EXDGEMM_ENGINE=1): the modular one runs no FP64 GEMM.
add_test(NAME gpu_exdgemm_under_emulation_env COMMAND test_exdgemm_gpu
  --gtest_filter=GpuExdgemm.SliceProducts*:GpuExdgemm.UserEmulation*:GpuExdgemm.FamiliesAndTransposes*:GpuNativeDgemm.*)
set_tests_properties(gpu_exdgemm_under_emulation_env PROPERTIES LABELS gpu
  ENVIRONMENT "CUBLAS_EMULATE_DOUBLE_PRECISION=1;CUBLAS_EMULATION_STRATEGY=eager;CUBLAS_FIXEDPOINT_EMULATION_MANTISSA_BIT_COUNT=8;XN_EXDGEMM_ENGINE=1")
# The suite under compute-sanitizer: memcheck on small cases of both engines
# (phase times, pointer modes, streams, small blocks and budgets, allocation
# failure, bad arguments, the fused products of skinny n and the fused
# tiles of small m and n); racecheck on the kernels that share memory
# within a block (the exponent scan of few rows, the fused products staging
# op(B)'s residues, the tiles' residue planes), through the small skinny
# and small m and n shapes.
xn_add_sanitizer_tests(gpu_exdgemm_sanitizer test_exdgemm_gpu
  MEMCHECK "GpuExdgemm.PhaseTimes*:GpuExdgemm.PointerModes*:GpuExdgemm.AllocationFailure*:GpuExdgemm.SkinnyNSmall*:GpuExdgemm.SmallMAndNSmall*"
  RACECHECK "GpuExdgemm.SkinnyNSmall*:GpuExdgemm.SmallMAndNSmall*")
# xnbench on the CPU reports a host call that did not run (a budget below
# the smallest block's need) as an ERROR row with its status, not its
# untouched, NaN-poisoned C as wrong entries.
if(XN_BUILD_BENCH)
  add_test(NAME api_xnbench_reports_host_status
    COMMAND xnbench exdgemm --device cpu --shape 64x64x512 --seed 3 --reps 1)
  set_tests_properties(api_xnbench_reports_host_status PROPERTIES LABELS api TIMEOUT 120
    ENVIRONMENT "XN_EXDGEMM_WORKSPACE_LIMIT=1000;OPENBLAS_NUM_THREADS=1;OMP_NUM_THREADS=1"
    PASS_REGULAR_EXPRESSION "ERROR: cblas_exdgemm: did not run \\(XN_STATUS_UNCHANGED"
    FAIL_REGULAR_EXPRESSION "NOT CORRECTLY ROUNDED")
endif()
