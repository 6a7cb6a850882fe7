// Body of x8_transpose.h's Transpose2D8 for one vector ISA, over its wrapper V (kBytes per
// register, unpacks within 128-bit lanes): a block of 16 input rows by kBytes columns goes
// through four rounds of byte unpacks of rows k and k + 8 (each round rotates the 8 bits
// [row | column] of every byte's place left by one, so four rounds swap row and column within
// each 16 x 16 lane), then lane L of register j is output row j + 16 L. Ragged edges take the
// plain loop. Include only from an ISA file (internal linkage).
#pragma once

#include <cstddef>
#include <cstdint>

namespace onyx::linalg {
namespace {

constexpr size_t kX8Block = 64;  // rows and columns of a cache tile

inline void TransposeBytesPlain(const uint8_t* in, size_t ld_in, uint8_t* out, size_t ld_out, size_t rows,
                                size_t cols) {
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) out[j * ld_out + i] = in[i * ld_in + j];
}

template <class V>
inline void TransposeBytesBlock(const uint8_t* in, size_t ld_in, uint8_t* out, size_t ld_out) {
  typename V::T r[16], t[16];
  for (int k = 0; k < 16; ++k) r[k] = V::Load(in + k * ld_in);
  for (int round = 0; round < 4; ++round) {
    for (int k = 0; k < 8; ++k) {
      t[2 * k] = V::UnpackLo(r[k], r[k + 8]);
      t[2 * k + 1] = V::UnpackHi(r[k], r[k + 8]);
    }
    for (int k = 0; k < 16; ++k) r[k] = t[k];
  }
  for (int lane = 0; lane < V::kBytes / 16; ++lane)
    for (int j = 0; j < 16; ++j) V::StoreLane(out + (16 * lane + j) * ld_out, r[j], lane);
}

template <class V>
void Transpose2D8Impl(const void* in_v, size_t ld_in, void* out_v, size_t ld_out, size_t rows, size_t cols) {
  const auto* in = static_cast<const uint8_t*>(in_v);
  auto* out = static_cast<uint8_t*>(out_v);
  constexpr size_t kW = V::kBytes;
  for (size_t ib = 0; ib < rows; ib += kX8Block) {
    const size_t ie = ib + kX8Block < rows ? ib + kX8Block : rows;
    for (size_t jb = 0; jb < cols; jb += kX8Block) {
      const size_t je = jb + kX8Block < cols ? jb + kX8Block : cols;
      size_t i = ib;
      for (; i + 16 <= ie; i += 16) {
        size_t j = jb;
        for (; j + kW <= je; j += kW) TransposeBytesBlock<V>(in + i * ld_in + j, ld_in, out + j * ld_out + i, ld_out);
        TransposeBytesPlain(in + i * ld_in + j, ld_in, out + j * ld_out + i, ld_out, 16, je - j);
      }
      TransposeBytesPlain(in + i * ld_in + jb, ld_in, out + jb * ld_out + i, ld_out, ie - i, je - jb);
    }
  }
}

}  // namespace
}  // namespace onyx::linalg
