# The CUDA execution provider. ONYX_USE_CUDA (on when the CUDA toolkit and nvcc are found) builds
# src/providers/cuda/device/ and src/providers/cuda/kernels/ (the only code that includes CUDA
# headers) into libonyx, linked to cudart and cuBLASLt; without it those folders are left out and
# the build is the CPU-only one. The device-independent parts of src/providers/cuda (options,
# arena policy, capability) are plain C++ in onyx_providers either way, so they are tested everywhere.
# Device code is built for sm_90 (H100/H200) plus compute_90 PTX, which newer GPUs JIT-compile.
find_package(CUDAToolkit QUIET)
set(_onyx_cuda_default OFF)
if(CUDAToolkit_FOUND AND CUDAToolkit_NVCC_EXECUTABLE)
  set(_onyx_cuda_default ON)
endif()
option(ONYX_USE_CUDA "Build the CUDA execution provider (default: on when the CUDA toolkit is found)" ${_onyx_cuda_default})

if(ONYX_USE_CUDA)
  if(NOT CUDAToolkit_FOUND)
    message(FATAL_ERROR "ONYX_USE_CUDA is ON but no CUDA toolkit was found (set CUDAToolkit_ROOT)")
  endif()
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
  endif()
  enable_language(CUDA)
  message(STATUS "Onyx: CUDA provider on (CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "Onyx: CUDA provider off")
endif()

# Called after onyx_providers is made: takes the CUDA-only files out of it and, with CUDA, builds
# them as their own object library whose objects join libonyx.
function(onyx_cuda_layer)
  set(cuda_dir ${PROJECT_SOURCE_DIR}/src/providers/cuda)
  get_target_property(provider_sources onyx_providers SOURCES)
  list(FILTER provider_sources EXCLUDE REGEX "providers/cuda/(device|kernels)/")
  set_target_properties(onyx_providers PROPERTIES SOURCES "${provider_sources}")
  if(NOT ONYX_USE_CUDA)
    return()
  endif()
  file(GLOB_RECURSE cuda_sources CONFIGURE_DEPENDS ${cuda_dir}/device/*.cc ${cuda_dir}/kernels/*.cc
       ${cuda_dir}/kernels/*.cu)
  add_library(onyx_providers_cuda OBJECT ${cuda_sources})
  target_include_directories(onyx_providers_cuda PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(onyx_providers_cuda PUBLIC onyx_providers CUDA::cudart CUDA::cublasLt)
  set_target_properties(onyx_providers_cuda PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
  # nvcc sees only the kernels' .cu files (plain launchers, no Onyx headers), so it stays quick.
  target_compile_options(onyx_providers_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fPIC --expt-relaxed-constexpr>)
  set_property(GLOBAL APPEND PROPERTY ONYX_LAYER_OBJECTS $<TARGET_OBJECTS:onyx_providers_cuda>)
endfunction()

# Called after libonyx is made: links the CUDA libraries, found again at run time through the
# toolkit's folder (the Python package imports on a machine without a GPU: nothing is asked of the
# driver until a CUDA session is made).
function(onyx_cuda_link target)
  if(NOT ONYX_USE_CUDA)
    return()
  endif()
  target_link_libraries(${target} PRIVATE CUDA::cudart CUDA::cublasLt)
  set_target_properties(${target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endfunction()
