// Cache-blocked 2-D transpose of 1-byte elements (uint8 / int8 / bool maps), as the byte
// counterpart of transpose.h's Transpose2D32: what moves a quantized image between NCHW and
// NHWC at the ends of a channels-last int8 region. The ISA is the one SgemmIsa reports (scalar,
// AVX2, AVX-512: ForceIsa / ONYX_LINALG_ISA pick one).
#pragma once

#include <cstddef>

namespace onyx::linalg {

// out[j * ld_out + i] = in[i * ld_in + j] for i < rows, j < cols. in and out must not overlap.
void Transpose2D8(const void* in, size_t ld_in, void* out, size_t ld_out, size_t rows, size_t cols);

}  // namespace onyx::linalg
