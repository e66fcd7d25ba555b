# run_deb_test.cmake - the Debian packages' round trip, as the README's
# "Installing" section does it:
#  1. `cpack -G DEB` builds the packages (scripts/debian/packages.cmake): the
#     expected names, libraries in /usr/lib/<multiarch triplet>, a copyright
#     file in each, MPI and ScaLAPACK named by the dist packages only;
#  2. lintian: no error, and every warning named in docs/packaging.md's
#     section "Lintian warnings kept" (which says why it is kept);
#  3. dpkg installs them into a scratch root (--root), whose package database
#     holds this machine's installed packages (copied: dpkg checks the
#     packages' dependencies against them) and whose files are only the
#     packages': nothing of this machine's /usr is touched;
#  4. consumers (consumers.cmake) built against that root alone: C, C++ and
#     Fortran, each with CMake (find_package, in a project of that language
#     only) and with pkg-config (xngemm.pc, xngemm-static.pc), each linked
#     to the shared and to the static library and run; the distributed
#     consumer under mpiexec; the interposer under LD_PRELOAD;
#  5. dpkg removes them again, leaving no file behind.
# The programs run with LD_LIBRARY_PATH set to the root's library folder,
# which stands for /usr/lib/<triplet> (searched without it on a machine that
# installed the packages).
#
#   cmake -DBUILD_DIR=<xngemm build tree> -DCONSUMER_DIR=<this folder>
#         -DWORK_DIR=<scratch folder, wiped> -DDOCS=<docs/packaging.md>
#         -DTRIPLET=<multiarch triplet> [-DCONFIG=<config>]
#         -DC_COMPILER=<path> -DCXX_COMPILER=<path> -DFortran_COMPILER=<path>
#         [-DEXPECT_DIST=ON -DMPIEXEC=<mpiexec> -DMPIEXEC_ARGS=<arguments>]
#         -P run_deb_test.cmake
cmake_minimum_required(VERSION 3.24)

foreach(var BUILD_DIR CONSUMER_DIR WORK_DIR DOCS TRIPLET)
  if(NOT ${var})
    message(FATAL_ERROR "run_deb_test.cmake: ${var} not set")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/consumers.cmake)

# The tools, each named with the Debian package that has it (the README's
# test command, scripts/test.sh, installs them through scripts/deps.sh).
foreach(tool lintian:lintian dpkg:dpkg dpkg-deb:dpkg dpkg-query:dpkg
             dpkg-shlibdeps:dpkg-dev)
  string(REPLACE ":" ";" tool "${tool}")
  list(GET tool 0 program)
  list(GET tool 1 package)
  find_program(tool_${program} ${program} PATHS /usr/bin /usr/sbin /sbin)
  if(NOT tool_${program})
    message(FATAL_ERROR "${program} is not installed: install the Debian package "
      "${package} (bash scripts/deps.sh does)")
  endif()
endforeach()
foreach(language C CXX Fortran)
  if(NOT ${language}_COMPILER)
    message(FATAL_ERROR "no ${language} compiler was found when the tree was "
      "configured (Debian: g++, gfortran; bash scripts/deps.sh installs them)")
  endif()
endforeach()
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT uid STREQUAL "0")
  # dpkg sets the files' owner to root: without root, under fakeroot.
  find_program(FAKEROOT fakeroot)
  if(NOT FAKEROOT)
    message(FATAL_ERROR "dpkg needs root or fakeroot: install the Debian package "
      "fakeroot (or run as root)")
  endif()
  set(as_root ${FAKEROOT})
  set(not_root --force-not-root)
endif()

fresh_work_dir_and_library()

# ---------------------------------------------------------------- 1. cpack
find_program(CPACK cpack HINTS "${CMAKE_COMMAND}/.." REQUIRED)
step("cpack -G DEB" "${CPACK}" -G DEB -C ${CONFIG} -B "${WORK_DIR}/deb"
     --config "${BUILD_DIR}/CPackConfig.cmake")
set(packages libxngemm0 libxngemm-intercept0 libxngemm-dev)
if(EXPECT_DIST)
  list(APPEND packages libxngemm-dist0 libxngemm-dist-dev)
endif()
file(GLOB debs "${WORK_DIR}/deb/*.deb")
set(names)
foreach(deb IN LISTS debs)
  get_filename_component(name "${deb}" NAME)
  string(REGEX REPLACE "_.*" "" name "${name}")
  list(APPEND names ${name})
  set(deb_${name} "${deb}")
endforeach()
list(SORT names)
set(expected ${packages})
list(SORT expected)
if(NOT names STREQUAL expected)
  message(FATAL_ERROR "cpack built ${names}, expected ${expected}")
endif()

string(REPLACE "." "\\." escaped_triplet "${TRIPLET}")
foreach(pkg IN LISTS packages)
  execute_process(COMMAND "${tool_dpkg-deb}" --field "${deb_${pkg}}" Depends Maintainer
                  OUTPUT_VARIABLE control_${pkg} COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND "${tool_dpkg-deb}" --contents "${deb_${pkg}}"
                  OUTPUT_VARIABLE contents_${pkg} COMMAND_ERROR_IS_FATAL ANY)
  if(NOT contents_${pkg} MATCHES " \\./usr/share/doc/${pkg}/copyright\n")
    message(FATAL_ERROR "${pkg} has no /usr/share/doc/${pkg}/copyright")
  endif()
  if(control_${pkg} MATCHES "localhost")
    message(FATAL_ERROR "${pkg}'s maintainer is a placeholder:\n${control_${pkg}}")
  endif()
  # Only the dist packages bring MPI and ScaLAPACK.
  if(pkg MATCHES "dist" AND NOT control_${pkg} MATCHES "openmpi")
    message(FATAL_ERROR "${pkg} does not depend on MPI:\n${control_${pkg}}")
  elseif(NOT pkg MATCHES "dist" AND control_${pkg} MATCHES "mpi|scalapack")
    message(FATAL_ERROR "${pkg} depends on MPI or ScaLAPACK:\n${control_${pkg}}")
  endif()
endforeach()
# Each library in its package, in the multiarch folder.
foreach(check "libxngemm0:libxngemm\\.so\\.0"
              "libxngemm-intercept0:libxngemm_intercept\\.so\\.0"
              "libxngemm-dev:libxngemm\\.a" "libxngemm-dev:libxngemm\\.so "
              "libxngemm-dev:cmake/xngemm/xngemmConfig\\.cmake"
              "libxngemm-dev:pkgconfig/xngemm\\.pc")
  string(REPLACE ":" ";" check "${check}")
  list(GET check 0 pkg)
  list(GET check 1 file)
  if(NOT contents_${pkg} MATCHES "\\./usr/lib/${escaped_triplet}/${file}")
    message(FATAL_ERROR "${pkg} lacks /usr/lib/${TRIPLET}/${file}:\n${contents_${pkg}}")
  endif()
endforeach()
if(EXPECT_DIST AND NOT contents_libxngemm-dist0 MATCHES
   "\\./usr/lib/${escaped_triplet}/libxngemm_dist\\.so\\.0")
  message(FATAL_ERROR "libxngemm-dist0 lacks libxngemm_dist.so.0")
endif()
message(STATUS "packages: ${names}")

# ---------------------------------------------------------------- 2. lintian
execute_process(COMMAND "${tool_lintian}" --fail-on error ${debs}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCHALL "(^|\n)E: [^\n]+" errors "${out}")
string(REGEX MATCHALL "(^|\n)W: [^:\n]+: [^ \n]+" warnings "${out}")
if(NOT rc EQUAL 0 OR errors)
  message(FATAL_ERROR "lintian (${rc}):\n${out}${err}")
endif()
# The docs' section "Lintian warnings kept" names each (as `tag`) and says why.
file(READ "${DOCS}" docs)
if(NOT docs MATCHES "\n### Lintian warnings kept\n([^#]*)")
  message(FATAL_ERROR "${DOCS} has no section \"### Lintian warnings kept\"")
endif()
set(kept "${CMAKE_MATCH_1}")
set(unexplained)
foreach(warning IN LISTS warnings)
  string(REGEX REPLACE ".*: " "" tag "${warning}")
  if(NOT kept MATCHES "`${tag}`")
    list(APPEND unexplained ${tag})
  endif()
endforeach()
if(unexplained)
  message(FATAL_ERROR "lintian warnings that ${DOCS} does not explain: "
    "${unexplained}; fix them or say there why they stay:\n${out}")
endif()
list(LENGTH warnings count)
message(STATUS "lintian: no error, ${count} warnings (each explained in the docs)")

# ---------------------------------------------------------------- 3. dpkg
# The scratch root's database: a copy of this machine's, so that dpkg checks
# the packages' dependencies against what is installed here, with an empty
# file list for each package (none of their files is in the root).
set(root "${WORK_DIR}/root")
set(admin "${root}/var/lib/dpkg")
file(MAKE_DIRECTORY "${admin}/info" "${admin}/updates" "${admin}/triggers")
file(COPY_FILE /var/lib/dpkg/status "${admin}/status")
file(TOUCH "${admin}/available")
execute_process(COMMAND "${tool_dpkg-query}" --admindir=${admin} --show
                  --showformat=${admin}/info/\${binary:Package}.list\\n
                OUTPUT_VARIABLE lists COMMAND_ERROR_IS_FATAL ANY)
string(STRIP "${lists}" lists)
string(REPLACE "\n" ";" lists "${lists}")
file(TOUCH ${lists})

set(dpkg ${as_root} "${tool_dpkg}" --root=${root} --log=${WORK_DIR}/dpkg.log ${not_root})
set(ordered_debs)
foreach(pkg IN LISTS packages)
  list(APPEND ordered_debs "${deb_${pkg}}")
endforeach()
step("dpkg --install" ${dpkg} --install ${ordered_debs})
foreach(pkg IN LISTS packages)
  step("dpkg --status ${pkg}" ${dpkg} --status ${pkg})
  if(NOT step_output MATCHES "Status: install ok installed")
    message(FATAL_ERROR "${pkg} is not installed in ${root}:\n${step_output}")
  endif()
endforeach()
set(prefix "${root}/usr")
set(libdir "${prefix}/lib/${TRIPLET}")

# ---------------------------------------------------------------- 4. consumers
set(RUN_ENV "LD_LIBRARY_PATH=${libdir}")
foreach(language C CXX Fortran)
  cmake_consumer(${language} "${prefix}")
  pkg_config_consumer(${language} xngemm "${libdir}/pkgconfig" pc)
  run_consumer("${language} consumer, SHARED (pkg-config)" "${pc}" SHARED)
  pkg_config_consumer(${language} xngemm-static "${libdir}/pkgconfig" pc)
  run_consumer("${language} consumer, STATIC (pkg-config)" "${pc}" STATIC)
endforeach()

# The interposer, preloaded into a program of the system BLAS (the interposer
# tests' client, built with the tests), loads libxngemm.so.0 from beside
# itself and reroutes the double calls.
set(blas_program "${BUILD_DIR}/tests/intercept_client")
if(NOT EXISTS "${blas_program}")
  message(FATAL_ERROR "no ${blas_program}: build the test programs first")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env
                  "LD_PRELOAD=${libdir}/libxngemm_intercept.so.0"
                  XN_DEVICE=cpu XN_INTERCEPT=exdgemm XN_INTERCEPT_LOG=1 "${blas_program}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT err MATCHES "xngemm intercept: 2 rerouted")
  message(FATAL_ERROR "the packaged interposer under LD_PRELOAD (${rc}):\n${err}")
endif()
message(STATUS "packaged interposer: ok")

# ---------------------------------------------------------------- 5. removal
step("dpkg --purge" ${dpkg} --purge ${packages})
file(GLOB_RECURSE left LIST_DIRECTORIES false "${prefix}/*")
if(left)
  message(FATAL_ERROR "files left after dpkg --purge: ${left}")
endif()
