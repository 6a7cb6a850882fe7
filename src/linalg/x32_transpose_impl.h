// Cache-blocked 2-D transpose of 4-byte elements for one ISA, over its SIMD wrapper S: L x L
// register blocks (S::Transpose) inside kTransposeBlock x kTransposeBlock tiles, so the rows
// and pages a tile touches stay in cache and the TLB. Elements travel as float bit patterns
// through moves and shuffles only (no arithmetic), so any 4-byte type is copied exactly.
// Include only from an ISA file, after its wrapper (internal linkage).
#pragma once

#include <cstddef>

#include "linalg/f32_vector_kernels.h"

namespace onyx::linalg {
namespace {

constexpr size_t kTransposeBlock = 64;

template <class S>
inline void TransposeRegisterBlock(const float* in, size_t ld_in, float* out, size_t ld_out, size_t ni, size_t nj) {
  constexpr size_t L = S::kLanes;
  typename S::V r[L];
  for (size_t k = 0; k < L; ++k)
    r[k] = k >= ni ? S::Zero() : (nj == L ? S::Load(in + k * ld_in) : S::LoadN(in + k * ld_in, nj));
  S::Transpose(r);
  for (size_t k = 0; k < nj; ++k) {
    if (ni == L)
      S::Store(out + k * ld_out, r[k]);
    else
      S::StoreN(out + k * ld_out, r[k], ni);
  }
}

template <class S>
void Transpose2DImpl(const void* in_v, size_t ld_in, void* out_v, size_t ld_out, size_t rows, size_t cols) {
  constexpr size_t L = S::kLanes;
  const float* in = static_cast<const float*>(in_v);
  float* out = static_cast<float*>(out_v);
  for (size_t ib = 0; ib < rows; ib += kTransposeBlock) {
    const size_t ie = ib + kTransposeBlock < rows ? ib + kTransposeBlock : rows;
    for (size_t jb = 0; jb < cols; jb += kTransposeBlock) {
      const size_t je = jb + kTransposeBlock < cols ? jb + kTransposeBlock : cols;
      for (size_t i = ib; i < ie; i += L) {
        const size_t ni = ie - i < L ? ie - i : L;
        for (size_t j = jb; j < je; j += L) {
          const size_t nj = je - j < L ? je - j : L;
          TransposeRegisterBlock<S>(in + i * ld_in + j, ld_in, out + j * ld_out + i, ld_out, ni, nj);
        }
      }
    }
  }
}

template <class S>
constexpr X32TransposeKernels MakeTransposeKernels() {
  return {S::kIsa, &Transpose2DImpl<S>};
}

}  // namespace
}  // namespace onyx::linalg
