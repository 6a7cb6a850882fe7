# onyx_layer(NAME DIR [DEPS ...]): one OBJECT library per src/ folder. All layers compile with
# src/ and include/ on the include path; tests/unit/layering_test.py enforces which folder may
# include which (DESIGN.md: dependencies point one way).
function(onyx_layer name dir)
  cmake_parse_arguments(ARG "" "" "DEPS;EXTRA_SOURCES" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${dir}/*.cc)
  # Also <dtype>_<op>_<isa>_<tile>.cc microkernels (f32_gemm_avx2_6x16.cc).
  list(FILTER sources EXCLUDE REGEX ".*_avx2\\.cc$|.*_avx512\\.cc$|.*_fma\\.cc$|.*_avx2_[0-9a-z]+\\.cc$|.*_avx512_[0-9a-z]+\\.cc$|.*_amx_[0-9a-z]+\\.cc$")
  if(NOT sources)
    # A layer with nothing in it yet: an interface target keeps the dependency chain intact.
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
    foreach(dep ${ARG_DEPS})
      target_link_libraries(${name} INTERFACE ${dep})
    endforeach()
    return()
  endif()
  add_library(${name} OBJECT ${sources} ${ARG_EXTRA_SOURCES})
  set_property(GLOBAL APPEND PROPERTY ONYX_LAYER_OBJECTS $<TARGET_OBJECTS:${name}>)
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  foreach(dep ${ARG_DEPS})
    target_link_libraries(${name} PUBLIC ${dep})
  endforeach()
  # Per-ISA variants in this folder, in an OBJECT library of their own (${name}_isa) that
  # libonyx links after every layer's portable objects. An inline function or template a variant
  # file instantiates (std::vector<uint8_t>::resize, say) is compiled with that file's AVX-512 /
  # AMX flags, and the linker keeps the first copy it meets for every caller: a layer's variants
  # linked before a later layer's portable code handed an AVX2-only CPU vmovdqu8 (SIGILL in the
  # sanitizer build's int8 convs). Linked last, the portable copy comes first wherever portable
  # code uses one.
  set(isa_sources "")
  # GCC ends AVX code with vzeroupper only under
  # -fexpensive-optimizations (on from -O2): at the sanitize preset's -O1 every kernel left the
  # vector registers' upper halves dirty, and its thread's next SSE code (libm's sinf per element)
  # ran 5-40x slower (docs/threading.md, "Parallel execution under AddressSanitizer").
  set(vzeroupper "$<$<AND:$<CXX_COMPILER_ID:GNU>,$<CONFIG:Debug>>:-fexpensive-optimizations>")
  file(GLOB_RECURSE avx2_sources CONFIGURE_DEPENDS ${dir}/*_avx2.cc ${dir}/*_avx2_*.cc)
  file(GLOB_RECURSE avx512_sources CONFIGURE_DEPENDS ${dir}/*_avx512.cc ${dir}/*_avx512_*.cc)
  if(avx2_sources)
    set_source_files_properties(${avx2_sources} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;${vzeroupper}")
    list(APPEND isa_sources ${avx2_sources})
  endif()
  if(avx512_sources)
    set_source_files_properties(${avx512_sources} PROPERTIES COMPILE_OPTIONS
                                "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mfma;-mf16c;${vzeroupper}")
    # *_avx512_vnni* files add VNNI by flag (clang ignores GCC's `#pragma GCC target`).
    file(GLOB_RECURSE avx512_vnni_sources CONFIGURE_DEPENDS ${dir}/*_avx512_vnni*.cc)
    if(avx512_vnni_sources)
      set_source_files_properties(${avx512_vnni_sources} PROPERTIES COMPILE_OPTIONS
                                  "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mfma;-mf16c;-mavx512vnni;${vzeroupper}")
    endif()
    list(APPEND isa_sources ${avx512_sources})
  endif()
  # *_amx_<tile>.cc: AMX tiles on top of the AVX-512 flags (the chain runs them only where the
  # CPU has AMX and Linux grants the tile state).
  file(GLOB_RECURSE amx_sources CONFIGURE_DEPENDS ${dir}/*_amx_*.cc)
  if(amx_sources)
    set_source_files_properties(${amx_sources} PROPERTIES COMPILE_OPTIONS
                                "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mfma;-mf16c;-mavx512vnni;-mamx-tile;-mamx-int8;-mamx-bf16;${vzeroupper}")
    list(APPEND isa_sources ${amx_sources})
  endif()
  if(isa_sources)
    # A variant whose name the portable glob's filter lets through (q8_gemm_w_avx512_vnni_8x32.cc)
    # compiles here only.
    get_target_property(portable ${name} SOURCES)
    list(REMOVE_ITEM portable ${isa_sources})
    set_target_properties(${name} PROPERTIES SOURCES "${portable}")
    add_library(${name}_isa OBJECT ${isa_sources})
    # The layer's include path and dependencies (an OBJECT library takes usage requirements only).
    target_link_libraries(${name}_isa PUBLIC ${name})
    set_property(GLOBAL APPEND PROPERTY ONYX_ISA_OBJECTS $<TARGET_OBJECTS:${name}_isa>)
  endif()
endfunction()
