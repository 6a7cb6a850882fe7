// The direct channels-last int8 convolution's AVX-512 VNNI kernel (q8_conv_nhwc_avx512_vnni.cc).
// Q8ConvNhwc (q8_conv_nhwc.cc, portable) calls it where Q8GemmWAvailable(): only portable code may
// decide, since a function compiled for AVX-512 may touch its registers before any test it makes.
#pragma once

#include <cstdint>

#include "linalg/q8_conv_nhwc.h"

namespace onyx::linalg {

// Q8ConvNhwc's contract, its arguments already checked there (lut looked up in registers where the CPU
// has VBMI; add supported).
void Q8ConvNhwcAvx512Vnni(const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s, const void* image, bool x_signed,
                          int32_t x_zero, const Q8Output& out, ThreadPool* pool, const uint8_t* lut,
                          const Q8ConvAddend* add);

// Whether the kernels look lut up in their registers (AVX-512 VBMI, and Q8ConvNhwcLutInRegisters
// allows it); else the caller looks each stored code up after the tile, in memory.
bool Q8ConvNhwcLutInTile(const uint8_t* lut);

}  // namespace onyx::linalg
