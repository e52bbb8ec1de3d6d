# Project-wide compiler flags for C targets (warnings, feature macros, sanitizers).
# Applied through generator expressions so that non-C targets (e.g. CUDA code in
# test/corpus) are left alone.

set(_tidal_c "$<COMPILE_LANGUAGE:C>")

add_compile_options(
  "$<${_tidal_c}:-Wall>"
  "$<${_tidal_c}:-Wextra>"
  "$<${_tidal_c}:-Werror>"
)
# -std=c17 (no GNU extensions) hides POSIX declarations (strdup, getline,
# open_memstream, ...). Expose POSIX.1-2008 everywhere; a source file may still
# `#define _GNU_SOURCE` itself if it needs more.
add_compile_definitions("$<${_tidal_c}:_POSIX_C_SOURCE=200809L>")

if(TIDAL_SANITIZE)
  set(TIDAL_SANITIZE_FLAGS
      -fsanitize=address,undefined
      -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  foreach(_f IN LISTS TIDAL_SANITIZE_FLAGS)
    add_compile_options("$<${_tidal_c}:${_f}>")
    add_link_options("$<$<LINK_LANGUAGE:C>:${_f}>")
  endforeach()
  # Keep optimisation modest so reports stay readable (Debug gives plain -g).
  add_compile_options("$<${_tidal_c}:-O1>")
  message(STATUS "tidal: ASan+UBSan enabled")
endif()
