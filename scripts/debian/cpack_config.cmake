# cpack_config.cmake - CPACK_PROJECT_CONFIG_FILE (scripts/debian/packages.cmake):
# cpack includes it once per generator, after CPackConfig.cmake. For DEB it
# adds to each runtime package's Depends what dpkg-shlibdeps derives from
# its library's NEEDED entries and the Debian packages that provide them
# (libc6 (>= 2.34), libopenblas0, libopenmpi3, ...), as debhelper's
# ${shlibs:Depends} would. Libraries that no Debian package provides (the
# CUDA runtime and cuBLAS; libxngemm.so.0 for libxngemm-dist0, whose
# dependency packages.cmake states) are left out (--ignore-missing-info).
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
find_program(XN_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(NOT XN_DPKG_SHLIBDEPS)
  message(FATAL_ERROR "cpack -G DEB needs dpkg-shlibdeps (Debian package dpkg-dev)")
endif()

# The libraries of each package (XN_SHLIBDEPS_<package>), written at
# generate time for each configuration.
if(CPACK_BUILD_CONFIG)
  set(xn_inputs ${CPACK_XN_DEB_DIR}/shlibdeps-${CPACK_BUILD_CONFIG}.cmake)
else()
  file(GLOB xn_inputs ${CPACK_XN_DEB_DIR}/shlibdeps-*.cmake)
endif()
list(LENGTH xn_inputs xn_count)
if(NOT xn_count EQUAL 1 OR NOT EXISTS "${xn_inputs}")
  message(FATAL_ERROR "cpack_config.cmake: no single list of the packages' libraries "
    "in ${CPACK_XN_DEB_DIR} ('${xn_inputs}'): give the configuration with cpack -C")
endif()
include(${xn_inputs})

# dpkg-shlibdeps reads debian/control from its working folder.
set(xn_work ${CPACK_XN_DEB_DIR}/shlibdeps-work)
file(MAKE_DIRECTORY ${xn_work}/debian)
file(TOUCH ${xn_work}/debian/control)
set(xn_search)
foreach(dir IN LISTS CPACK_XN_LIBRARY_DIRS)
  list(APPEND xn_search -l${dir})
endforeach()
foreach(pkg IN LISTS CPACK_XN_RUNTIME_PACKAGES)
  set(lib "${XN_SHLIBDEPS_${pkg}}")
  if(NOT EXISTS "${lib}")
    message(FATAL_ERROR "cpack_config.cmake: ${pkg}'s library ${lib} is not built")
  endif()
  execute_process(COMMAND ${XN_DPKG_SHLIBDEPS} --ignore-missing-info ${xn_search} -O ${lib}
    WORKING_DIRECTORY ${xn_work} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "shlibs:Depends=([^\n]+)")
    message(FATAL_ERROR "dpkg-shlibdeps on ${lib} failed (${rc}):\n${out}${err}")
  endif()
  string(TOUPPER ${pkg} PKG)
  if(CPACK_DEBIAN_${PKG}_PACKAGE_DEPENDS)
    set(CPACK_DEBIAN_${PKG}_PACKAGE_DEPENDS
      "${CPACK_DEBIAN_${PKG}_PACKAGE_DEPENDS}, ${CMAKE_MATCH_1}")
  else()
    set(CPACK_DEBIAN_${PKG}_PACKAGE_DEPENDS "${CMAKE_MATCH_1}")
  endif()
endforeach()
file(REMOVE_RECURSE ${xn_work})
