# api.cmake - API suites (label "api"): argument checkers, the host BLAS
# extension on the CPU path, the Fortran 77 rename example and the
# install/find_package round trip. Included by tests/CMakeLists.txt.

xn_add_test(test_api_args LABELS api unit SOURCES test_api_args.cpp)
xn_add_test(test_api_host LABELS api SOURCES test_api_host.cpp)
# Edge cases of the correctly rounded host BLAS (exdgemv_, exddot_, exdgemm_
# and their cblas_ forms) on the CPU: quick returns, zero and negative
# increments, XERBLA positions, specials, signed zeros, overflow and
# subnormal boundaries, against reference (C)BLAS and the IEEE oracle.
xn_add_test(test_api_exblas_edges LABELS api SOURCES test_api_exblas_edges.cpp)
# Every device routine inside CUDA graphs (skipped without a device).
xn_add_test(test_api_graphs LABELS api gpu SOURCES test_api_graphs.cpp)
# The option table against include/xngemm.h and README.md (read from the
# source tree).
xn_add_test(test_api_options LABELS api SOURCES test_api_options.cpp)
target_compile_definitions(test_api_options PRIVATE
  XN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# The depth model, its tables and the calibration cache, on the CPU with given
# device traits.
xn_add_test(test_api_depth_model LABELS api unit SOURCES test_api_depth_model.cpp)
target_compile_definitions(test_api_depth_model PRIVATE
  XN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
xn_add_test(test_api_depth_model_gpu LABELS api gpu SOURCES test_api_depth_model_gpu.cpp)
# The workspace growing inside calls, on the legacy default stream and a
# created one: alone, and as eight processes sharing the GPU (where, with
# the workspaces in the default memory pool, they faulted). Run alone: the
# eight copies are the contention, and their memory is not the others'.
xn_add_test(test_api_workspace_gpu LABELS api gpu SOURCES test_api_workspace_gpu.cpp)
add_test(NAME api_workspace_growth_concurrent
  COMMAND ${PROJECT_SOURCE_DIR}/scripts/run_concurrent.sh 8
          $<TARGET_FILE:test_api_workspace_gpu>)
set_tests_properties(api_workspace_growth_concurrent PROPERTIES LABELS "api;gpu"
  SKIP_RETURN_CODE 77 TIMEOUT 600 RUN_SERIAL TRUE)

# ------------------------------------------------ Fortran 77 rename example
# docs/examples/dgemm_example.f calls DGEMM (linked to OpenBLAS);
# dngemm_example.f is the same program with the call renamed DNGEMM (linked
# to xngemm). The test runs both and compares what they print.
#
# Fortran is optional: check_language() probes for a compiler in a separate
# CMake run, so a machine without one configures cleanly and just skips the
# example. enable_language() is legal here: include() keeps us at the file
# scope of tests/, the highest directory holding Fortran targets.
include(CheckLanguage)
check_language(Fortran)
if(CMAKE_Fortran_COMPILER)
  enable_language(Fortran)
  set(xn_examples ${PROJECT_SOURCE_DIR}/docs/examples)
  add_executable(dgemm_example ${xn_examples}/dgemm_example.f)
  target_link_libraries(dgemm_example PRIVATE BLAS::BLAS)
  add_executable(dngemm_example ${xn_examples}/dngemm_example.f)
  target_link_libraries(dngemm_example PRIVATE xngemm)
  if(CMAKE_Fortran_COMPILER_ID STREQUAL "GNU")
    # Fixed form with the compiler's full warnings; -std=legacy accepts
    # Fortran 77's conventions without noise.
    target_compile_options(dgemm_example PRIVATE -Wall -std=legacy)
    target_compile_options(dngemm_example PRIVATE -Wall -std=legacy)
  endif()

  # XN_LEAF_D=1 makes the 7x6x9 product recurse (two levels, with peeling of
  # the odd edges), so the comparison tests Winograd, not just the leaf GEMM.
  add_test(NAME api_fortran_dngemm_example
    COMMAND ${CMAKE_COMMAND}
      -DREF_EXE=$<TARGET_FILE:dgemm_example>
      -DNEW_EXE=$<TARGET_FILE:dngemm_example>
      -P ${CMAKE_CURRENT_SOURCE_DIR}/api_compare_output.cmake)
  # The comparator's self-test: one entry altered in DNGEMM's output must be
  # reported as a mismatch (matching the message, not just any failure).
  add_test(NAME api_fortran_compare_detects_mismatch
    COMMAND ${CMAKE_COMMAND}
      -DREF_EXE=$<TARGET_FILE:dgemm_example>
      -DNEW_EXE=$<TARGET_FILE:dngemm_example> -DPERTURB=ON
      -P ${CMAKE_CURRENT_SOURCE_DIR}/api_compare_output.cmake)
  set_tests_properties(api_fortran_dngemm_example
    api_fortran_compare_detects_mismatch PROPERTIES
    LABELS api ENVIRONMENT "XN_DEVICE=cpu;XN_LEAF_D=1" TIMEOUT 60)
  set_tests_properties(api_fortran_compare_detects_mismatch PROPERTIES
    PASS_REGULAR_EXPRESSION "entry 0: DGEMM printed [0-9.]+, DNGEMM [0-9.]+")
else()
  message(STATUS "No Fortran compiler: skipping the DGEMM/DNGEMM example test")
endif()

# ------------------------------------------------ install + find_package
# The distributed consumer's launcher: two processes (Open MPI refuses more
# processes than cores unless told).
set(xn_mpiexec_args "${MPIEXEC_NUMPROC_FLAG} 2")
if(MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI")
  string(APPEND xn_mpiexec_args " --oversubscribe")
endif()
# Installs this build into a scratch prefix (cmake --install) and builds and
# runs a C consumer against it with find_package(xngemm) (shared, static,
# dist) and with pkg-config (tests/install_consumer/run_install_test.cmake).
add_test(NAME api_install_find_package
  COMMAND ${CMAKE_COMMAND}
    -DBUILD_DIR=${PROJECT_BINARY_DIR}
    -DCONSUMER_DIR=${CMAKE_CURRENT_SOURCE_DIR}/install_consumer
    -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_test
    -DCONFIG=$<CONFIG>
    -DC_COMPILER=${CMAKE_C_COMPILER}
    -DEXPECT_DIST=${XN_HAVE_DIST}
    -DMPIEXEC=${MPIEXEC_EXECUTABLE} "-DMPIEXEC_ARGS=${xn_mpiexec_args}"
    -P ${CMAKE_CURRENT_SOURCE_DIR}/install_consumer/run_install_test.cmake)
# The Debian packages (scripts/debian/packages.cmake): built with cpack,
# checked by lintian, installed with dpkg into a scratch root, and C, C++
# and Fortran consumers built against that root with CMake and pkg-config,
# shared and static (tests/install_consumer/run_deb_test.cmake). Needs
# lintian and a Fortran compiler (scripts/deps.sh installs them).
add_test(NAME api_package_deb
  COMMAND ${CMAKE_COMMAND}
    -DBUILD_DIR=${PROJECT_BINARY_DIR}
    -DCONSUMER_DIR=${CMAKE_CURRENT_SOURCE_DIR}/install_consumer
    -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/deb_test
    -DDOCS=${PROJECT_SOURCE_DIR}/docs/packaging.md
    -DTRIPLET=${CMAKE_LIBRARY_ARCHITECTURE}
    -DCONFIG=$<CONFIG>
    -DC_COMPILER=${CMAKE_C_COMPILER}
    -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
    -DFortran_COMPILER=${CMAKE_Fortran_COMPILER}
    -DEXPECT_DIST=${XN_HAVE_DIST}
    -DMPIEXEC=${MPIEXEC_EXECUTABLE} "-DMPIEXEC_ARGS=${xn_mpiexec_args}"
    -P ${CMAKE_CURRENT_SOURCE_DIR}/install_consumer/run_deb_test.cmake)
# Serial: each runs a build of the library targets (a no-op when up to date)
# and must not race another test that does the same.
set_tests_properties(api_install_find_package api_package_deb PROPERTIES
  LABELS api TIMEOUT 300 RUN_SERIAL TRUE)

# ------------------------------------------------ citations
add_test(NAME api_citations_by_paper
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/check_citations.cmake)
set_tests_properties(api_citations_by_paper PROPERTIES LABELS "api;unit" TIMEOUT 60)

# ------------------------------------------------ layers
# The layer rule (scripts/check_layers.cmake) holds on the tree, and it
# fails on an include that runs back up: a copy of the lowest layer's folder
# with one header naming the core, planted in the build folder.
add_test(NAME api_layers_hold
  COMMAND ${CMAKE_COMMAND} -DXN_ROOT=${PROJECT_SOURCE_DIR}
    -P ${PROJECT_SOURCE_DIR}/scripts/check_layers.cmake)
set(xn_planted ${CMAKE_CURRENT_BINARY_DIR}/layers_planted)
file(WRITE ${xn_planted}/kernels/numerics/planted.h
  "#pragma once\n#include \"numerics/hd.h\"\n#include \"core/types.h\"\n")
add_test(NAME api_layers_catch_an_upward_include
  COMMAND ${CMAKE_COMMAND} -DXN_ROOT=${xn_planted}
    -P ${PROJECT_SOURCE_DIR}/scripts/check_layers.cmake)
set_tests_properties(api_layers_hold PROPERTIES LABELS "api;unit" TIMEOUT 60)
set_tests_properties(api_layers_catch_an_upward_include PROPERTIES LABELS "api;unit"
  TIMEOUT 60
  # (CMake wraps the message: any run of blanks and newlines between words.
  # The second message is the FATAL_ERROR's: the check failed, not only said.)
  PASS_REGULAR_EXPRESSION
  "planted\\.h:[ \n]+layer[ \n]+numerics[ \n]+includes[ \n]+\"core/types\\.h\".*include\\(s\\)[ \n]+run[ \n]+up[ \n]+the[ \n]+layers")
