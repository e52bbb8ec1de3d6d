# TidalRuntime.cmake — launches of a CMake CUDA target go through libtidal.
#
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
# TIDAL_RUNTIME_DIR: the directory with libtidal.a and libtidal_cudart.a (default: the
# lib/ next to the bin/ of CMAKE_CUDA_COMPILER, i.e. tidal-nvcc's own, as tidal-nvcc's
# --tidal-runtime default).
include_guard(GLOBAL)

# The functions runtime/wrap_cudart.c defines __wrap_ versions of; tidal-nvcc's list
# (driver/tidal-nvcc.c) is the same, and lit (test/lit/nvcc/pkgconfig.test) compares all
# three. tidal's own build makes tidal-cudart.pc from this list.
set(TIDAL_WRAPPED_LAUNCHES cudaLaunchKernel cudaLaunchKernel_ptsz cudaLaunchKernelExC
    cudaLaunchKernelExC_ptsz __cudaLaunchKernel __cudaLaunchKernel_ptsz)

function(tidal_runtime)
  if(NOT TIDAL_RUNTIME_DIR)
    if(NOT CMAKE_CUDA_COMPILER)
      message(FATAL_ERROR "tidal_runtime: enable the CUDA language first, or set TIDAL_RUNTIME_DIR")
    endif()
    get_filename_component(_bin "${CMAKE_CUDA_COMPILER}" DIRECTORY)
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
