# check_citations.cmake - the repository reads on its own: papers are cited
# by authors, venue and section, never by the team's internal file numbers,
# and nothing points to documents outside the repository.
# Usage: cmake -DSOURCE_DIR=... -P check_citations.cmake
file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR}
  ${SOURCE_DIR}/include/*.h ${SOURCE_DIR}/src/*.h ${SOURCE_DIR}/src/*.cpp
  ${SOURCE_DIR}/kernels/*.h ${SOURCE_DIR}/kernels/*.cu
  ${SOURCE_DIR}/tests/*.h ${SOURCE_DIR}/tests/*.cpp ${SOURCE_DIR}/tests/*.cmake
  ${SOURCE_DIR}/bench/*.h ${SOURCE_DIR}/bench/*.cpp ${SOURCE_DIR}/bench/*.cu
  ${SOURCE_DIR}/scripts/*.sh ${SOURCE_DIR}/docs/*.md ${SOURCE_DIR}/README.md
  ${SOURCE_DIR}/CMakeLists.txt)
list(REMOVE_ITEM files tests/check_citations.cmake)
set(bad 0)
foreach(f IN LISTS files)
  file(READ ${SOURCE_DIR}/${f} text)
  string(REGEX MATCHALL "[Ss]eeds? 00[0-9][^\n]*|ARCHITECTURE\\.md[^\n]*|\\.\\./shared/[^\n]*"
    hits "${text}")
  list(LENGTH hits n)
  if(n GREATER 0)
    message("${f}: ${n} line(s), the first: ${hits}")
    math(EXPR bad "${bad} + ${n}")
  endif()
endforeach()
list(LENGTH files count)
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} line(s) cite internal file numbers or documents outside the repository")
endif()
message(STATUS "${count} files cite papers by authors and venue only")
