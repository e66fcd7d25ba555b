# dist.cmake - the distributed products (PDNGEMM, PSNGEMM, PEXDGEMM; included
# by tests/CMakeLists.txt where xngemm_dist is built): one MPI program run
# by mpirun on 1, 2, 4 and 6 processes (every grid of that many and one of
# fewer), against ScaLAPACK's PDGEMM/PSGEMM and the exact oracle. More
# processes than cores: --oversubscribe, one BLAS thread each.
add_executable(test_dist_pgemm test_dist_pgemm.cpp)
target_link_libraries(test_dist_pgemm PRIVATE xngemm_dist xn_test_support MPI::MPI_C
  CUDA::cudart)
target_include_directories(test_dist_pgemm PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(test_dist_pgemm PRIVATE ${XN_WARNINGS})
# The C API of MPI only (no C++ bindings to link).
target_compile_definitions(test_dist_pgemm PRIVATE OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
# Open MPI refuses more processes than cores unless told.
set(XN_MPI_OVERSUBSCRIBE "")
if(MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI")
  set(XN_MPI_OVERSUBSCRIBE --oversubscribe)
endif()
foreach(np 1 2 4 6)
  add_test(NAME dist_pgemm_np${np}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${XN_MPI_OVERSUBSCRIBE}
            $<TARGET_FILE:test_dist_pgemm>)
  set_tests_properties(dist_pgemm_np${np} PROPERTIES LABELS "accuracy;api"
    TIMEOUT 900
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OPENBLAS_NUM_THREADS=1;OMP_NUM_THREADS=1;XN_DEVICE=cpu")
endforeach()

# The same with the local arrays in GPU memory (the device engine): on one
# GPU every process shares it (MPI through host memory: NCCL takes one GPU
# per process); on a machine of several GPUs, one each (NCCL), and MPI
# forced once. Skipped (77) without a GPU.
foreach(np 1 2 4)
  add_test(NAME gpu_dist_pgemm_np${np}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${XN_MPI_OVERSUBSCRIBE}
            $<TARGET_FILE:test_dist_pgemm> --device)
  set_tests_properties(gpu_dist_pgemm_np${np} PROPERTIES LABELS "gpu;accuracy"
    TIMEOUT 900 SKIP_RETURN_CODE 77
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OPENBLAS_NUM_THREADS=1;OMP_NUM_THREADS=1;NCCL_NVLS_ENABLE=0")
endforeach()
add_test(NAME gpu_dist_pgemm_np4_mpi
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4 ${XN_MPI_OVERSUBSCRIBE}
          $<TARGET_FILE:test_dist_pgemm> --device)
set_tests_properties(gpu_dist_pgemm_np4_mpi PROPERTIES LABELS "gpu;accuracy"
  TIMEOUT 900 SKIP_RETURN_CODE 77
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OPENBLAS_NUM_THREADS=1;OMP_NUM_THREADS=1;XN_DIST_TRANSPORT=2")

# The index arithmetic alone (no MPI): unit.
xn_add_test(test_dist_block_cyclic LABELS unit SOURCES test_dist_block_cyclic.cpp
  ${PROJECT_SOURCE_DIR}/src/distributed/block_cyclic.cpp)
target_include_directories(test_dist_block_cyclic PRIVATE ${PROJECT_SOURCE_DIR}/src)
# The device engine's exchange plans, for whole grids in one process: unit.
xn_add_test(test_dist_strip_plan LABELS unit SOURCES test_dist_strip_plan.cpp
  ${PROJECT_SOURCE_DIR}/src/distributed/strip_plan.cpp ${PROJECT_SOURCE_DIR}/src/distributed/block_cyclic.cpp)
target_include_directories(test_dist_strip_plan PRIVATE ${PROJECT_SOURCE_DIR}/src)
# The driver's order of memory reservations (panels, the routine's workspace): unit.
xn_add_test(test_dist_panel_choice LABELS unit SOURCES test_dist_panel_choice.cpp)
target_include_directories(test_dist_panel_choice PRIVATE ${PROJECT_SOURCE_DIR}/src)

# The benchmark runs and finds no wrong entry (its exit status says so).
if(XN_BUILD_BENCH)
  add_test(NAME api_xnbench_mpi
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${XN_MPI_OVERSUBSCRIBE}
            $<TARGET_FILE:xnbench_mpi> --routine pexdgemm --sizes 96,130 --nb 16
            --samples 24 --reps 1)
  set_tests_properties(api_xnbench_mpi PROPERTIES LABELS api TIMEOUT 300
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OPENBLAS_NUM_THREADS=1;OMP_NUM_THREADS=1;XN_DEVICE=cpu")
endif()

# The key of the device engine's kept communicators, for grids made and
# freed many times (plain MPI, no GPU): unit.
add_executable(test_dist_grid_identity test_dist_grid_identity.cpp
  ${PROJECT_SOURCE_DIR}/src/distributed/grid_identity.cpp)
target_link_libraries(test_dist_grid_identity PRIVATE ${XN_SCALAPACK_LIBRARY} MPI::MPI_C)
target_include_directories(test_dist_grid_identity PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(test_dist_grid_identity PRIVATE ${XN_WARNINGS})
target_compile_definitions(test_dist_grid_identity PRIVATE OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
foreach(np 1 4 6)
  add_test(NAME dist_grid_identity_np${np}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${XN_MPI_OVERSUBSCRIBE}
            $<TARGET_FILE:test_dist_grid_identity>)
  set_tests_properties(dist_grid_identity_np${np} PROPERTIES LABELS unit TIMEOUT 300
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endforeach()
