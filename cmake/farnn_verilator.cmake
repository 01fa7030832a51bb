# Helpers to build Verilator testbenches from the one ordered file list rtl/files.f.
#
# farnn_verilated_tb(NAME <exe> TOP <module> SOURCES <tb .cpp ...>
#                    [PARAMS Name=Value ...] [LIBS <libs...>])
# builds <exe> from the testbench sources and a Verilated model of <module>
# (C++ class V<module>) with the given parameter overrides. Each PARAMS entry
# is passed to Verilator as -G and to the testbench as the macro
# FARNN_PARAM_<Name>, so the C++ side knows the configuration it drives.

set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/rtl/files.f)
file(STRINGS ${CMAKE_SOURCE_DIR}/rtl/files.f _farnn_rtl_lines)
set(FARNN_RTL_FILES "")
foreach(_line IN LISTS _farnn_rtl_lines)
  string(STRIP "${_line}" _line)
  if(_line STREQUAL "" OR _line MATCHES "^(//|#)")
    continue()
  endif()
  list(APPEND FARNN_RTL_FILES ${CMAKE_SOURCE_DIR}/${_line})
endforeach()

set(FARNN_VERILATOR_ARGS
    --assert -Wno-fatal -O3 --x-assign fast --x-initial fast
    ${CMAKE_SOURCE_DIR}/rtl/lint.vlt)

# One copy of the Verilator runtime (verilated.cpp, FST tracing, threads) for
# every model: verilate() would otherwise compile it again into each target.
add_library(farnn_verilator_runtime STATIC
            ${VERILATOR_ROOT}/include/verilated.cpp
            ${VERILATOR_ROOT}/include/verilated_fst_c.cpp
            ${VERILATOR_ROOT}/include/verilated_threads.cpp)
target_include_directories(farnn_verilator_runtime PUBLIC ${VERILATOR_ROOT}/include
                                                          ${VERILATOR_ROOT}/include/vltstd)
target_compile_definitions(farnn_verilator_runtime PUBLIC VM_TRACE=1 VM_TRACE_FST=1
                                                          VM_COVERAGE=0 VM_SC=0)
target_link_libraries(farnn_verilator_runtime PUBLIC z Threads::Threads)

# Replaces the runtime sources verilate() added to `target` by the shared library.
function(_farnn_use_shared_runtime target)
  get_target_property(_srcs ${target} SOURCES)
  list(FILTER _srcs EXCLUDE REGEX "/include/verilated[a-z_]*\\.cpp$")
  set_target_properties(${target} PROPERTIES SOURCES "${_srcs}")
  target_link_libraries(${target} PUBLIC farnn_verilator_runtime)
endfunction()

# Verilator -G arguments for PARAMS (Name=Value ...), and the matching
# FARNN_PARAM_<Name> macros on `target` with the given scope.
function(_farnn_param_args target scope out_var)
  set(_vargs ${FARNN_VERILATOR_ARGS})
  foreach(_p IN LISTS ARGN)
    list(APPEND _vargs -G${_p})
    string(REPLACE "=" ";" _kv "${_p}")
    list(GET _kv 0 _k)
    list(GET _kv 1 _v)
    target_compile_definitions(${target} ${scope} FARNN_PARAM_${_k}=${_v})
  endforeach()
  set(${out_var} ${_vargs} PARENT_SCOPE)
endfunction()

function(farnn_verilated_tb)
  cmake_parse_arguments(A "" "NAME;TOP" "SOURCES;PARAMS;LIBS" ${ARGN})
  add_executable(${A_NAME} ${A_SOURCES})
  _farnn_param_args(${A_NAME} PRIVATE _vargs ${A_PARAMS})
  verilate(${A_NAME} SOURCES ${FARNN_RTL_FILES} TOP_MODULE ${A_TOP} PREFIX V${A_TOP}
           TRACE_FST VERILATOR_ARGS ${_vargs} OPT_FAST -O1 OPT_SLOW -O0 OPT_GLOBAL -O1)
  _farnn_use_shared_runtime(${A_NAME})
  target_link_libraries(${A_NAME} PRIVATE farnn_tb_common ${A_LIBS})
endfunction()

# farnn_verilated_model(NAME <lib> TOP <module> [PARAMS Name=Value ...])
# builds a static library holding one Verilated model (C++ class V<module>), so
# several executables (testbench, demo, benchmark) share one Verilator build.
# The FARNN_PARAM_<Name> macros are exported to whatever links the library.
function(farnn_verilated_model)
  cmake_parse_arguments(A "" "NAME;TOP" "PARAMS" ${ARGN})
  add_library(${A_NAME} STATIC ${CMAKE_SOURCE_DIR}/tb/common/verilated_model_anchor.cpp)
  _farnn_param_args(${A_NAME} PUBLIC _vargs ${A_PARAMS})
  verilate(${A_NAME} SOURCES ${FARNN_RTL_FILES} TOP_MODULE ${A_TOP} PREFIX V${A_TOP}
           TRACE_FST VERILATOR_ARGS ${_vargs} OPT_FAST -O1 OPT_SLOW -O0 OPT_GLOBAL -O1)
  _farnn_use_shared_runtime(${A_NAME})
  target_link_libraries(${A_NAME} PUBLIC farnn_tb_common)
  if(FARNN_SANITIZE)
    # Verilator's generated model is not ours to sanitize, and instrumenting
    # (and debug info for) its trace code costs minutes of every CI run.
    target_compile_options(${A_NAME} PRIVATE -fno-sanitize=all -g0)
  endif()
endfunction()
