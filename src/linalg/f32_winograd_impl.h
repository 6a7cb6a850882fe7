// Winograd F(4x4, 3x3) input and output transforms on channel vectors, written once against
// `Vec` (see simd_<isa>.h). V = B^T d B (6x6 input tile d), Y = A^T M A (4x4 output tile from
// the 6x6 product M); U = G g G^T once per weight (WinogradWeights, below). The interpolation points
// 0, 1, -1, 1/2, -2 (and infinity) halve the float32 error of the usual 0, +-1, +-2.
#pragma once

#include <cstdint>

#include "linalg/f32_conv_kernel.h"
#include "linalg/f32_conv_math_impl.h"

namespace onyx::linalg::ONYX_SIMD_NS {

namespace wino {

// out = B^T in for one 6-vector.
inline void InputTransform6(const Vec* in, Vec* out) {
  const Vec half = Vec::Set1(0.5f), one5 = Vec::Set1(1.5f), two = Vec::Set1(2.0f), two5 = Vec::Set1(2.5f);
  const Vec d13 = Vec::Sub(in[1], in[3]);   // in1 - in3
  const Vec s4m2 = Vec::Sub(in[4], in[2]);  // in4 - in2
  // out0 = in0 - 1.5 (in1 - in3) - 2 in2 + in4
  out[0] = Vec::Sub(Vec::Add(in[0], in[4]), Vec::Fma(one5, d13, Vec::Mul(two, in[2])));
  // out1 = -in1 + 0.5 in2 + 2.5 in3 + in4 ; out2 = in1 - 2.5 in2 + 0.5 in3 + in4
  out[1] = Vec::Add(Vec::Sub(in[4], in[1]), Vec::Fma(half, in[2], Vec::Mul(two5, in[3])));
  out[2] = Vec::Add(Vec::Add(in[4], in[1]), Vec::Fma(half, in[3], Vec::Mul(Vec::Set1(-2.5f), in[2])));
  // out3 = -2 (in1 - in3) + (in4 - in2) ; out4 = 0.5 (in1 - in3) + (in4 - in2)
  out[3] = Vec::Sub(s4m2, Vec::Mul(two, d13));
  out[4] = Vec::Fma(half, d13, s4m2);
  // out5 = in1 - 1.5 in2 - 2 in3 + 1.5 in4 + in5
  out[5] = Vec::Add(Vec::Add(in[1], in[5]), Vec::Fma(one5, Vec::Sub(in[4], in[2]), Vec::Mul(Vec::Set1(-2.0f), in[3])));
}

// out = A^T in: 6 -> 4.
inline void OutputTransform6(const Vec* in, Vec* out) {
  const Vec s12 = Vec::Add(in[1], in[2]), d12 = Vec::Sub(in[1], in[2]);
  out[0] = Vec::Add(Vec::Add(in[0], s12), Vec::Add(in[3], in[4]));
  out[1] = Vec::Fma(Vec::Set1(0.5f), in[3], Vec::Fma(Vec::Set1(-2.0f), in[4], d12));
  out[2] = Vec::Fma(Vec::Set1(0.25f), in[3], Vec::Fma(Vec::Set1(4.0f), in[4], s12));
  out[3] = Vec::Add(Vec::Fma(Vec::Set1(0.125f), in[3], Vec::Fma(Vec::Set1(-8.0f), in[4], d12)), in[5]);
}

}  // namespace wino

void WinogradInput(const WinogradInputArgs& a) {
  constexpr int B = Vec::kWidth;
  for (int64_t t = 0; t < a.tiles; ++t) {
    Vec tmp[6][6];  // tmp = B^T d, one column at a time
    for (int j = 0; j < 6; ++j) {
      Vec col[6], out[6];
      for (int r = 0; r < 6; ++r) col[r] = Vec::Load(a.rows[r] + (4 * t + j) * B);
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
  const float* residual = a.residual;
  // The epilogue (bias, residual, activation) is applied as each tile is stored, straight into
  // the output: no strip to copy and revisit.
  WithActivation(a.act, [&](auto activate) {
    for (int64_t t = 0; t < a.tiles; ++t) {
      const float* m = a.m + t * B;
      Vec tmp[4][6];  // tmp = A^T M, one column at a time
      for (int j = 0; j < 6; ++j) {
        Vec col[6], out[4];
        for (int r = 0; r < 6; ++r) col[r] = Vec::Load(m + (r * 6 + j) * a.m_xi_stride);
        wino::OutputTransform6(col, out);
        for (int r = 0; r < 4; ++r) tmp[r][j] = out[r];
      }
      const int64_t cols = a.cols - 4 * t < 4 ? a.cols - 4 * t : 4;
      for (int i = 0; i < a.rows; ++i) {
        Vec out[4];
        wino::OutputTransform6(tmp[i], out);
        const int64_t off = i * a.out_row_stride + 4 * t * B;
        for (int k = 0; k < cols; ++k) {
          Vec v = Vec::Add(out[k], bias);
          if (residual != nullptr) v = Vec::Add(v, Vec::Load(residual + off + k * B));
          Vec::Store(a.out + off + k * B, activate(v));
        }
      }
    }
  });
}

// Written as loops over the block's B filters with B fixed, which the compiler runs as double
// vectors; each product and sum is its own rounding (no contraction into fmas), so every ISA
// gives the same floats.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
void WinogradWeights(const WinogradWeightsArgs& a) {
  constexpr int B = Vec::kWidth;
  // G for the points 0, 1, -1, 1/2, -2, infinity.
  constexpr double kG[6][3] = {{1.0, 0.0, 0.0},
                               {1.0 / 3, 1.0 / 3, 1.0 / 3},
                               {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                               {-16.0 / 15, -8.0 / 15, -4.0 / 15},
                               {1.0 / 15, -2.0 / 15, 4.0 / 15},
                               {0.0, 0.0, 1.0}};
  alignas(64) double g[9][B] = {}, gt[6][3][B];  // [tap][filter]; G g: [i][j][filter]
  for (int64_t c = 0; c < a.in_channels; ++c) {
    for (int64_t m = 0; m < a.filters; ++m)
      for (int t = 0; t < 9; ++t) g[t][m] = a.w[(m * a.in_channels + c) * 9 + t];
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 3; ++j)
        for (int m = 0; m < B; ++m) gt[i][j][m] = kG[i][0] * g[j][m] + kG[i][1] * g[3 + j][m] + kG[i][2] * g[6 + j][m];
    float* dst = a.out + (c / B) * B * B + (c % B) * B;
    for (int i = 0; i < 6; ++i)
      for (int k = 0; k < 6; ++k) {
        alignas(64) float line[B];
        for (int m = 0; m < B; ++m)
          line[m] = static_cast<float>(gt[i][0][m] * kG[k][0] + gt[i][1][m] * kG[k][1] + gt[i][2][m] * kG[k][2]);
        float* out = dst + (i * 6 + k) * a.xi_stride;
        for (int64_t m = 0; m < a.filters; ++m) out[m] = line[m];
      }
  }
}
#pragma GCC pop_options

}  // namespace onyx::linalg::ONYX_SIMD_NS
