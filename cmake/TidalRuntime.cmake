# TidalRuntime.cmake — launches of a CMake CUDA target go through libtidal.
#
#   find_package(tidal CONFIG)   # includes this file; or, without the package:
#   include(/path/to/tidal/cmake/TidalRuntime.cmake)   # or <prefix>/share/tidal/cmake/
#   tidal_runtime(my_app [more targets...])
#
# tidal-nvcc links libtidal into the programs it links itself, with the -Xlinker --wrap
# options that send cudaLaunchKernel* and the <<<>>> stubs' __cudaLaunchKernel* through
# it. CMake links CUDA executables with the host compiler instead, so a program built
# with CMAKE_CUDA_COMPILER=tidal-nvcc gets rewritten kernels but no libtidal: they run as
# the originals would (launch case a) unless the process runs under
# LD_PRELOAD=libtidal-preload.so. tidal_runtime() adds the same wrap options and
# libraries to the targets' link.
#
# Where the libraries come from, first found:
#   TIDAL_RUNTIME_DIR   a directory with libtidal.a and libtidal_cudart.a
#   tidal::cudart       find_package(tidal)'s target (it has the wraps and both libraries)
#   the CMake package of the tidal CMAKE_CUDA_COMPILER belongs to (<its bin>/..: an
#   install prefix or a build tree), then the lib/ next to its bin/ (as tidal-nvcc's
#   --tidal-runtime default).
include_guard(GLOBAL)

# The functions runtime/wrap_cudart.c defines __wrap_ versions of; tidal-nvcc's list
# (driver/tidal-nvcc.c) is the same, and lit (test/lit/nvcc/pkgconfig.test) compares all
# three. tidal's own build makes tidal-cudart.pc from this list.
set(TIDAL_WRAPPED_LAUNCHES cudaLaunchKernel cudaLaunchKernel_ptsz cudaLaunchKernelExC
    cudaLaunchKernelExC_ptsz __cudaLaunchKernel __cudaLaunchKernel_ptsz)

function(tidal_runtime)
  if(NOT TIDAL_RUNTIME_DIR AND NOT TARGET tidal::cudart AND CMAKE_CUDA_COMPILER)
    # REALPATH: tidal-nvcc may be reached through a symlink (named nvcc, say)
    get_filename_component(_nvcc "${CMAKE_CUDA_COMPILER}" REALPATH)
    get_filename_component(_prefix "${_nvcc}/../.." ABSOLUTE)
    find_package(tidal CONFIG QUIET PATHS "${_prefix}" NO_DEFAULT_PATH)
  endif()
  if(NOT TIDAL_RUNTIME_DIR AND TARGET tidal::cudart)
    foreach(_t IN LISTS ARGN)
      if(NOT TARGET ${_t})
        message(FATAL_ERROR "tidal_runtime: no target ${_t}")
      endif()
      target_link_libraries(${_t} PRIVATE tidal::cudart)
    endforeach()
    return()
  endif()
  if(NOT TIDAL_RUNTIME_DIR)
    if(NOT CMAKE_CUDA_COMPILER)
      message(FATAL_ERROR "tidal_runtime: enable the CUDA language first, find_package(tidal), or set TIDAL_RUNTIME_DIR")
    endif()
    get_filename_component(_bin "${CMAKE_CUDA_COMPILER}" REALPATH)
    get_filename_component(_bin "${_bin}" DIRECTORY)
    get_filename_component(_dir "${_bin}/../lib" ABSOLUTE)
    set(TIDAL_RUNTIME_DIR "${_dir}" CACHE PATH "Directory with libtidal.a and libtidal_cudart.a")
  endif()
  foreach(_lib libtidal_cudart.a libtidal.a)
    if(NOT EXISTS "${TIDAL_RUNTIME_DIR}/${_lib}")
      message(FATAL_ERROR "tidal_runtime: no ${TIDAL_RUNTIME_DIR}/${_lib} (build tidal's runtime, "
                          "or set TIDAL_RUNTIME_DIR to the directory that has it)")
    endif()
  endforeach()
  find_package(Threads REQUIRED)
  foreach(_t IN LISTS ARGN)
    if(NOT TARGET ${_t})
      message(FATAL_ERROR "tidal_runtime: no target ${_t}")
    endif()
    foreach(_s IN LISTS TIDAL_WRAPPED_LAUNCHES)
      target_link_options(${_t} PRIVATE "LINKER:--wrap=${_s}")
    endforeach()
    # libtidal_cudart.a (the __wrap_ functions) before libtidal.a, both before cudart,
    # which CMake appends last and which defines the __real_ ones
    target_link_libraries(${_t} PRIVATE "${TIDAL_RUNTIME_DIR}/libtidal_cudart.a"
                          "${TIDAL_RUNTIME_DIR}/libtidal.a" ${CMAKE_DL_LIBS} Threads::Threads rt)
  endforeach()
endfunction()
