# run_install_test.cmake - the install round trip, as a downstream user does
# it: install the library into a fresh prefix (or, with -DDEB=ON, build the
# Debian package with cpack and unpack it into a fresh folder), then
# configure, build and run a consumer project that finds it with
# find_package(xngemm), build and run the same program with the flags of
# `pkg-config --cflags --libs xngemm`, and check that the interposer is there;
# with -DEXPECT_DIST=ON also that xngemm::xngemm_dist links and runs.
#
#   cmake -DBUILD_DIR=<xngemm build tree> -DCONSUMER_DIR=<this folder>
#         -DWORK_DIR=<scratch folder, wiped> [-DCONFIG=<config>]
#         [-DC_COMPILER=<path>] [-DDEB=ON] [-DEXPECT_DIST=ON]
#         -P run_install_test.cmake
cmake_minimum_required(VERSION 3.24)

foreach(var BUILD_DIR CONSUMER_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "run_install_test.cmake: ${var} not set")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()

# Runs a step, echoing its output only when it fails.
function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${out}")
  endif()
  message(STATUS "${name}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/consumer-build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# The installed targets must exist even if only the test programs were built
# (up to date: a no-op).
set(targets xngemm xngemm_static xngemm_intercept)
if(EXPECT_DIST)
  list(APPEND targets xngemm_dist)
endif()
step("build xngemm" "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --config ${CONFIG}
     --target ${targets})
if(DEB)
  # What a user of the .deb gets: the package built by cpack, unpacked (as
  # dpkg would install it, without touching this machine's /usr).
  find_program(CPACK cpack HINTS "${CMAKE_COMMAND}/.." REQUIRED)
  find_program(DPKG_DEB dpkg-deb REQUIRED)
  step("cpack -G DEB" "${CPACK}" -G DEB -C ${CONFIG} -B "${WORK_DIR}/deb"
       --config "${BUILD_DIR}/CPackConfig.cmake")
  file(GLOB debs "${WORK_DIR}/deb/*.deb")
  list(LENGTH debs count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "expected one .deb, found: ${debs}")
  endif()
  step("dpkg-deb --info" "${DPKG_DEB}" --info ${debs})
  if(NOT step_output MATCHES "Package: xngemm" OR NOT step_output MATCHES "Depends: ")
    message(FATAL_ERROR "the package's control file:\n${step_output}")
  endif()
  step("dpkg-deb -x" "${DPKG_DEB}" -x ${debs} "${WORK_DIR}/root")
  set(prefix "${WORK_DIR}/root/usr")
else()
  step("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --config ${CONFIG}
       --prefix "${prefix}")
endif()

# What a consumer needs: the header and the package files.
file(GLOB_RECURSE config_files "${prefix}/*/xngemmConfig.cmake")
file(GLOB_RECURSE headers "${prefix}/include/xngemm.h")
file(GLOB_RECURSE pc_files "${prefix}/*/pkgconfig/xngemm.pc")
file(GLOB_RECURSE interposer "${prefix}/*/libxngemm_intercept.so")
if(NOT config_files OR NOT headers OR NOT pc_files OR NOT interposer)
  message(FATAL_ERROR "install tree lacks xngemmConfig.cmake, xngemm.h, xngemm.pc "
                      "or libxngemm_intercept.so")
endif()

set(configure_args -S "${CONSUMER_DIR}" -B "${consumer_build}"
    -DCMAKE_BUILD_TYPE=${CONFIG} "-DCMAKE_PREFIX_PATH=${prefix}"
    "-DXN_EXPECTED_PREFIX=${prefix}" "-DXN_EXPECT_DIST=${EXPECT_DIST}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(C_COMPILER)
  list(APPEND configure_args "-DCMAKE_C_COMPILER=${C_COMPILER}")
endif()
step("configure consumer" "${CMAKE_COMMAND}" ${configure_args})
step("build consumer" "${CMAKE_COMMAND}" --build "${consumer_build}"
     --config ${CONFIG})

find_program(app NAMES app PATHS "${consumer_build}" "${consumer_build}/${CONFIG}"
             NO_DEFAULT_PATH REQUIRED)
set(ENV{XN_DEVICE} cpu)
step("run consumer" "${app}")
if(NOT step_output MATCHES "consumer: OK")
  message(FATAL_ERROR "consumer printed:\n${step_output}")
endif()
message(STATUS "${step_output}")
if(EXPECT_DIST)
  find_program(app_dist NAMES app_dist PATHS "${consumer_build}"
               "${consumer_build}/${CONFIG}" NO_DEFAULT_PATH REQUIRED)
  step("run the distributed consumer" "${app_dist}")
  if(NOT step_output MATCHES "dist consumer: OK")
    message(FATAL_ERROR "the distributed consumer printed:\n${step_output}")
  endif()
endif()

# pkg-config, as a Makefile user does it: the same program, compiled and
# linked with the flags the installed xngemm.pc gives.
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
get_filename_component(pc_dir "${pc_files}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
step("pkg-config" "${PKG_CONFIG}" --cflags --libs xngemm)
string(STRIP "${step_output}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
if(NOT pc_flags MATCHES "-lxngemm")
  message(FATAL_ERROR "pkg-config gave: ${pc_flags}")
endif()
get_filename_component(lib_dir "${interposer}" DIRECTORY)
if(NOT C_COMPILER)
  set(C_COMPILER cc)
endif()
step("build consumer with pkg-config" "${C_COMPILER}" "${CONSUMER_DIR}/main.c"
     ${pc_flags} "-Wl,-rpath,${lib_dir}" -o "${WORK_DIR}/app_pc")
step("run consumer built with pkg-config" "${WORK_DIR}/app_pc")
if(NOT step_output MATCHES "consumer: OK")
  message(FATAL_ERROR "consumer (pkg-config) printed:\n${step_output}")
endif()
message(STATUS "pkg-config flags: ${pc_flags}")

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
