# exblas.cmake - the correctly rounded DGEMV and DDOT (xnExdgemv, xnExddot and
# their host entries; included by tests/CMakeLists.txt): the argument checks
# and XERBLA reports (api unit), and the host entries on the CPU bit for bit
# against the IEEE oracle (accuracy).
xn_add_test(test_exblas_args LABELS api unit SOURCES test_exblas_args.cpp)
xn_add_test(test_exblas_cpu LABELS accuracy SOURCES test_exblas_cpu.cpp)
# The device routines against the IEEE oracle, in both pointer modes and on a
# non-default stream, and cuBLAS's own statuses (gpu; skipped without a
# device); memcheck over the grid with device scalars (negative increments
# read as negative strides, padded lda) and the bad arguments.
xn_add_test(test_exblas_gpu LABELS gpu SOURCES test_exblas_gpu.cpp)
xn_add_sanitizer_tests(gpu_exblas_sanitizer test_exblas_gpu MEMCHECK "GpuExblas.GemvDeviceScalars*:GpuExblas.BadArguments*")
# The edges of xnExdgemv, xnExddot and the batched exdgemm against cuBLAS's
# own routines on the same handle (bad arguments and NULL pointers: the same
# status, the output untouched; quick returns and zero sizes), and their bits
# against the host entries on the CPU in both pointer modes on a stream (gpu;
# skipped without a device).
xn_add_test(test_exblas_edges_gpu LABELS gpu SOURCES test_exblas_edges_gpu.cpp)
# xnExdgemmStridedBatched and xnExdgemmBatched: every product bit for bit
# the oracle's (transposes, padded ld, gapped and zero strides, both pointer
# modes, a stream, device pointer arrays in any order), bad arguments.
xn_add_test(test_exdgemm_batched_gpu LABELS gpu SOURCES test_exdgemm_batched_gpu.cpp)
# The kernels' layout plans (host code): coverage, limits, and the TwoSum
# count the error bound is given.
xn_add_test(test_exblas_plan LABELS unit SOURCES test_exblas_plan.cpp)
