// The scalar reference for layer normalization and RMS normalization rows: statistics in
// double, the affine step in float.
#include <algorithm>
#include <cmath>

#include "linalg/f32_vector_kernels.h"

namespace onyx::linalg {
namespace {

// The mean as hi + lo: x - hi is exact for x near the mean.
void Affine(const float* x, float* y, size_t n, float mean_hi, float mean_lo, float inv, const float* scale,
            const float* bias) {
  for (size_t i = 0; i < n; ++i) {
    const float v = ((x[i] - mean_hi) - mean_lo) * inv;
    y[i] = v * (scale != nullptr ? scale[i] : 1.0f) + (bias != nullptr ? bias[i] : 0.0f);
  }
}

void LayerNormRow(const float* x, float* y, size_t n, const float* scale, const float* bias, float epsilon,
                  float* mean_out, float* inv_out) {
  double sum = 0.0, sum_sq = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double v = x[i];
    sum += v;
    sum_sq += v * v;
  }
  const double mean = sum / static_cast<double>(n);
  const double var = std::max(0.0, sum_sq / static_cast<double>(n) - mean * mean);
  const double inv = 1.0 / std::sqrt(var + static_cast<double>(epsilon));
  const float mean_hi = static_cast<float>(mean);
  Affine(x, y, n, mean_hi, static_cast<float>(mean - mean_hi), static_cast<float>(inv), scale, bias);
  if (mean_out != nullptr) *mean_out = static_cast<float>(mean);
  if (inv_out != nullptr) *inv_out = static_cast<float>(inv);
}

void RmsNormRow(const float* x, float* y, size_t n, const float* scale, float epsilon, float* inv_out) {
  double sum_sq = 0.0;
  for (size_t i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + static_cast<double>(epsilon));
  Affine(x, y, n, 0.0f, 0.0f, static_cast<float>(inv), scale, nullptr);
  if (inv_out != nullptr) *inv_out = static_cast<float>(inv);
}

}  // namespace

constexpr F32NormKernels kF32NormScalar = {"scalar", &LayerNormRow, &RmsNormRow};

}  // namespace onyx::linalg
