# run_install_test.cmake - the install round trip, as a downstream user does
# it: `cmake --install` into a fresh prefix, then the C consumer project
# (consumers.cmake) with find_package(xngemm), linked to the shared and to
# the static library (a C-only project: xngemm::xngemm_static must not need
# C++) and, with -DEXPECT_DIST=ON, to xngemm::xngemm_dist; the same program
# built with the flags of `pkg-config --cflags --libs xngemm` and of
# xngemm-static; and the interposer under LD_PRELOAD.
#
#   cmake -DBUILD_DIR=<xngemm build tree> -DCONSUMER_DIR=<this folder>
#         -DWORK_DIR=<scratch folder, wiped> [-DCONFIG=<config>]
#         [-DC_COMPILER=<path>] [-DEXPECT_DIST=ON -DMPIEXEC=<mpiexec>
#         -DMPIEXEC_ARGS=<its arguments>] -P run_install_test.cmake
#
# The Debian packages' round trip is run_deb_test.cmake.
cmake_minimum_required(VERSION 3.24)

foreach(var BUILD_DIR CONSUMER_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "run_install_test.cmake: ${var} not set")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()
if(NOT C_COMPILER)
  set(C_COMPILER cc)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/consumers.cmake)

set(prefix "${WORK_DIR}/prefix")
fresh_work_dir_and_library()
step("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --config ${CONFIG}
     --prefix "${prefix}")

# What a consumer needs: the header and the package files; and no file of
# the Debian packages' layout (their components are not installed by default).
file(GLOB_RECURSE config_files "${prefix}/*/xngemmConfig.cmake")
file(GLOB_RECURSE headers "${prefix}/include/xngemm.h")
file(GLOB_RECURSE pc_files "${prefix}/*/pkgconfig/xngemm.pc")
file(GLOB_RECURSE interposer "${prefix}/*/libxngemm_intercept.so")
if(NOT config_files OR NOT headers OR NOT pc_files OR NOT interposer)
  message(FATAL_ERROR "install tree lacks xngemmConfig.cmake, xngemm.h, xngemm.pc "
                      "or libxngemm_intercept.so")
endif()
list(LENGTH config_files count)
if(EXISTS "${prefix}/share/doc" OR NOT count EQUAL 1)
  message(FATAL_ERROR "the plain install holds files of the Debian layout: "
                      "${config_files}")
endif()

cmake_consumer(C "${prefix}")

# pkg-config, as a Makefile user does it. Linked to the shared library from
# a prefix the dynamic loader does not search, the program runs only with
# an rpath or LD_LIBRARY_PATH (README, "Installing"): without either it must
# fail for that reason, unless an xNGEMM is installed on the system (then
# that one would be found).
get_filename_component(pc_dir "${pc_files}" DIRECTORY)
get_filename_component(lib_dir "${interposer}" DIRECTORY)
pkg_config_consumer(C xngemm "${pc_dir}" app_pc)
execute_process(COMMAND ldconfig -p OUTPUT_VARIABLE system_libs ERROR_QUIET)
if(system_libs MATCHES "libxngemm\\.so\\.0")
  message(STATUS "run without rpath: not checked (libxngemm.so.0 is installed on this system)")
else()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env XN_DEVICE=cpu "${app_pc}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "libxngemm\\.so\\.0: cannot open shared object file")
    message(FATAL_ERROR "the pkg-config consumer without rpath (${rc}):\n${out}")
  endif()
  message(STATUS "run without rpath: fails as the README says")
endif()
set(RUN_ENV "LD_LIBRARY_PATH=${lib_dir}")
run_consumer("C consumer, SHARED (pkg-config, LD_LIBRARY_PATH)" "${app_pc}" SHARED)
set(RUN_ENV "")
pkg_config_consumer(C xngemm "${pc_dir}" app_pc_rpath "-Wl,-rpath,${lib_dir}")
run_consumer("C consumer, SHARED (pkg-config, rpath)" "${app_pc_rpath}" SHARED)
pkg_config_consumer(C xngemm-static "${pc_dir}" app_pc_static)
run_consumer("C consumer, STATIC (pkg-config)" "${app_pc_static}" STATIC)

# The installed interposer loads by LD_PRELOAD alone into a program of the
# system BLAS that does not link xngemm (the interposer tests' client, when
# built): it must load libxngemm from beside itself and reroute the double
# calls.
set(blas_program "${BUILD_DIR}/tests/intercept_client")
if(EXISTS "${blas_program}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "LD_PRELOAD=${interposer}"
                    XN_DEVICE=cpu XN_INTERCEPT=exdgemm XN_INTERCEPT_LOG=1 "${blas_program}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT err MATCHES "xngemm intercept: 2 rerouted")
    message(FATAL_ERROR "the installed interposer under LD_PRELOAD (${rc}):\n${err}")
  endif()
  message(STATUS "installed interposer: ok")
else()
  message(STATUS "installed interposer: not run (no ${blas_program})")
endif()
