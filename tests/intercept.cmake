# intercept.cmake - unchanged programs under the interposer
# libxngemm_intercept.so (label "api"): two modules each over its own BLAS,
# a C program calling the host BLAS
# GEMMs, the Fortran DGEMM example, numpy.dot on the system BLAS and on the
# reference BLAS, and bad environment values, each checked by
# tests/intercept/check_intercept.py (docs/design.md, "Interposer"); and the
# plot script on the committed sweep data.
# Included by tests/CMakeLists.txt after api.cmake.

# Two modules loaded with RTLD_LOCAL, each over its own BLAS (two builds of
# fake_blas.c that define the same symbols): a call that passes through
# reaches the caller's own BLAS, without the interposer, in off mode and
# below the threshold in exdgemm mode.
set(xn_intercept_dir ${CMAKE_CURRENT_SOURCE_DIR}/intercept)
set(xn_two_blas_plugins)
foreach(mark 1 2)
  add_library(xn_fake_blas_${mark} SHARED ${xn_intercept_dir}/fake_blas.c)
  target_compile_definitions(xn_fake_blas_${mark} PRIVATE FAKE_BLAS_MARK=${mark})
  add_library(xn_blas_plugin_${mark} MODULE ${xn_intercept_dir}/blas_plugin.c)
  target_link_libraries(xn_blas_plugin_${mark} PRIVATE xn_fake_blas_${mark})
  list(APPEND xn_two_blas_plugins $<TARGET_FILE:xn_blas_plugin_${mark}>)
endforeach()
add_executable(two_blas_client ${xn_intercept_dir}/two_blas_client.c)
target_link_libraries(two_blas_client PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME api_intercept_two_blas_alone
  COMMAND two_blas_client ${xn_two_blas_plugins})
add_test(NAME api_intercept_two_blas_off
  COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=$<TARGET_FILE:xngemm_intercept>
    XN_INTERCEPT=off $<TARGET_FILE:two_blas_client> ${xn_two_blas_plugins} --preloaded)
add_test(NAME api_intercept_two_blas_below_threshold
  COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=$<TARGET_FILE:xngemm_intercept>
    XN_INTERCEPT=exdgemm XN_INTERCEPT_MIN_FLOPS=1e6
    $<TARGET_FILE:two_blas_client> ${xn_two_blas_plugins} --preloaded)
set_tests_properties(api_intercept_two_blas_alone api_intercept_two_blas_off
  api_intercept_two_blas_below_threshold PROPERTIES LABELS api TIMEOUT 60)

find_package(Python3 COMPONENTS Interpreter)
# numpy.dot needs the distribution's python3 with python3-numpy (system BLAS):
# prefer /usr/bin/python3 over a python3 earlier on PATH (pyenv, venv).
find_program(XN_SYSTEM_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT Python3_Interpreter_FOUND AND NOT XN_SYSTEM_PYTHON)
  message(STATUS "No python3: skipping the interposer tests")
  return()
endif()
if(NOT XN_SYSTEM_PYTHON)
  set(XN_SYSTEM_PYTHON ${Python3_EXECUTABLE})
endif()

add_executable(intercept_client ${xn_intercept_dir}/intercept_client.c)
target_include_directories(intercept_client PRIVATE ${XN_CBLAS_INCLUDE_DIR})
find_package(Threads REQUIRED)
target_link_libraries(intercept_client PRIVATE BLAS::BLAS Threads::Threads)
set(xn_check ${xn_intercept_dir}/check_intercept.py)
set(xn_lib $<TARGET_FILE:xngemm_intercept>)

add_test(NAME api_intercept_client
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_check} client ${xn_lib}
    $<TARGET_FILE:intercept_client>)
add_test(NAME api_intercept_numpy
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_check} numpy ${xn_lib})
# numpy on the reference BLAS (libblas3), which its extension module loads
# privately: the pass-through keeps it, off loads neither libxngemm nor CUDA.
add_test(NAME api_intercept_numpy_reference
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_check} numpy_reference ${xn_lib})
# Bad XN_* values, the interposer's and the library's: said once each.
add_test(NAME api_intercept_environment
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_check} environment ${xn_lib}
    $<TARGET_FILE:intercept_client>)
# The BLAS builds wheels bundle (scipy_ and 64_ names, 64-bit integers):
# a module over its own stand-in BLAS (wheel_blas.c), loaded with
# RTLD_LOCAL as Python loads NumPy's; and NumPy's DGEMV, DDOT and batched
# matmul (check_blas_families.py).
add_library(xn_wheel_blas SHARED ${xn_intercept_dir}/wheel_blas.c)
add_library(xn_wheel_module MODULE ${xn_intercept_dir}/wheel_module.c)
target_link_libraries(xn_wheel_module PRIVATE xn_wheel_blas)
add_executable(wheel_client ${xn_intercept_dir}/wheel_client.c)
target_link_libraries(wheel_client PRIVATE ${CMAKE_DL_LIBS})
set(xn_families ${xn_intercept_dir}/check_blas_families.py)
add_test(NAME api_intercept_wheels
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_families} wheels ${xn_lib}
    $<TARGET_FILE:wheel_client> $<TARGET_FILE:xn_wheel_module>)
add_test(NAME api_intercept_numpy_vectors
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_families} numpy_vectors ${xn_lib})
# NumPy and SciPy from PyPI in a virtual environment (made once per build
# folder; skipped where PyPI cannot be reached): their bundled OpenBLAS's
# names rerouted and correctly rounded, and numpy.linalg's and
# scipy.linalg's own suites under every mode (about 6 minutes on 2 cores).
set(xn_pypi_venv ${CMAKE_CURRENT_BINARY_DIR}/pypi-venv)
add_test(NAME api_intercept_pypi_venv
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_families} pypi_venv ${xn_pypi_venv})
set_tests_properties(api_intercept_pypi_venv PROPERTIES FIXTURES_SETUP xn_pypi)
add_test(NAME api_intercept_pypi
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_families} pypi ${xn_lib} ${xn_pypi_venv})
add_test(NAME api_intercept_pypi_suites
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_families} pypi_suites ${xn_lib} ${xn_pypi_venv})
set_tests_properties(api_intercept_pypi api_intercept_pypi_suites PROPERTIES
  FIXTURES_REQUIRED xn_pypi)
set(xn_intercept_tests api_intercept_client api_intercept_numpy
  api_intercept_numpy_reference api_intercept_environment api_intercept_wheels
  api_intercept_numpy_vectors api_intercept_pypi_venv api_intercept_pypi
  api_intercept_pypi_suites)
if(TARGET dgemm_example)
  add_test(NAME api_intercept_fortran
    COMMAND ${XN_SYSTEM_PYTHON} ${xn_check} fortran ${xn_lib}
      $<TARGET_FILE:dgemm_example> $<TARGET_FILE:dngemm_example>)
  list(APPEND xn_intercept_tests api_intercept_fortran)
endif()
# The CPU backend, so that the results do not depend on a GPU being there
# (a GPU gives the same bits for exdgemm; the integer cases are exact).
set_tests_properties(${xn_intercept_tests} PROPERTIES LABELS api
  ENVIRONMENT "XN_DEVICE=cpu" SKIP_RETURN_CODE 77 TIMEOUT 900)

# scripts/plot_results.py on the committed sweep data: one figure per routine
# (skipped where matplotlib is not installed: Debian's python3-matplotlib).
add_test(NAME api_plot_results
  COMMAND sh -c "\"$0\" -c 'import matplotlib' 2>/dev/null || exit 77; rm -rf \"$2\" && \"$0\" \"$1\" \"$2\" \"$3\" && test -s \"$2/strassen.png\" && test -s \"$2/winograd.png\""
    ${XN_SYSTEM_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/plot_results.py
    ${CMAKE_CURRENT_BINARY_DIR}/plots ${PROJECT_SOURCE_DIR}/docs/results/fastgemm/sweep.csv)
set_tests_properties(api_plot_results PROPERTIES LABELS api SKIP_RETURN_CODE 77
  TIMEOUT 120)

# The unchanged CUDA program (labels api and gpu; skipped without a GPU):
# cublasDgemm/cublasSgemm under the interposer, checked bit for bit against
# the mode's device routine called directly (cublas_reference).
add_executable(cublas_client ${xn_intercept_dir}/cublas_client.cpp)
target_link_libraries(cublas_client PRIVATE CUDA::cudart CUDA::cublas Threads::Threads)
add_executable(cublas_reference ${xn_intercept_dir}/cublas_reference.cpp)
target_link_libraries(cublas_reference PRIVATE xngemm Threads::Threads)
# The same for cuBLAS's GEMV, DOT, batched and Ex routines (FP64 rerouted,
# FP32 left to cuBLAS): check_blas_families.py, part "cublas".
add_executable(cublas_families_client ${xn_intercept_dir}/cublas_families_client.cpp)
target_link_libraries(cublas_families_client PRIVATE CUDA::cudart CUDA::cublas)
add_executable(cublas_families_reference ${xn_intercept_dir}/cublas_families_client.cpp)
target_compile_definitions(cublas_families_reference PRIVATE XN_DIRECT)
target_link_libraries(cublas_families_reference PRIVATE xngemm CUDA::cudart CUDA::cublas)
add_test(NAME gpu_intercept_cublas_families
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_intercept_dir}/check_blas_families.py cublas ${xn_lib}
    $<TARGET_FILE:cublas_families_client> $<TARGET_FILE:cublas_families_reference>)
set_tests_properties(gpu_intercept_cublas_families PROPERTIES LABELS "api;gpu"
  SKIP_RETURN_CODE 77 TIMEOUT 300)

add_test(NAME gpu_intercept_cublas
  COMMAND ${XN_SYSTEM_PYTHON} ${xn_check} cublas ${xn_lib}
    $<TARGET_FILE:cublas_client> $<TARGET_FILE:cublas_reference>)
# Alone under ctest -j: its leak check reads the device's free memory
# (cudaMemGetInfo), which another test's allocations move (it failed so
# once beside the distributed tests on one GPU).
set_tests_properties(gpu_intercept_cublas PROPERTIES LABELS "api;gpu"
  SKIP_RETURN_CODE 77 TIMEOUT 600 RUN_SERIAL TRUE)
