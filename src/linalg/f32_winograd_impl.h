// Winograd F(4x4, 3x3) input and output transforms on channel vectors, written once against
// `Vec` (see simd_<isa>.h). With the interpolation points 0, +-1, +-2 and infinity:
//   V = B^T d B (6x6 input tile d), Y = A^T M A (4x4 output tile from the 6x6 product M);
// the weight transform U = G g G^T is done once in conv_winograd.cc.
#pragma once

#include <cstdint>

#include "linalg/f32_conv_kernel.h"

namespace onyx::linalg::ONYX_SIMD_NS {

namespace wino {

// out = B^T in for one 6-vector.
inline void InputTransform6(const Vec* in, Vec* out) {
  const Vec two = Vec::Set1(2.0f), four = Vec::Set1(4.0f), five = Vec::Set1(5.0f);
  const Vec d42 = Vec::Sub(in[4], in[2]);
  const Vec d31 = Vec::Sub(in[3], in[1]);
  out[0] = Vec::Add(Vec::Fma(four, in[0], in[4]), Vec::Mul(Vec::Set1(-5.0f), in[2]));
  out[1] = Vec::Sub(Vec::Add(in[3], in[4]), Vec::Mul(four, Vec::Add(in[1], in[2])));
  out[2] = Vec::Add(Vec::Mul(four, Vec::Sub(in[1], in[2])), Vec::Sub(in[4], in[3]));
  out[3] = Vec::Fma(two, d31, d42);
  out[4] = Vec::Sub(d42, Vec::Mul(two, d31));
  out[5] = Vec::Sub(Vec::Fma(four, in[1], in[5]), Vec::Mul(five, in[3]));
}

// out = A^T in: 6 -> 4.
inline void OutputTransform6(const Vec* in, Vec* out) {
  const Vec s12 = Vec::Add(in[1], in[2]), d12 = Vec::Sub(in[1], in[2]);
  const Vec s34 = Vec::Add(in[3], in[4]), d34 = Vec::Sub(in[3], in[4]);
  out[0] = Vec::Add(Vec::Add(in[0], s12), s34);
  out[1] = Vec::Fma(Vec::Set1(2.0f), d34, d12);
  out[2] = Vec::Fma(Vec::Set1(4.0f), s34, s12);
  out[3] = Vec::Add(Vec::Fma(Vec::Set1(8.0f), d34, d12), in[5]);
}

}  // namespace wino

void WinogradInput(const WinogradInputArgs& a) {
  constexpr int B = Vec::kWidth;
  for (int64_t t = 0; t < a.tiles; ++t) {
    Vec tmp[6][6];  // tmp = B^T d, one column at a time
    for (int j = 0; j < 6; ++j) {
      Vec col[6], out[6];
      for (int r = 0; r < 6; ++r) col[r] = Vec::Load(a.patch + (r * a.patch_w + 4 * t + j) * B);
      wino::InputTransform6(col, out);
      for (int r = 0; r < 6; ++r) tmp[r][j] = out[r];
    }
    float* v = a.v + t * a.v_tile_stride;
    for (int i = 0; i < 6; ++i) {
      Vec out[6];
      wino::InputTransform6(tmp[i], out);
      for (int k = 0; k < 6; ++k) Vec::Store(v + (i * 6 + k) * a.v_xi_stride, out[k]);
    }
  }
}

void WinogradOutput(const WinogradOutputArgs& a) {
  constexpr int B = Vec::kWidth;
  const Vec bias = a.bias != nullptr ? Vec::Load(a.bias) : Vec::Zero();
  for (int64_t t = 0; t < a.tiles; ++t) {
    const float* m = a.m + t * B;
    Vec tmp[4][6];  // tmp = A^T M, one column at a time
    for (int j = 0; j < 6; ++j) {
      Vec col[6], out[4];
      for (int r = 0; r < 6; ++r) col[r] = Vec::Load(m + (r * 6 + j) * a.m_xi_stride);
      wino::OutputTransform6(col, out);
      for (int r = 0; r < 4; ++r) tmp[r][j] = out[r];
    }
    for (int i = 0; i < 4; ++i) {
      Vec out[4];
      wino::OutputTransform6(tmp[i], out);
      float* o = a.out + i * a.out_row_stride + 4 * t * B;
      for (int k = 0; k < 4; ++k) Vec::Store(o + k * B, Vec::Add(out[k], bias));
    }
  }
}

}  // namespace onyx::linalg::ONYX_SIMD_NS
