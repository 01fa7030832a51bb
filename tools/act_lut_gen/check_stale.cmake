# Regenerates the activation table into the build tree (OUT) with GEN and
# fails when it differs from the checked-in file REF.
# Usage: cmake -DGEN=<act_lut_gen> -DOUT=<file> -DREF=<file> -P check_stale.cmake
execute_process(COMMAND ${GEN} --out ${OUT} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "act_lut_gen failed (exit ${_rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${REF} RESULT_VARIABLE _diff)
if(NOT _diff EQUAL 0)
  message(FATAL_ERROR "stale generated file: ${REF} differs from a fresh generation "
                      "(${OUT}); regenerate it with `cmake --build <build> --target act_lut` "
                      "and commit it")
endif()
message(STATUS "act_lut_stale: ${REF} is up to date")
