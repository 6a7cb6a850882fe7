// LayerNormRowsCentered on AVX2 + FMA (layer_norm_centered.h): the reference's lanes are this
// variant's registers. A row's two sums are chains of dependent adds, so the statistics of up to
// 4 rows run side by side; each row's own order is unchanged.
#include <immintrin.h>

#include <cmath>

#include "linalg/layer_norm_centered.h"

namespace onyx::linalg {

namespace {

// (l0 + l2) + (l1 + l3) of 4 double lanes.
inline double ReduceLanes(__m256d v) {
  const __m128d pair = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)));
}

// ((v0 + v4) + (v2 + v6)) + ((v1 + v5) + (v3 + v7)) of 8 float lanes.
inline float ReduceLanes(__m256 v) {
  __m128 r = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  return _mm_cvtss_f32(_mm_add_ss(r, _mm_movehdup_ps(r)));
}

// The means and inverse deviations of N rows of n values.
template <int N>
void RowStatistics(const float* x, int64_t n, float epsilon, float* mean, float* inv) {
  __m256d sums[N];
  for (int r = 0; r < N; ++r) sums[r] = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int r = 0; r < N; ++r) sums[r] = _mm256_add_pd(sums[r], _mm256_cvtps_pd(_mm_loadu_ps(x + r * n + i)));
  for (int r = 0; r < N; ++r) {
    double sum = ReduceLanes(sums[r]);
    for (int64_t t = i; t < n; ++t) sum += static_cast<double>(x[r * n + t]);
    mean[r] = static_cast<float>(sum / static_cast<double>(n));
  }

  __m256 vars[N], means[N];
  for (int r = 0; r < N; ++r) vars[r] = _mm256_setzero_ps(), means[r] = _mm256_set1_ps(mean[r]);
  i = 0;
  for (; i + 8 <= n; i += 8)
    for (int r = 0; r < N; ++r) {
      const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + r * n + i), means[r]);
      vars[r] = _mm256_fmadd_ps(d, d, vars[r]);
    }
  for (int r = 0; r < N; ++r) {
    float var = ReduceLanes(vars[r]);
    for (int64_t t = i; t < n; ++t) {
      const float d = x[r * n + t] - mean[r];
      var = _mm_cvtss_f32(_mm_add_ss(_mm_set_ss(var), _mm_mul_ss(_mm_set_ss(d), _mm_set_ss(d))));
    }
    // Separate statements: a quotient, a sum, a root and a quotient, each rounded.
    const float per_value = var / static_cast<float>(n);
    const float shifted = per_value + epsilon;
    inv[r] = 1.0f / std::sqrt(shifted);
  }
}

void NormalizeRow(const float* x, float* y, int64_t n, float mean, float inv, const float* scale, const float* bias) {
  const __m256 vm = _mm256_set1_ps(mean), vi = _mm256_set1_ps(inv);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 normalized = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vi);
    const __m256 s = _mm256_loadu_ps(scale + i);
    _mm256_storeu_ps(y + i, bias != nullptr ? _mm256_fmadd_ps(normalized, s, _mm256_loadu_ps(bias + i))
                                            : _mm256_mul_ps(normalized, s));
  }
  for (; i < n; ++i) {
    const __m128 normalized = _mm_mul_ss(_mm_sub_ss(_mm_set_ss(x[i]), _mm_set_ss(mean)), _mm_set_ss(inv));
    const __m128 s = _mm_set_ss(scale[i]);
    y[i] = _mm_cvtss_f32(bias != nullptr ? _mm_fmadd_ss(normalized, s, _mm_set_ss(bias[i]))
                                         : _mm_mul_ss(normalized, s));
  }
}

}  // namespace

void LayerNormRowsCenteredAvx2(const float* x, float* y, int64_t rows, int64_t n, const float* scale,
                               const float* bias, float epsilon, float* mean, float* inv_std_dev) {
  constexpr int kRows = 4;
  for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
    const int64_t block = rows - r0 < kRows ? rows - r0 : kRows;
    float m[kRows], inv[kRows];
    const float* xb = x + r0 * n;
    if (block == kRows) {
      RowStatistics<kRows>(xb, n, epsilon, m, inv);
    } else {
      for (int64_t r = 0; r < block; ++r) RowStatistics<1>(xb + r * n, n, epsilon, m + r, inv + r);
    }
    for (int64_t r = 0; r < block; ++r) {
      NormalizeRow(xb + r * n, y + (r0 + r) * n, n, m[r], inv[r], scale, bias);
      if (mean != nullptr) mean[r0 + r] = m[r];
      if (inv_std_dev != nullptr) inv_std_dev[r0 + r] = inv[r];
    }
  }
}

}  // namespace onyx::linalg
