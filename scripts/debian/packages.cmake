# packages.cmake - the Debian packages, built by `cpack -G DEB` in the build
# folder from the install components of the "deb" layout (CMakeLists.txt,
# xn_install): one package per component, under /usr, libraries in
# /usr/lib/<multiarch triplet>. Included by the top CMakeLists.txt. The test
# api_package_deb (tests/install_consumer/run_deb_test.cmake) builds them,
# runs lintian on them, installs them with dpkg into a scratch root and
# builds consumers against that; docs/packaging.md explains the choices.
#
#   libxngemm0            libxngemm.so.0
#   libxngemm-intercept0  libxngemm_intercept.so.0, the LD_PRELOAD interposer
#   libxngemm-dev         xngemm.h, libxngemm.a, the libxngemm.so link, the
#                         CMake package, xngemm.pc and xngemm-static.pc
#   libxngemm-dist0       libxngemm_dist.so.0 (MPI, ScaLAPACK)
#   libxngemm-dist-dev    xngemm_dist.h, the libxngemm_dist.so link, its
#                         CMake export
#
# The CUDA runtime and cuBLAS come from NVIDIA's CUDA packages, not Debian's:
# they are named in the descriptions, not as dependencies.

set(XN_DEB_MAINTAINER "xNGEMM developers <xngemm-dev@lists.xngemm.org>")
set(XN_DEB_RUNTIME_PACKAGES libxngemm0 libxngemm-intercept0)
set(XN_DEB_PACKAGES libxngemm0 libxngemm-intercept0 libxngemm-dev)
if(XN_HAVE_DIST)
  list(APPEND XN_DEB_RUNTIME_PACKAGES libxngemm-dist0)
  list(APPEND XN_DEB_PACKAGES libxngemm-dist0 libxngemm-dist-dev)
endif()
set(XN_DEB_DIR ${CMAKE_CURRENT_BINARY_DIR}/debian)

# ---------------------------------------------------------------- documents
# /usr/share/doc/<package>/copyright, from LICENSE, in the machine-readable
# format (DEP-5). LICENSE is read as: title, blank line, copyright line,
# "All rights reserved.", blank line, licence text.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/LICENSE ${CMAKE_CURRENT_LIST_DIR}/changelog)
file(READ ${PROJECT_SOURCE_DIR}/LICENSE xn_license)
if(NOT xn_license MATCHES
   "^BSD 3-Clause License\n\nCopyright \\(c\\) ([^\n]+)\nAll rights reserved\\.\n\n(.+)$")
  message(FATAL_ERROR "LICENSE is not laid out as scripts/debian/packages.cmake "
                      "expects: update the copyright file's generation")
endif()
set(xn_copyright_holders "${CMAKE_MATCH_1}")
string(STRIP "${CMAKE_MATCH_2}" xn_license_text)
# A DEP-5 text field: every line indented by one space, blank lines as " .".
string(REPLACE "\n\n" "\n.\n" xn_license_text "${xn_license_text}")
string(REPLACE "\n" "\n " xn_license_text "${xn_license_text}")
file(WRITE ${XN_DEB_DIR}/copyright
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: xNGEMM
Upstream-Contact: ${XN_DEB_MAINTAINER}

Files: *
Copyright: ${xn_copyright_holders}
License: BSD-3-clause
 ${xn_license_text}
")

# changelog.gz (the name for a native package: the packaging is upstream's),
# compressed as Debian policy 12.7 asks (gzip -9, no name or time stamp, so
# the packages are reproducible). Its latest entry must be this version.
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/changelog xn_changelog_head LIMIT_COUNT 1)
if(NOT xn_changelog_head MATCHES "^xngemm \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "scripts/debian/changelog: the latest entry is "
    "'${xn_changelog_head}', not version ${PROJECT_VERSION}: add an entry")
endif()
find_program(XN_GZIP gzip REQUIRED)
execute_process(COMMAND ${XN_GZIP} -9 -n -c ${CMAKE_CURRENT_LIST_DIR}/changelog
  OUTPUT_FILE ${XN_DEB_DIR}/changelog.gz COMMAND_ERROR_IS_FATAL ANY)

foreach(pkg IN LISTS XN_DEB_PACKAGES)
  install(FILES ${XN_DEB_DIR}/copyright ${XN_DEB_DIR}/changelog.gz
    DESTINATION share/doc/${pkg} COMPONENT ${pkg} EXCLUDE_FROM_ALL)
endforeach()

# ---------------------------------------------------------------- control files
# Runtime packages: a shlibs file (what a program linked with the library
# depends on: this version or a later one of the same SONAME) and the
# ldconfig trigger (Debian policy 8.1.1). CPack would write both only with
# its own dpkg-shlibdeps run, which also writes postinst/postrm scripts that
# call ldconfig, which lintian flags (maintscript-calls-ldconfig):
# scripts/debian/cpack_config.cmake runs dpkg-shlibdeps instead.
set(xn_soname_libxngemm0 libxngemm)
set(xn_soname_libxngemm-intercept0 libxngemm_intercept)
set(xn_soname_libxngemm-dist0 libxngemm_dist)
foreach(pkg IN LISTS XN_DEB_RUNTIME_PACKAGES)
  file(WRITE ${XN_DEB_DIR}/${pkg}/shlibs
    "${xn_soname_${pkg}} ${PROJECT_VERSION_MAJOR} ${pkg} (>= ${PROJECT_VERSION})\n")
  file(WRITE ${XN_DEB_DIR}/${pkg}/triggers "activate-noawait ldconfig\n")
  string(TOUPPER ${pkg} PKG)
  set(CPACK_DEBIAN_${PKG}_PACKAGE_CONTROL_EXTRA
    ${XN_DEB_DIR}/${pkg}/shlibs ${XN_DEB_DIR}/${pkg}/triggers)
  set(CPACK_DEBIAN_${PKG}_PACKAGE_SECTION libs)
endforeach()
foreach(pkg libxngemm-dev libxngemm-dist-dev)
  string(TOUPPER ${pkg} PKG)
  set(CPACK_DEBIAN_${PKG}_PACKAGE_SECTION libdevel)
endforeach()
# The libraries each runtime package holds, for dpkg-shlibdeps at cpack time
# (the build tree's files: the same NEEDED entries as the installed ones).
set(xn_shlibdeps_inputs "set(XN_SHLIBDEPS_libxngemm0 \"$<TARGET_FILE:xngemm>\")
set(XN_SHLIBDEPS_libxngemm-intercept0 \"$<TARGET_FILE:xngemm_intercept>\")\n")
if(XN_HAVE_DIST)
  string(APPEND xn_shlibdeps_inputs
    "set(XN_SHLIBDEPS_libxngemm-dist0 \"$<TARGET_FILE:xngemm_dist>\")\n")
endif()
file(GENERATE OUTPUT ${XN_DEB_DIR}/shlibdeps-$<CONFIG>.cmake
  CONTENT "${xn_shlibdeps_inputs}")

# ---------------------------------------------------------------- packages
set(xn_cuda "NVIDIA's CUDA ${CUDAToolkit_VERSION_MAJOR}")
set(xn_about "xNGEMM extends the BLAS and cuBLAS with faster or more accurate
matrix products under their argument lists: non-negative Winograd GEMM,
Strassen and Winograd GEMM for general inputs, correctly rounded DGEMM,
DGEMV and DDOT, and deterministic SYMV.")
set(xn_needs_cuda "It needs ${xn_cuda} runtime and cuBLAS (libcudart.so.${CUDAToolkit_VERSION_MAJOR},
libcublas.so.${CUDAToolkit_VERSION_MAJOR}, libcublasLt.so.${CUDAToolkit_VERSION_MAJOR}), which are not Debian packages.
Without a GPU the host routines run on the CPU.")
set(xn_needs_toolkit "Building against it needs ${xn_cuda} toolkit (cublas_v2.h), which is
not a Debian package.")

set(CPACK_DEBIAN_LIBXNGEMM0_DESCRIPTION
"faster or more accurate GEMM for NVIDIA GPUs and the CPU - runtime
${xn_about}

This package holds the shared library: the device routines (xnDngemm,
xnExdgemm, ...) and the host BLAS extensions (DNGEMM, EXDGEMM, ...).

${xn_needs_cuda}")
set(CPACK_DEBIAN_LIBXNGEMM-INTERCEPT0_DESCRIPTION
"xNGEMM interposer: BLAS and cuBLAS GEMM calls rerouted by LD_PRELOAD
${xn_about}

This package holds the interposer libxngemm_intercept.so.0: preloaded into
an unchanged program, it reroutes the program's own DGEMM, SGEMM,
cublasDgemm, ... calls to xNGEMM as the environment (XN_INTERCEPT) says.

${xn_needs_cuda}")
set(CPACK_DEBIAN_LIBXNGEMM-DEV_DESCRIPTION
"faster or more accurate GEMM for NVIDIA GPUs and the CPU - development
${xn_about}

This package holds the header xngemm.h, the static library, the CMake
package (find_package(xngemm)) and the pkg-config files xngemm.pc and
xngemm-static.pc.

${xn_needs_toolkit}")
set(CPACK_DEBIAN_LIBXNGEMM-DIST0_DESCRIPTION
"distributed xNGEMM products over MPI and ScaLAPACK - runtime
${xn_about}

This package holds libxngemm_dist.so.0: PDNGEMM, PSNGEMM and PEXDGEMM with
PDGEMM's argument list, over MPI and ScaLAPACK (BLACS grids).

${xn_needs_cuda}")
set(CPACK_DEBIAN_LIBXNGEMM-DIST-DEV_DESCRIPTION
"distributed xNGEMM products over MPI and ScaLAPACK - development
${xn_about}

This package holds the header xngemm_dist.h and the CMake target
xngemm::xngemm_dist (find_package(xngemm COMPONENTS dist)).

${xn_needs_toolkit}")

foreach(pkg IN LISTS XN_DEB_PACKAGES)
  string(TOUPPER ${pkg} PKG)
  set(CPACK_DEBIAN_${PKG}_PACKAGE_NAME ${pkg})
endforeach()
# Dependencies between the packages, exact: they are built together, and
# the interposer and libxngemm-dist0 call into the same version of
# libxngemm0 (the interposer loads it at run time, which dpkg-shlibdeps
# cannot see). The runtime packages' dependencies on Debian's libraries are
# added by dpkg-shlibdeps at cpack time (scripts/debian/cpack_config.cmake).
# The -dev packages depend on what their CMake package and .pc files name:
# OpenBLAS's link (FindBLAS, -lopenblas) and, for dist, MPI's and
# ScaLAPACK's.
set(xn_this "(= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_LIBXNGEMM-INTERCEPT0_PACKAGE_DEPENDS "libxngemm0 ${xn_this}")
set(CPACK_DEBIAN_LIBXNGEMM-DEV_PACKAGE_DEPENDS
  "libxngemm0 ${xn_this}, libopenblas-dev")
set(CPACK_DEBIAN_LIBXNGEMM-DIST0_PACKAGE_DEPENDS "libxngemm0 ${xn_this}")
set(CPACK_DEBIAN_LIBXNGEMM-DIST-DEV_PACKAGE_DEPENDS
  "libxngemm-dist0 ${xn_this}, libxngemm-dev ${xn_this}, libopenmpi-dev, libscalapack-openmpi-dev")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME xngemm)
# Each package's synopsis is the first line of its description above; CPack
# would put this summary (by default the project's description) above it.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "")
set(CPACK_PACKAGE_VENDOR "xNGEMM")
set(CPACK_PACKAGE_CONTACT "${XN_DEB_MAINTAINER}")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${XN_DEB_PACKAGES})
set(CPACK_DEBIAN_PACKAGE_SOURCE xngemm)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR OFF)
# Debian's packages ship stripped objects, directories 0755 whatever the
# umask, and control files with policy's permissions.
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE
  OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/cpack_config.cmake)
# Read by cpack_config.cmake (cpack passes on only CPACK_* variables).
set(CPACK_XN_DEB_DIR ${XN_DEB_DIR})
set(CPACK_XN_RUNTIME_PACKAGES ${XN_DEB_RUNTIME_PACKAGES})
set(CPACK_XN_LIBRARY_DIRS ${PROJECT_BINARY_DIR} ${CUDAToolkit_LIBRARY_DIR})
include(CPack)
