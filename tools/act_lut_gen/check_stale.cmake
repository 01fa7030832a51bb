# Regenerates the activation table into the build tree (OUT, and the RTL
# package SV_OUT) with GEN and fails when either differs from its checked-in
# file (REF, SV_REF).
# Usage: cmake -DGEN=<act_lut_gen> -DOUT=<file> -DREF=<file>
#              -DSV_OUT=<file> -DSV_REF=<file> -P check_stale.cmake
execute_process(COMMAND ${GEN} --out ${OUT} --sv-out ${SV_OUT} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "act_lut_gen failed (exit ${_rc})")
endif()
foreach(_pair IN ITEMS "${OUT}|${REF}" "${SV_OUT}|${SV_REF}")
  string(REPLACE "|" ";" _pair "${_pair}")
  list(GET _pair 0 _out)
  list(GET _pair 1 _ref)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${_out} ${_ref} RESULT_VARIABLE _diff)
  if(NOT _diff EQUAL 0)
    message(FATAL_ERROR "stale generated file: ${_ref} differs from a fresh generation "
                        "(${_out}); regenerate it with `cmake --build <build> --target act_lut` "
                        "and commit it")
  endif()
  message(STATUS "act_lut_stale: ${_ref} is up to date")
endforeach()
