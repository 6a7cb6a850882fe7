// x8_transpose.h's Transpose2D8: the portable variant (cache tiles, plain loops) and the choice
// of variant by the ISA the SGEMM runs now, as q8_pool.cc.
#include "linalg/x8_transpose.h"

#include <string>

#include "linalg/gemm.h"

namespace onyx::linalg {

#if defined(__x86_64__)
void Transpose2D8Avx2(const void* in, size_t ld_in, void* out, size_t ld_out, size_t rows, size_t cols);
void Transpose2D8Avx512(const void* in, size_t ld_in, void* out, size_t ld_out, size_t rows, size_t cols);
#endif

namespace {

constexpr size_t kTile = 32;

void Transpose2D8Scalar(const void* in_v, size_t ld_in, void* out_v, size_t ld_out, size_t rows, size_t cols) {
  const auto* in = static_cast<const uint8_t*>(in_v);
  auto* out = static_cast<uint8_t*>(out_v);
  for (size_t ib = 0; ib < rows; ib += kTile)
    for (size_t jb = 0; jb < cols; jb += kTile) {
      const size_t ie = ib + kTile < rows ? ib + kTile : rows, je = jb + kTile < cols ? jb + kTile : cols;
      for (size_t j = jb; j < je; ++j)
        for (size_t i = ib; i < ie; ++i) out[j * ld_out + i] = in[i * ld_in + j];
    }
}

}  // namespace

void Transpose2D8(const void* in, size_t ld_in, void* out, size_t ld_out, size_t rows, size_t cols) {
  auto fn = &Transpose2D8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Transpose2D8Avx512;
  if (isa == "avx2") fn = &Transpose2D8Avx2;
#endif
  fn(in, ld_in, out, ld_out, rows, cols);
}

}  // namespace onyx::linalg
