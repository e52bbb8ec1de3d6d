# libFuzzer targets.
#
# The main build may use gcc, which has no libFuzzer, so every test/fuzz/fuzz_*.c
# is built in a separate CMake project (cmake/fuzz) configured with clang, as an
# ExternalProject whose binary directory is ${CMAKE_BINARY_DIR}/fuzz.
#
# Defines (when a working clang is found):
#   TIDAL_FUZZ_CC          the clang used
#   TIDAL_FUZZ_TARGETS     names of the fuzz executables (fuzz_ptx_parse, ...)
#   TIDAL_FUZZ_BIN_DIR     where they are built
#   target tidal_fuzz      builds them all

include(ExternalProject)

set(TIDAL_FUZZ_SANITIZERS "fuzzer,address,undefined")

# Probe: does <cc> compile and link a libFuzzer target with ASan+UBSan?
function(_tidal_probe_fuzz_cc cc out)
  set(dir "${CMAKE_BINARY_DIR}/CMakeFiles/tidal-fuzz-probe")
  file(MAKE_DIRECTORY "${dir}")
  file(WRITE "${dir}/probe.c"
    "#include <stddef.h>\n#include <stdint.h>\n"
    "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return n > 0 && d[0] == 'x' ? 0 : 0; }\n")
  execute_process(
    COMMAND "${cc}" -fsanitize=${TIDAL_FUZZ_SANITIZERS} -O1 -g "${dir}/probe.c" -o "${dir}/probe"
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc EQUAL 0)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
    string(STRIP "${err}" err)
    message(STATUS "tidal: ${cc} cannot build libFuzzer targets: ${err}")
  endif()
endfunction()

if(NOT DEFINED CACHE{TIDAL_FUZZ_CC})
  set(_cc "")
  foreach(_cand clang-14 clang-22 /usr/lib/llvm-22/bin/clang clang)
    find_program(_tidal_cc_path NAMES ${_cand} NO_CACHE)
    if(_tidal_cc_path)
      _tidal_probe_fuzz_cc("${_tidal_cc_path}" _ok)
      if(_ok)
        set(_cc "${_tidal_cc_path}")
        break()
      endif()
    endif()
    unset(_tidal_cc_path)
  endforeach()
  set(TIDAL_FUZZ_CC "${_cc}" CACHE FILEPATH "clang used for libFuzzer targets (empty: none works)")
endif()

if(NOT TIDAL_FUZZ_CC)
  message(STATUS "tidal: no clang with libFuzzer found; fuzz targets and the fuzz smoke test are disabled")
  return()
endif()
message(STATUS "tidal: libFuzzer targets built with ${TIDAL_FUZZ_CC}")

file(GLOB _tidal_fuzz_sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/test/fuzz/fuzz_*.c")
set(TIDAL_FUZZ_BIN_DIR "${CMAKE_BINARY_DIR}/fuzz")
set(TIDAL_FUZZ_TARGETS "")
set(_byproducts "")
foreach(_src IN LISTS _tidal_fuzz_sources)
  get_filename_component(_name "${_src}" NAME_WE)
  list(APPEND TIDAL_FUZZ_TARGETS "${_name}")
  list(APPEND _byproducts "${TIDAL_FUZZ_BIN_DIR}/${_name}")
endforeach()
if(NOT TIDAL_FUZZ_TARGETS)
  message(STATUS "tidal: no test/fuzz/fuzz_*.c yet; nothing to fuzz")
  return()
endif()

ExternalProject_Add(tidal_fuzz
  SOURCE_DIR "${PROJECT_SOURCE_DIR}/cmake/fuzz"
  BINARY_DIR "${TIDAL_FUZZ_BIN_DIR}"
  PREFIX "${CMAKE_BINARY_DIR}/fuzz-ep"
  CMAKE_GENERATOR Ninja
  CMAKE_ARGS
    "-DCMAKE_C_COMPILER=${TIDAL_FUZZ_CC}"
    "-DCMAKE_BUILD_TYPE=RelWithDebInfo"
    "-DTIDAL_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    "-DTIDAL_FUZZ_SANITIZERS=${TIDAL_FUZZ_SANITIZERS}"
  BUILD_ALWAYS ON          # the sub-build tracks passes/*.c changes itself
  INSTALL_COMMAND ""
  BUILD_BYPRODUCTS ${_byproducts}
  LOG_CONFIGURE ON
  LOG_BUILD ON
  LOG_OUTPUT_ON_FAILURE ON
  EXCLUDE_FROM_ALL OFF)
