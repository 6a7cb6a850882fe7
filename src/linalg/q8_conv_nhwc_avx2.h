// The direct channels-last int8 convolution (q8_conv_nhwc.h) for CPUs without AVX-512 VNNI: an
// AVX2 tile (q8_conv_nhwc_avx2.cc; vpdpbusd on 256 bits where the CPU has AVX-VNNI) on the same
// packed weights, bit-identical to the AVX-512 VNNI one.
// Q8ConvNhwc runs it where the int8 GEMM selection picked AVX2 (Q8ConvNhwcAvx2Selected, which
// ONYX_LINALG_ISA=avx2 forces on a wider CPU).
#pragma once

#include <cstdint>

#include "linalg/q8_conv_nhwc.h"

namespace onyx::linalg {

// True where the int8 GEMM chain selected its AVX2 kernel (portable code: q8_conv_nhwc_isa.cc).
bool Q8ConvNhwcAvx2Selected();

// For tests and measurements: false keeps the vpmaddwd tile on a CPU with AVX-VNNI (default true:
// the vpdpbusd tile where the CPU has it).
void Q8ConvNhwcAvx2AllowVnni(bool allowed);
// Whether Q8ConvNhwcAvx2 runs the AVX-VNNI tile now.
bool Q8ConvNhwcAvx2UsesVnni();

// Q8ConvNhwc's contract, its arguments already checked there (lut looked up in memory after each tile; add
// supported).
void Q8ConvNhwcAvx2(const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s, const void* image, bool x_signed,
                    int32_t x_zero, const Q8Output& out, ThreadPool* pool, const uint8_t* lut,
                    const Q8ConvAddend* add);

}  // namespace onyx::linalg
