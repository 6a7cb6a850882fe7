# The CUDA execution provider. ONYX_USE_CUDA (on when the CUDA toolkit and nvcc are found) builds
# src/providers/cuda/device/ and src/providers/cuda/kernels/ (the only code that includes CUDA
# headers) into libonyx_provider_cuda.so, linked to cudart and cuBLASLt; without it those folders are left out and
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

# Called after onyx_providers is made: takes the CUDA-only files out of it (with or without CUDA,
# they never join libonyx).
function(onyx_cuda_layer)
  get_target_property(provider_sources onyx_providers SOURCES)
  list(FILTER provider_sources EXCLUDE REGEX "providers/cuda/(device|kernels)/")
  set_target_properties(onyx_providers PROPERTIES SOURCES "${provider_sources}")
endfunction()

# Called after libonyx is made: with CUDA, the device code and kernels become their own library,
# libonyx_provider_cuda.so beside libonyx, linked to libonyx, cudart and cuBLASLt. libonyx loads
# it when a session first asks for CUDA (providers/provider.cc), so a CPU-only process never maps
# the CUDA libraries (cuBLASLt alone costs ~0.3 s and ~150 MB of resident memory at start-up).
function(onyx_cuda_module libonyx)
  if(NOT ONYX_USE_CUDA)
    return()
  endif()
  set(cuda_dir ${PROJECT_SOURCE_DIR}/src/providers/cuda)
  file(GLOB_RECURSE cuda_sources CONFIGURE_DEPENDS ${cuda_dir}/device/*.cc ${cuda_dir}/kernels/*.cc
       ${cuda_dir}/kernels/*.cu)
  add_library(onyx_provider_cuda SHARED ${cuda_sources})
  target_include_directories(onyx_provider_cuda PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(onyx_provider_cuda PRIVATE ${libonyx} CUDA::cudart CUDA::cublasLt)
  set_target_properties(onyx_provider_cuda PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
                        INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)
  # nvcc sees only the kernels' .cu files (plain launchers, no Onyx headers), so it stays quick.
  target_compile_options(onyx_provider_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fPIC --expt-relaxed-constexpr>)
endfunction()
