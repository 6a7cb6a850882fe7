// The scalar reference for the 2-D transpose of 4-byte elements: 32 x 32 tiles, each element
// copied as bytes (any 4-byte type, bit for bit).
#include <cstring>

#include "linalg/f32_vector_kernels.h"

namespace onyx::linalg {
namespace {

constexpr size_t kTile = 32;

void Transpose2D(const void* in_v, size_t ld_in, void* out_v, size_t ld_out, size_t rows, size_t cols) {
  const char* in = static_cast<const char*>(in_v);
  char* out = static_cast<char*>(out_v);
  for (size_t ib = 0; ib < rows; ib += kTile)
    for (size_t jb = 0; jb < cols; jb += kTile)
      for (size_t i = ib; i < rows && i < ib + kTile; ++i)
        for (size_t j = jb; j < cols && j < jb + kTile; ++j)
          std::memcpy(out + (j * ld_out + i) * 4, in + (i * ld_in + j) * 4, 4);
}

}  // namespace

constexpr X32TransposeKernels kX32TransposeScalar = {"scalar", &Transpose2D};

}  // namespace onyx::linalg
