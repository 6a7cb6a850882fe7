// The direct channels-last int8 convolution's AMX kernel (q8_conv_nhwc_amx_32x32.cc). Q8ConvNhwc
// (q8_conv_nhwc.cc, portable) calls it where the int8 selection runs AMX (Linux granted the tile
// state; ONYX_Q8_ISA / ForceQ8Isa naming another kernel keeps the vector kernels) and the shape
// repays the tiles (Q8ConvNhwcAmxWorthIt).
#pragma once

#include <cstdint>

#include "linalg/q8_conv_nhwc.h"

namespace onyx::linalg {

// Whether the tiles beat the AVX-512 VNNI kernel on this shape (measured: q8_conv_nhwc.cc).
bool Q8ConvNhwcAmxWorthIt(const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s);

// Q8ConvNhwc's contract, its arguments already checked there; the codes equal the VNNI kernel's
// bit for bit.
void Q8ConvNhwcAmx(const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s, const void* image, bool x_signed, int32_t x_zero,
                   const Q8Output& out, ThreadPool* pool, const uint8_t* lut, const Q8ConvAddend* add);

}  // namespace onyx::linalg
