// Q8SoftmaxRows's dispatch (q8_softmax.h) and the scalar reference.
#include "linalg/q8_softmax.h"

#include <string_view>

#include "linalg/f32_gemm_kernel.h"

namespace onyx::linalg {

bool Q8SoftmaxRowsScalar(const uint8_t* x, int64_t rows, int64_t D, bool is_signed, const float* exp_table,
                         float y_mult, int32_t zy, float* scratch, uint8_t* y) {
  // Codes as unsigned bytes in their type's order (int8: the top bit flipped).
  const uint8_t flip = is_signed ? 0x80 : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* xr = x + r * D;
    float* er = scratch + r * D;
    uint8_t mx = 0;
    for (int64_t i = 0; i < D; ++i) mx = static_cast<uint8_t>(xr[i] ^ flip) > mx ? xr[i] ^ flip : mx;
    const float* shifted = exp_table + (255 - mx);
    for (int64_t i = 0; i < D; ++i) er[i] = shifted[xr[i] ^ flip];
  }
  // The rows' sums advance side by side (one row's sum waits on each add's latency).
  float sum[kQ8SoftmaxRows] = {};
  for (int64_t i = 0; i < D; ++i)
    for (int64_t r = 0; r < rows; ++r) sum[r] += scratch[r * D + i];
  for (int64_t r = 0; r < rows; ++r)
    if (!(sum[r] > 0.0f)) return false;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds half to even
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  for (int64_t r = 0; r < rows; ++r) {
    const float* er = scratch + r * D;
    uint8_t* yr = y + r * D;
    for (int64_t i = 0; i < D; ++i) {
      const int32_t q = static_cast<int32_t>(((er[i] * y_mult) / sum[r] + kMagic) - kMagic) + zy;
      yr[i] = static_cast<uint8_t>(q < lo ? lo : (q > hi ? hi : q));
    }
  }
  return true;
}

bool Q8SoftmaxRows(const uint8_t* x, int64_t rows, int64_t D, bool is_signed, const float* exp_table, float y_mult,
                   int32_t zy, float* scratch, uint8_t* y) {
  auto fn = &Q8SoftmaxRowsScalar;
#if defined(__x86_64__)
  const std::string_view isa = SelectedF32GemmKernel().isa;
  if (isa == "avx512") fn = &Q8SoftmaxRowsAvx512;
  if (isa == "avx2") fn = &Q8SoftmaxRowsAvx2;
#endif
  return fn(x, rows, D, is_signed, exp_table, y_mult, zy, scratch, y);
}

}  // namespace onyx::linalg
