# api_compare_output.cmake - runs two programs that print the same matrix
# (the DGEMM and DNGEMM Fortran examples) and fails unless both succeed and
# print the same numbers to within one unit in the last printed digit.
#
#   cmake -DREF_EXE=<dgemm program> -DNEW_EXE=<dngemm program>
#         [-DPERTURB=ON] -P api_compare_output.cmake
#
# PERTURB=ON changes one printed digit of NEW_EXE's output before comparing:
# the comparator's self-test (registered with WILL_FAIL) proves that a single
# wrong entry makes this script fail.
cmake_minimum_required(VERSION 3.24)

foreach(var REF_EXE NEW_EXE)
  if(NOT EXISTS "${${var}}")
    message(FATAL_ERROR "${var} '${${var}}' does not exist (build it first)")
  endif()
endforeach()

function(run_program exe out_var)
  execute_process(COMMAND "${exe}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${exe} failed (${rc}):\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

run_program("${REF_EXE}" ref_out)
run_program("${NEW_EXE}" new_out)
if(PERTURB)
  # Add one to the integer part of the first printed number: a wrong entry
  # far beyond print precision, which the comparison below must reject.
  string(REGEX MATCH "[0-9]+\\.[0-9]+" first "${new_out}")
  string(REGEX REPLACE "\\.[0-9]+$" "" first_int "${first}")
  math(EXPR bumped "${first_int} + 1")
  string(REGEX REPLACE "^[0-9]+" "${bumped}" first_new "${first}")
  string(FIND "${new_out}" "${first}" at)
  string(LENGTH "${first}" len)
  string(SUBSTRING "${new_out}" 0 ${at} head)
  math(EXPR tail_at "${at} + ${len}")
  string(SUBSTRING "${new_out}" ${tail_at} -1 tail)
  set(new_out "${head}${first_new}${tail}")
endif()

set(number_re "-?[0-9]*\\.[0-9]+")
string(REGEX MATCHALL "${number_re}" ref_nums "${ref_out}")
string(REGEX MATCHALL "${number_re}" new_nums "${new_out}")
list(LENGTH ref_nums n_ref)
list(LENGTH new_nums n_new)
set(report "--- ${REF_EXE}:\n${ref_out}--- ${NEW_EXE}:\n${new_out}")
if(n_ref EQUAL 0)
  message(FATAL_ERROR "no numbers printed\n${report}")
endif()
if(NOT n_ref EQUAL n_new)
  message(FATAL_ERROR "${n_ref} numbers vs ${n_new}\n${report}")
endif()

# Same format on both sides, so a number without its decimal point is an
# integer count of last-digit units: compare those exactly, allowing one unit
# for a value that sits on a rounding boundary.
math(EXPR last "${n_ref} - 1")
foreach(i RANGE ${last})
  list(GET ref_nums ${i} a)
  list(GET new_nums ${i} b)
  string(REGEX REPLACE ".*\\." "" a_frac "${a}")
  string(REGEX REPLACE ".*\\." "" b_frac "${b}")
  string(LENGTH "${a_frac}" a_digits)
  string(LENGTH "${b_frac}" b_digits)
  if(NOT a_digits EQUAL b_digits)
    message(FATAL_ERROR "entry ${i}: '${a}' and '${b}' printed differently\n${report}")
  endif()
  foreach(x a b)
    string(REPLACE "." "" ${x}_units "${${x}}")
    # Leading zeros would not change the value, but keep math() unambiguous.
    string(REGEX REPLACE "^(-?)0+([0-9])" "\\1\\2" ${x}_units "${${x}_units}")
  endforeach()
  math(EXPR diff "${a_units} - ${b_units}")
  if(diff GREATER 1 OR diff LESS -1)
    message(FATAL_ERROR "entry ${i}: DGEMM printed ${a}, DNGEMM ${b}\n${report}")
  endif()
endforeach()
message(STATUS "${n_ref} printed entries agree")
