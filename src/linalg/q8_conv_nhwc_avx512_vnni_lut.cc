// The direct channels-last int8 convolution's tiles that look each output code up in a table
// (Q8ConvNhwc's lut: a per-code op fused after the conv), and the same epilogue for the AMX
// kernel's rows, compiled for AVX-512 VBMI here alone (vpermi2b), so the other tiles keep running
// on VNNI CPUs without it.
#if defined(__x86_64__)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512vbmi"))), apply_to = function)
#else
#pragma GCC target("avx512vbmi")
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "linalg/q8_conv_nhwc_tile.h"

namespace onyx::linalg::q8_nhwc {

TileFn PickTileLut(int nv, bool x_signed, bool out_signed) { return PickTileOf<Post::kLut>(nv, x_signed, out_signed); }

RowsFn PickRowsLut(bool out_signed) { return PickRowsOf<Post::kLut>(out_signed); }

}  // namespace onyx::linalg::q8_nhwc

#if defined(__clang__)
#pragma clang attribute pop
#endif

#endif  // __x86_64__
