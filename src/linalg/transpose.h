// Cache-blocked transposes of 4-byte elements (float, int32, ...), as graph-free building blocks
// for Transpose kernels. The ISA is the one vector_math.h's ForceVectorIsa selects.
#pragma once

#include <cstddef>

namespace onyx::linalg {

// out[j * ld_out + i] = in[i * ld_in + j] for i < rows, j < cols. in and out must not overlap.
void Transpose2D32(const void* in, size_t ld_in, void* out, size_t ld_out, size_t rows, size_t cols);

// The 4-D permutations of attention heads: [d0, d1, d2, d3] -> [d0, d2, d1, d3] (split heads
// and merge them back) and -> [d0, d2, d3, d1] (keys transposed for Q K^T).
void Transpose0213(const void* in, void* out, size_t d0, size_t d1, size_t d2, size_t d3);
void Transpose0231(const void* in, void* out, size_t d0, size_t d1, size_t d2, size_t d3);

}  // namespace onyx::linalg
