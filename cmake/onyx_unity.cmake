# The sanitize preset's faster build (docs/testing.md, "Build time of the sanitizer stage"):
#  - CMAKE_UNITY_BUILD: the engine's layers, the `onyx` command and the soak/fuzz programs
#    compile in batches of CMAKE_UNITY_BUILD_BATCH_SIZE files, each batch one translation unit,
#    so headers and the inline code they instantiate compile once per batch. Per-ISA files
#    (*_avx2.cc, *_avx512*.cc, *_amx_*.cc) carry COMPILE_OPTIONS and so, by CMake's rule, always
#    compile alone with their own flags.
#  - ONYX_TESTS_O0: the unit-test program's own sources at -O0 (the engine it tests keeps the
#    preset's -O1); the sanitizers instrument them just the same.
# The release build sets neither and is unchanged.
option(ONYX_TESTS_O0 "Compile the unit-test program's own sources at -O0 (the sanitize preset)" OFF)

# Files that clash with another file of their batch (file-local helpers of the same name, a
# macro or a `using namespace` reaching later files): they compile alone. The unity_batches
# ctest (scripts/check_unity_batches.py) fails when a new clash appears; add the file it names.
set(ONYX_UNITY_ALONE_SRC
    linalg/f32_gemm.cc linalg/f32_gemm_config.cc linalg/conv_config.cc linalg/f32_norm_scalar.cc
    linalg/q8_gemm_config.cc linalg/q8_quantize_scalar.cc linalg/q8_gemv_scalar.cc
    linalg/q8_pool_scalar.cc linalg/q8_pool_sum_scalar.cc linalg/x8_transpose.cc
    ops/infer/nn_rules.cc ops/infer/tensor_rules.cc ops/shape_values.cc ops/infer/elementwise_rules.cc
    optimizer/passes/attention_shapes.cc optimizer/passes/noop_elimination.cc
    optimizer/passes/gelu_pattern.cc optimizer/passes/layer_norm_pattern.cc
    providers/cpu/kernels/contrib/attention.cc providers/cpu/kernels/contrib/attention_core.cc
    providers/cpu/kernels/attention/attention.cc providers/cpu/kernels/image/resize.cc
    providers/cpu/kernels/contrib/qlinear_pool.cc providers/cpu/kernels/quantization/quantize_linear.cc
    providers/cpu/kernels/quantization/quant_matmul.cc providers/cpu/kernels/signal/window.cc
    providers/cpu/kernels/tensor/constant.cc)
set(ONYX_UNITY_ALONE_SOAK run_limits_test.cc memory_bound_test.cc)

# Called at the end of the top-level CMakeLists.txt, once every target exists.
function(onyx_unity_setup)
  if(NOT CMAKE_UNITY_BUILD)
    return()
  endif()
  list(TRANSFORM ONYX_UNITY_ALONE_SRC PREPEND ${PROJECT_SOURCE_DIR}/src/)
  set_source_files_properties(${ONYX_UNITY_ALONE_SRC} TARGET_DIRECTORY onyx_base
                              PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  if(TARGET onyx_soak_tests)
    list(TRANSFORM ONYX_UNITY_ALONE_SOAK PREPEND ${PROJECT_SOURCE_DIR}/tests/soak/)
    set_source_files_properties(${ONYX_UNITY_ALONE_SOAK} TARGET_DIRECTORY onyx_soak_tests
                                PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
  if(TARGET onyx_unit_tests)
    # Half the unit-test files share helper names with a neighbour: they stay one file each.
    set_target_properties(onyx_unit_tests PROPERTIES UNITY_BUILD OFF)
  endif()
endfunction()
