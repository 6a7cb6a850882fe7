// LayerNormRowsCentered's dispatch (layer_norm_centered.h) and the scalar reference, which spells
// out the vector lanes and their reduction order, with std::fma where the header says fma.
#include "linalg/layer_norm_centered.h"

#include <cmath>
#include <string_view>

#include "linalg/f32_gemm_kernel.h"
#include "linalg/no_fp_contract.h"

namespace onyx::linalg {

ONYX_NO_CONTRACT void LayerNormRowsCenteredScalar(const float* x, float* y, int64_t rows, int64_t n,
                                                  const float* scale, const float* bias, float epsilon, float* mean,
                                                  float* inv_std_dev) {
#if defined(__clang__)
#pragma clang fp contract(off)  // the products and sums round where the header says
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    double lanes[4] = {};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int l = 0; l < 4; ++l) lanes[l] += static_cast<double>(xr[i + l]);
    double sum = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
    for (; i < n; ++i) sum += static_cast<double>(xr[i]);
    const float m = static_cast<float>(sum / static_cast<double>(n));

    float v[8] = {};
    i = 0;
    for (; i + 8 <= n; i += 8)
      for (int l = 0; l < 8; ++l) {
        const float d = xr[i + l] - m;
        v[l] = std::fma(d, d, v[l]);
      }
    float var = ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
    for (; i < n; ++i) {
      const float d = xr[i] - m;
      const float square = d * d;
      var += square;
    }
    const float inv = 1.0f / std::sqrt(var / static_cast<float>(n) + epsilon);

    for (i = 0; i < n; ++i) {
      const float normalized = (xr[i] - m) * inv;
      yr[i] = bias != nullptr ? std::fma(normalized, scale[i], bias[i]) : normalized * scale[i];
    }
    if (mean != nullptr) mean[r] = m;
    if (inv_std_dev != nullptr) inv_std_dev[r] = inv;
  }
}

void LayerNormRowsCentered(const float* x, float* y, int64_t rows, int64_t n, const float* scale, const float* bias,
                           float epsilon, float* mean, float* inv_std_dev) {
  auto fn = &LayerNormRowsCenteredScalar;
#if defined(__x86_64__)
  // AVX-512 CPUs run the AVX2 variant too: its lanes are the arithmetic.
  const std::string_view isa = SelectedF32GemmKernel().isa;
  if (isa == "avx512" || isa == "avx2") fn = &LayerNormRowsCenteredAvx2;
#endif
  fn(x, y, rows, n, scale, bias, epsilon, mean, inv_std_dev);
}

}  // namespace onyx::linalg
