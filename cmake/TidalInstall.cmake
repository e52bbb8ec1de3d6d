# TidalInstall.cmake — what `cmake --install` (and `make install PREFIX=...`) puts under
# the prefix, and the package files other builds use it through (README.md "Install").
# Included from the top CMakeLists.txt once every target exists.
#
#   <bindir>      tidal-opt tidal-nvcc tidal-ptxas tidal-objdump tidald tidalctl tidal-run
#   <libdir>      libtidal.a libtidal.so* libtidal-preload.so libtidal_cudart.a
#   <libdir>/pkgconfig/tidal.pc, tidal-cudart.pc      ${pcfiledir}-relative
#   <libdir>/cmake/tidal/                             find_package(tidal CONFIG)
#   <includedir>  tidal.h tidal_policy.h tidal_server.h tidal_api_begin.h tidal_api_end.h tidal_abi.h tidal_l2.h
#   <datadir>/tidal/cmake/TidalRuntime.cmake          include() + tidal_runtime()
#   <datadir>/tidal/python/                           the Python package (its own rule)
#   <mandir>/man1/*.1                                 from each tool's --help
#   lib/systemd/system/tidald.service                 TIDAL_SYSTEMD_UNITDIR
#
# Nothing installed names the prefix except the systemd unit (systemd wants an absolute
# ExecStart, so it is written at install time, for the prefix installed to): the tools find
# their siblings from their own location, the .pc files from their own directory and the
# CMake package from its own, so `--prefix` at install time and moving the tree later work.
# The build tree gets the same package files (build/lib/pkgconfig, build/lib/cmake/tidal).
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

set(TIDAL_SYSTEMD_UNITDIR "lib/systemd/system" CACHE STRING
    "Where tidald.service is installed (relative: under the prefix; systemd reads it there for /usr and /usr/local)")
# the CMake package, where find_package(tidal) looks under a prefix
set(TIDAL_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tidal")
# The Python package's directory: its install rule is the top CMakeLists.txt's (or
# cmake/TidalPython.cmake's); tidal-run looks there.
set(TIDAL_INSTALL_PYTHONDIR "${CMAKE_INSTALL_DATADIR}/tidal/python")

# Tools find things relative to their own directory: the install's libdir and python/ as
# seen from its bindir (GNUInstallDirs may say lib64 or lib/<multiarch>, not lib).
file(RELATIVE_PATH TIDAL_BIN_TO_LIBDIR "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_LIBDIR}")
file(RELATIVE_PATH TIDAL_BIN_TO_PYTHONDIR "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_DATADIR}/tidal/python")
target_compile_definitions(tidal-nvcc PRIVATE "TIDAL_BIN_TO_LIBDIR=\"${TIDAL_BIN_TO_LIBDIR}\"")
set(_gen "${CMAKE_BINARY_DIR}/install")   # files made for the install only
configure_file(scripts/tidal-run "${_gen}/tidal-run" @ONLY)

# ---------------------------------------------------------------------------
# Programs, libraries, headers
# ---------------------------------------------------------------------------
set(TIDAL_TOOLS tidal-opt tidal-nvcc tidal-ptxas tidal-objdump tidald tidalctl)
# CMAKE_INSTALL_RPATH_USE_LINK_PATH: the installed tidal-opt keeps LLVM's library
# directory (/usr/lib/llvm-22/lib), which the build tree had in its build RPATH only.
set_target_properties(${TIDAL_TOOLS} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${TIDAL_TOOLS} EXPORT tidalTargets RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(PROGRAMS "${_gen}/tidal-run" DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(TARGETS tidal tidal_shared tidal_preload tidal_cudart EXPORT tidalTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(FILES runtime/tidal.h runtime/tidal_policy.h runtime/tidal_server.h runtime/tidal_api_begin.h runtime/tidal_api_end.h abi/tidal_abi.h abi/tidal_l2.h DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

# ---------------------------------------------------------------------------
# pkg-config: tidal.pc (libtidal.so), tidal-cudart.pc (the launch wraps and the static
# libraries, for programs linked by a host compiler). Installed: prefix is
# ${pcfiledir}/../.. (or deeper for lib/<multiarch>); an absolute CMAKE_INSTALL_LIBDIR or
# _INCLUDEDIR is used as it is. Build tree: its lib/ and the source tree's headers.
# ---------------------------------------------------------------------------
list(TRANSFORM TIDAL_WRAPPED_LAUNCHES PREPEND "-Wl,--wrap=" OUTPUT_VARIABLE _tidal_pc_wraps)
list(JOIN _tidal_pc_wraps " " TIDAL_PC_WRAPS)

if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TIDAL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(TIDAL_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH _up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" _up "${_up}")
  set(TIDAL_PC_PREFIX "\${pcfiledir}/${_up}")
  set(TIDAL_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(TIDAL_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(TIDAL_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(TIDAL_PC_CFLAGS "-I\${includedir}")
foreach(_pc tidal tidal-cudart)
  configure_file("runtime/${_pc}.pc.in" "${_gen}/${_pc}.pc" @ONLY)
  install(FILES "${_gen}/${_pc}.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endforeach()

set(TIDAL_PC_PREFIX "\${pcfiledir}/../..")
set(TIDAL_PC_LIBDIR "\${prefix}/lib")
set(TIDAL_PC_INCLUDEDIR "${PROJECT_SOURCE_DIR}/runtime")
set(TIDAL_PC_CFLAGS "-I\${includedir} -I${PROJECT_SOURCE_DIR}/abi")
foreach(_pc tidal tidal-cudart)
  configure_file("runtime/${_pc}.pc.in" "${CMAKE_BINARY_DIR}/lib/pkgconfig/${_pc}.pc" @ONLY)
endforeach()

# ---------------------------------------------------------------------------
# The CMake package: find_package(tidal CONFIG) gives tidal::tidal (libtidal.so),
# tidal::tidal_static, tidal::cudart (the launch wraps + libtidal.a), tidal::preload and
# the tools as imported executables (tidal::tidal-nvcc, ...), and tidal_runtime().
# The build tree exports the same targets (build/lib/cmake/tidal), so a project compiled
# by build/bin/tidal-nvcc finds the package next to it.
# ---------------------------------------------------------------------------
# 0.x: a minor release may change the API, so only the same major.minor is compatible
write_basic_package_version_file("${CMAKE_BINARY_DIR}/lib/cmake/tidal/tidalConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)

set(TIDAL_CONFIG_RUN "${CMAKE_INSTALL_BINDIR}/tidal-run")
set(TIDAL_CONFIG_RUNTIME_MODULE "${CMAKE_INSTALL_DATADIR}/tidal/cmake/TidalRuntime.cmake")
configure_package_config_file(cmake/tidalConfig.cmake.in "${_gen}/tidalConfig.cmake"
  INSTALL_DESTINATION "${TIDAL_INSTALL_CMAKEDIR}"
  PATH_VARS TIDAL_CONFIG_RUN TIDAL_CONFIG_RUNTIME_MODULE)
install(EXPORT tidalTargets NAMESPACE tidal:: DESTINATION "${TIDAL_INSTALL_CMAKEDIR}")
install(FILES "${_gen}/tidalConfig.cmake" "${CMAKE_BINARY_DIR}/lib/cmake/tidal/tidalConfigVersion.cmake"
  DESTINATION "${TIDAL_INSTALL_CMAKEDIR}")
install(FILES cmake/TidalRuntime.cmake DESTINATION "${CMAKE_INSTALL_DATADIR}/tidal/cmake")

set(TIDAL_CONFIG_RUN "${CMAKE_BINARY_DIR}/bin/tidal-run")
set(TIDAL_CONFIG_RUNTIME_MODULE "${PROJECT_SOURCE_DIR}/cmake/TidalRuntime.cmake")
configure_package_config_file(cmake/tidalConfig.cmake.in "${CMAKE_BINARY_DIR}/lib/cmake/tidal/tidalConfig.cmake"
  INSTALL_DESTINATION "lib/cmake/tidal" INSTALL_PREFIX "${CMAKE_BINARY_DIR}"
  PATH_VARS TIDAL_CONFIG_RUN TIDAL_CONFIG_RUNTIME_MODULE)
export(EXPORT tidalTargets NAMESPACE tidal:: FILE "${CMAKE_BINARY_DIR}/lib/cmake/tidal/tidalTargets.cmake")

# ---------------------------------------------------------------------------
# Man pages, generated from the --help texts (scripts/man-from-help.py); the version is the
# project's (not every tool has --version).
# ---------------------------------------------------------------------------
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_man_dir "${CMAKE_BINARY_DIR}/share/man/man1")
file(MAKE_DIRECTORY "${_man_dir}")
# tool | help option | NAME line for a help text without one
set(_man_pages
  "tidal-opt|--help|rewrite PTX or LLVM IR so kernels obey live SM masks"
  "tidal-nvcc|--tidal-help|"
  "tidal-ptxas|--tidal-help|ptxas that applies the tidal rewrite to its PTX input first"
  "tidal-objdump|--help|list the GPU code in binaries and which kernels carry the tidal rewrite"
  "tidald|--help|"
  "tidalctl|--help|"
  "tidal-run|--help|run a command with libtidal preloaded and Triton compiling through tidal-ptxas")
set(_see_also "")
foreach(_p IN LISTS _man_pages)
  string(REGEX REPLACE "\\|.*" "(1)" _ref "${_p}")
  list(APPEND _see_also "${_ref}")
endforeach()
list(JOIN _see_also "," _see_also)
set(_man_files "")
foreach(_p IN LISTS _man_pages)
  string(REPLACE "|" ";" _f "${_p}")
  list(GET _f 0 _tool)
  list(GET _f 1 _opt)
  list(GET _f 2 _summary)
  if(TARGET ${_tool})
    set(_cmd "$<TARGET_FILE:${_tool}>")
    set(_dep ${_tool})
  else()   # tidal-run, a script
    set(_cmd "${CMAKE_BINARY_DIR}/bin/${_tool}")
    set(_dep "${PROJECT_SOURCE_DIR}/scripts/${_tool}")
  endif()
  add_custom_command(OUTPUT "${_man_dir}/${_tool}.1"
    COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/scripts/man-from-help.py"
            --name ${_tool} --version "${PROJECT_VERSION}" "--summary=${_summary}"
            "--help-option=${_opt}" "--see-also=${_see_also}" -o "${_man_dir}/${_tool}.1" -- "${_cmd}"
    DEPENDS ${_dep} "${PROJECT_SOURCE_DIR}/scripts/man-from-help.py"
    COMMENT "man page ${_tool}.1"
    VERBATIM)
  list(APPEND _man_files "${_man_dir}/${_tool}.1")
endforeach()
add_custom_target(tidal_man ALL DEPENDS ${_man_files})
install(FILES ${_man_files} DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")

# ---------------------------------------------------------------------------
# systemd: tidald.service with ExecStart=<the bindir installed to>/tidald. Written at install
# time, since `cmake --install --prefix P` picks the prefix only then.
# ---------------------------------------------------------------------------
install(CODE "set(_tidal_unit_in \"${PROJECT_SOURCE_DIR}/runtime/tidald.service.in\")
set(_tidal_unit_out \"${_gen}/tidald.service\")
set(_tidal_bindir \"${CMAKE_INSTALL_BINDIR}\")")
install(CODE [[
  if(IS_ABSOLUTE "${_tidal_bindir}")
    set(TIDAL_UNIT_BINDIR "${_tidal_bindir}")
  else()
    set(TIDAL_UNIT_BINDIR "${CMAKE_INSTALL_PREFIX}/${_tidal_bindir}")
  endif()
  configure_file("${_tidal_unit_in}" "${_tidal_unit_out}" @ONLY)
]])
install(FILES "${_gen}/tidald.service" DESTINATION "${TIDAL_SYSTEMD_UNITDIR}")

# Everything the install copies, built: `ninja tidal_installed` (make install builds this,
# not the test corpus).
add_custom_target(tidal_installed)
add_dependencies(tidal_installed ${TIDAL_TOOLS} tidal tidal_shared tidal_preload tidal_cudart tidal_man)
