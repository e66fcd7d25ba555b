# check_layers.cmake - fails when a file of src/ or kernels/ includes a
# header of a layer above its own (docs/design.md, "Layers").
#
#   cmake -DXN_ROOT=<source tree> -P scripts/check_layers.cmake
#
# The build runs it before compiling any layer (CMakeLists.txt), and the
# unit test check_layers runs it on the tree and on a planted violation.
# Every layer includes by path ("core/...", "numerics/...", "kernels/..."),
# from include folders that show all of src/ and kernels/: this table, not
# the folders, is what keeps an include from running back up.

cmake_minimum_required(VERSION 3.24)  # the policies of the project's CMake

if(NOT XN_ROOT)
  message(FATAL_ERROR "check_layers.cmake: set -DXN_ROOT=<source tree>")
endif()

# layer | its files (a folder under XN_ROOT) | the prefix its headers are
# included by | the layers it may include besides itself (- for none).
# Bottom up.
set(XN_LAYER_TABLE
  "numerics|kernels/numerics|numerics/|-"
  "core|src/core|core/|numerics"
  "kernels|kernels|kernels/|numerics"
  "backend_cpu|src/backend/cpu|backend/cpu/|numerics core"
  "backend_cuda|src/backend/cuda|backend/cuda/|numerics core kernels public"
  "api|src/api|api/|numerics core kernels backend_cpu backend_cuda public"
  "distributed|src/distributed|distributed/|numerics core backend_cuda api public"
  "intercept|src/intercept|intercept/|numerics core api public")
# The public headers (include/): a layer that may use them lists "public".
set(XN_PUBLIC_HEADERS xngemm.h xngemm_dist.h)

set(layers "")
foreach(row IN LISTS XN_LAYER_TABLE)
  string(REPLACE "|" ";" f "${row}")
  list(GET f 0 name)
  list(GET f 1 dir)
  list(GET f 2 prefix)
  list(GET f 3 may)
  string(REPLACE " " ";" may "${may}")
  list(REMOVE_ITEM may -)
  list(APPEND layers ${name})
  set(dir_${name} ${dir})
  set(prefix_${name} ${prefix})
  set(may_${name} ${name} ${may})
endforeach()

# The layer of an included path ("" when it is none of ours: a system or
# third-party header).
function(layer_of_include path out)
  set(found "")
  if(path IN_LIST XN_PUBLIC_HEADERS)
    set(found public)
  else()
    # The longest prefix wins ("kernels/" is not "numerics/": no overlap).
    set(best 0)
    foreach(l IN LISTS layers)
      string(LENGTH "${prefix_${l}}" len)
      string(SUBSTRING "${path}" 0 ${len} head)
      if(head STREQUAL prefix_${l} AND len GREATER best)
        set(found ${l})
        set(best ${len})
      endif()
    endforeach()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Each layer's files, in its folder and below, less the folders of the
# layers nested in it (kernels/numerics in kernels/).
foreach(l IN LISTS layers)
  file(GLOB_RECURSE files_${l} LIST_DIRECTORIES false
    ${XN_ROOT}/${dir_${l}}/*.h ${XN_ROOT}/${dir_${l}}/*.cpp
    ${XN_ROOT}/${dir_${l}}/*.cu ${XN_ROOT}/${dir_${l}}/*.cuh)
endforeach()
foreach(l IN LISTS layers)
  foreach(inner IN LISTS layers)
    string(FIND "${dir_${inner}}" "${dir_${l}}/" at)
    if(at EQUAL 0)
      list(REMOVE_ITEM files_${l} ${files_${inner}})
    endif()
  endforeach()
endforeach()

set(violations 0)
foreach(l IN LISTS layers)
  foreach(file IN LISTS files_${l})
    file(RELATIVE_PATH rel ${XN_ROOT} ${file})
    # Quoted and angle-bracket includes alike.
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*)[\">].*" "\\1"
             path "${line}")
      # A relative climb ("../core/x.h") names a folder by where the file
      # stands, not by its layer: never allowed.
      if(path MATCHES "(^|/)\\.\\./")
        message(SEND_ERROR "${rel}: layer ${l} includes \"${path}\": include by the "
                           "layer's path, not by ../ (scripts/check_layers.cmake)")
        math(EXPR violations "${violations} + 1")
        continue()
      endif()
      layer_of_include("${path}" target)
      if(target STREQUAL "" OR target IN_LIST may_${l})
        continue()
      endif()
      message(SEND_ERROR "${rel}: layer ${l} includes \"${path}\" (layer ${target}), "
                         "which is not below it (scripts/check_layers.cmake)")
      math(EXPR violations "${violations} + 1")
    endforeach()
  endforeach()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} include(s) run up the layers")
endif()
