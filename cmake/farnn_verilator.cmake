# Helpers to build Verilator testbenches from the one ordered file list rtl/files.f.
#
# farnn_verilated_tb(NAME <exe> TOP <module> SOURCES <tb .cpp ...>
#                    [PARAMS Name=Value ...] [LIBS <libs...>])
# builds <exe> from the testbench sources and a Verilated model of <module>
# (C++ class V<module>) with the given parameter overrides. Each PARAMS entry
# is passed to Verilator as -G and to the testbench as the macro
# FARNN_PARAM_<Name>, so the C++ side knows the configuration it drives.

file(STRINGS ${CMAKE_SOURCE_DIR}/rtl/files.f _farnn_rtl_lines)
set(FARNN_RTL_FILES "")
foreach(_line IN LISTS _farnn_rtl_lines)
  string(STRIP "${_line}" _line)
  if(_line STREQUAL "" OR _line MATCHES "^(//|#)")
    continue()
  endif()
  list(APPEND FARNN_RTL_FILES ${CMAKE_SOURCE_DIR}/${_line})
endforeach()

set(FARNN_ACT_LUT_MEM ${CMAKE_SOURCE_DIR}/rtl/act/act_sigmoid_lut.mem)
set(FARNN_VERILATOR_ARGS
    --assert -Wno-fatal -O3 --x-assign fast --x-initial fast
    "+define+FARNN_ACT_LUT_MEM=\"${FARNN_ACT_LUT_MEM}\""
    ${CMAKE_SOURCE_DIR}/rtl/lint.vlt)

function(farnn_verilated_tb)
  cmake_parse_arguments(A "" "NAME;TOP" "SOURCES;PARAMS;LIBS" ${ARGN})
  add_executable(${A_NAME} ${A_SOURCES})
  set(_vargs ${FARNN_VERILATOR_ARGS})
  foreach(_p IN LISTS A_PARAMS)
    list(APPEND _vargs -G${_p})
    string(REPLACE "=" ";" _kv "${_p}")
    list(GET _kv 0 _k)
    list(GET _kv 1 _v)
    target_compile_definitions(${A_NAME} PRIVATE FARNN_PARAM_${_k}=${_v})
  endforeach()
  verilate(${A_NAME} SOURCES ${FARNN_RTL_FILES} TOP_MODULE ${A_TOP} PREFIX V${A_TOP}
           TRACE_FST VERILATOR_ARGS ${_vargs} OPT_FAST -O1 OPT_SLOW -O0 OPT_GLOBAL -O1)
  target_link_libraries(${A_NAME} PRIVATE farnn_tb_common ${A_LIBS})
endfunction()
