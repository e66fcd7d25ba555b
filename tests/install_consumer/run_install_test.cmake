# run_install_test.cmake - the install round trip, as a downstream user does
# it: install the library into a fresh prefix, then configure, build and run
# a consumer project that finds it with find_package(xngemm).
#
#   cmake -DBUILD_DIR=<xngemm build tree> -DCONSUMER_DIR=<this folder>
#         -DWORK_DIR=<scratch folder, wiped> [-DCONFIG=<config>]
#         [-DC_COMPILER=<path>] -P run_install_test.cmake
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
step("build xngemm" "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --config ${CONFIG}
     --target xngemm xngemm_static)
step("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --config ${CONFIG}
     --prefix "${prefix}")

# What a consumer needs: the header and the package files.
file(GLOB_RECURSE config_files "${prefix}/*/xngemmConfig.cmake")
file(GLOB_RECURSE headers "${prefix}/include/xngemm.h")
if(NOT config_files OR NOT headers)
  message(FATAL_ERROR "install tree lacks xngemmConfig.cmake or xngemm.h")
endif()

set(configure_args -S "${CONSUMER_DIR}" -B "${consumer_build}"
    -DCMAKE_BUILD_TYPE=${CONFIG} "-DCMAKE_PREFIX_PATH=${prefix}"
    "-DXN_EXPECTED_PREFIX=${prefix}"
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
