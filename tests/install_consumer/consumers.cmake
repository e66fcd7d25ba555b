# consumers.cmake - what run_install_test.cmake and run_deb_test.cmake share:
# running a step, a fresh work folder with the library built, and building
# and running this folder's consumer programs against an installed xNGEMM,
# with CMake (find_package) and with pkg-config,
# linked to the shared and to the static library. Every program checks its
# own results and prints "... consumer...: OK".
#
# Reads: CONSUMER_DIR, WORK_DIR, CONFIG, C_COMPILER, CXX_COMPILER,
# Fortran_COMPILER, EXPECT_DIST, MPIEXEC and MPIEXEC_ARGS (the distributed
# consumer's launcher and its arguments, one string), and RUN_ENV (NAME=value settings for running the
# programs, besides XN_DEVICE=cpu).

separate_arguments(MPIEXEC_ARGS UNIX_COMMAND "${MPIEXEC_ARGS}")

# Runs a step, echoing its output only when it fails; its output is left in
# step_output.
function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${out}")
  endif()
  message(STATUS "${name}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# A fresh WORK_DIR, and the library targets built: the installed targets
# must exist even if only the test programs were built (up to date: a no-op).
function(fresh_work_dir_and_library)
  file(REMOVE_RECURSE "${WORK_DIR}")
  file(MAKE_DIRECTORY "${WORK_DIR}")
  set(targets xngemm xngemm_static xngemm_intercept)
  if(EXPECT_DIST)
    list(APPEND targets xngemm_dist)
  endif()
  step("build xngemm" "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --config ${CONFIG}
       --target ${targets})
endfunction()

find_program(READELF readelf REQUIRED)

# Runs <program> (on the CPU path; XN_LEAF_D=1 makes the small products
# recurse, so the recursive algorithms run, not just their leaf GEMM) and
# checks that it printed "consumer...: OK", and that it links libxngemm's
# shared library (SHARED) or does not (STATIC).
function(run_consumer name program linkage)
  step("run ${name}" "${CMAKE_COMMAND}" -E env XN_DEVICE=cpu XN_LEAF_D=1 ${RUN_ENV}
       ${program})
  if(NOT step_output MATCHES "consumer[^\n]*: OK")
    message(FATAL_ERROR "${name} printed:\n${step_output}")
  endif()
  execute_process(COMMAND "${READELF}" -d "${program}" OUTPUT_VARIABLE dynamic
                  COMMAND_ERROR_IS_FATAL ANY)
  if(linkage STREQUAL "SHARED" AND NOT dynamic MATCHES "NEEDED[^\n]*libxngemm\\.so\\.0")
    message(FATAL_ERROR "${name} does not link libxngemm.so.0:\n${dynamic}")
  elseif(linkage STREQUAL "STATIC" AND dynamic MATCHES "libxngemm\\.so")
    message(FATAL_ERROR "${name} links libxngemm's shared library:\n${dynamic}")
  endif()
endfunction()

# cmake_consumer(<language> <prefix>): this folder's project for <language>
# (C, CXX or Fortran), configured against the package installed under
# <prefix> alone, built and run: app (xngemm::xngemm), app_static
# (xngemm::xngemm_static) and, in C where the library has them, app_dist
# (xngemm::xngemm_dist, under MPIEXEC).
function(cmake_consumer language prefix)
  set(build "${WORK_DIR}/consumer-${language}")
  set(args -S "${CONSUMER_DIR}" -B "${build}" -DCMAKE_BUILD_TYPE=${CONFIG}
      "-DXN_CONSUMER_LANGUAGE=${language}" "-DCMAKE_PREFIX_PATH=${prefix}"
      "-DXN_EXPECTED_PREFIX=${prefix}" "-DXN_EXPECT_DIST=${EXPECT_DIST}"
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  if(${language}_COMPILER)
    list(APPEND args "-DCMAKE_${language}_COMPILER=${${language}_COMPILER}")
  endif()
  step("configure the ${language} consumer (CMake)" "${CMAKE_COMMAND}" ${args})
  step("build the ${language} consumer (CMake)" "${CMAKE_COMMAND}" --build "${build}"
       --config ${CONFIG})
  foreach(app app app_static)
    if(app STREQUAL "app")
      set(linkage SHARED)
    else()
      set(linkage STATIC)
    endif()
    find_program(exe_${app}_${language} NAMES ${app} PATHS "${build}" "${build}/${CONFIG}"
                 NO_DEFAULT_PATH REQUIRED)
    run_consumer("${language} consumer, ${linkage} (CMake)" "${exe_${app}_${language}}"
                 ${linkage})
  endforeach()
  if(EXPECT_DIST AND language STREQUAL "C")
    find_program(app_dist NAMES app_dist PATHS "${build}" "${build}/${CONFIG}"
                 NO_DEFAULT_PATH REQUIRED)
    # Open MPI refuses root without being told (CI containers run as root).
    step("run the distributed consumer" "${CMAKE_COMMAND}" -E env XN_DEVICE=cpu
         OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
         OPENBLAS_NUM_THREADS=1 ${RUN_ENV} ${MPIEXEC} ${MPIEXEC_ARGS} "${app_dist}")
    if(NOT step_output MATCHES "dist consumer on [0-9]+ process\\(es\\): OK")
      message(FATAL_ERROR "the distributed consumer printed:\n${step_output}")
    endif()
  endif()
endfunction()

# pkg_config_consumer(<language> <module> <pc folder> <out> [extra flags...]):
# this folder's program for <language>, compiled and linked by the
# compiler with the flags of `pkg-config --cflags --libs <module>` (Fortran:
# --libs only; xngemm: the shared library, xngemm-static: the archive), as
# the README shows and a Makefile does. The program's path is left in <out>.
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
function(pkg_config_consumer language module pc_dir out)
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
  set(what --cflags --libs)
  if(language STREQUAL "Fortran")
    set(what --libs)  # no C header to include
  endif()
  step("pkg-config ${what} ${module}" "${PKG_CONFIG}" ${what} ${module})
  string(STRIP "${step_output}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(source_C main.c)
  set(source_CXX main.cpp)
  set(source_Fortran main.f)
  set(compiler "${${language}_COMPILER}")
  if(NOT compiler)
    message(FATAL_ERROR "pkg_config_consumer: no ${language} compiler given")
  endif()
  set(exe "${WORK_DIR}/${out}-${language}-${module}")
  step("build ${exe}" "${compiler}"
       "${CONSUMER_DIR}/${source_${language}}" ${flags} ${ARGN} -o "${exe}")
  set(${out} "${exe}" PARENT_SCOPE)
endfunction()
