// q8_quantize.h's loops compiled for avx512 (q8_quantize_impl.h).
#if defined(__x86_64__)
#include <immintrin.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "linalg/q8_quantize_impl.h"

namespace onyx::linalg {

// Explicit vectors: GCC keeps the generic min/max loop scalar. min_ps / max_ps return their
// second operand when the first is NaN, so NaNs are skipped as in the generic loop; the tail is
// loaded with zeros, which the range includes anyway.
void Q8MinMaxAvx512(const float* x, int64_t n, float* lo, float* hi) {
  __m512 l0 = _mm512_setzero_ps(), l1 = l0, h0 = l0, h1 = l0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
    l0 = _mm512_min_ps(a, l0);
    h0 = _mm512_max_ps(a, h0);
    l1 = _mm512_min_ps(b, l1);
    h1 = _mm512_max_ps(b, h1);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 a = _mm512_maskz_loadu_ps(m, x + i);
    l0 = _mm512_min_ps(a, l0);
    h0 = _mm512_max_ps(a, h0);
  }
  *lo = _mm512_reduce_min_ps(_mm512_min_ps(l0, l1));
  *hi = _mm512_reduce_max_ps(_mm512_max_ps(h0, h1));
}

namespace {

// x / scale without vdivps (16 cycles a vector here, which bound the pass: 128 x 768 floats took
// 20 us, their range 5): q = x * (1 / scale), then one correction q + (x - q scale) / scale with
// the remainder exact by fma, which is the correctly rounded quotient (Markstein's theorem: 1 /
// scale correctly rounded, q within an ulp). Its conditions hold where neither the remainder nor
// the reciprocal leaves the normal range: scales in [2^-60, 2^60] (other scales take the
// division) and quotients of magnitude 2^-30 or more (smaller ones are 0 either way). A
// quotient past the float range leaves a NaN correction: q (infinite) is kept and clamped.
template <typename T>
void QuantizeByReciprocal(const float* x, int64_t n, float scale, T zero_point, T* out) {
  const __m512 s = _mm512_set1_ps(scale), r = _mm512_set1_ps(1.0f / scale);
  const float zpf = zero_point;
  const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<T>::lowest()) - zpf);
  const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<T>::max()) - zpf);
  const __m512i zp_int = _mm512_set1_epi32(zero_point);
  // The pass is bound by its vector uops (ports 0 and 5): NaN handling only where a lane needs it.
  auto codes = [&](__m512 v) {
    const __m512 q = _mm512_mul_ps(v, r);
    const __m512 e = _mm512_fnmadd_ps(q, s, v);
    __m512 y = _mm512_fmadd_ps(e, r, q);
    const __mmask16 nan = _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q);  // q infinite, or v NaN
    if (nan != 0) [[unlikely]] y = _mm512_mask_mov_ps(y, nan, q);
    // As the generic loop: the clamp, where max_ps gives lo for a NaN (a NaN input: the type's
    // lowest code); then rounding half to even, exact on the clamped range.
    y = _mm512_min_ps(_mm512_max_ps(y, lo), hi);
    const __m512i rounded = _mm512_cvt_roundps_epi32(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm512_cvtepi32_epi8(_mm512_add_epi32(rounded, zp_int));
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), codes(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm_mask_storeu_epi8(out + i, m, codes(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

bool ReciprocalIsExact(float scale) { return scale >= 0x1p-60f && scale <= 0x1p60f; }

}  // namespace

void Q8QuantizeU8Avx512(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out) {
  if (ReciprocalIsExact(scale)) QuantizeByReciprocal(x, n, scale, zero_point, out);
  else Q8QuantizeImpl(x, n, scale, zero_point, out);
}

void Q8QuantizeS8Avx512(const float* x, int64_t n, float scale, int8_t zero_point, int8_t* out) {
  if (ReciprocalIsExact(scale)) QuantizeByReciprocal(x, n, scale, zero_point, out);
  else Q8QuantizeImpl(x, n, scale, zero_point, out);
}

void Q8DequantizeU8Avx512(const uint8_t* x, int64_t n, float scale, float zero_point, float* out) {
  Q8DequantizeImpl(x, n, scale, zero_point, out);
}

void Q8DequantizeS8Avx512(const int8_t* x, int64_t n, float scale, float zero_point, float* out) {
  Q8DequantizeImpl(x, n, scale, zero_point, out);
}

namespace {

// QLinearAdd's row in explicit vectors (GCC widened the codes through 16 bits with permutes):
// codes to int32 to float, the same two fmas, the clamp to the type's range, then one rounding
// half to even and a truncating narrow (the clamp keeps it exact). Tails are masked.
template <typename T>
__m512 LoadCodes(const T* p, __mmask16 m) {
  const __m128i b = _mm_maskz_loadu_epi8(m, p);
  return _mm512_cvtepi32_ps(std::is_signed_v<T> ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b));
}

template <typename T>
void Q8AddAvx512Impl(const T* x, float rx, const T* y, int64_t y_step, float ry, float fixed, int64_t n, T* out) {
  if (n <= 0) return;
  const __m512 vrx = _mm512_set1_ps(rx), vry = _mm512_set1_ps(ry), vfixed = _mm512_set1_ps(fixed);
  const __m512 lo = _mm512_set1_ps(std::numeric_limits<T>::lowest()), hi = _mm512_set1_ps(std::numeric_limits<T>::max());
  const __m512 row = _mm512_set1_ps(std::fma(static_cast<float>(y[0]), ry, fixed));  // y_step 0
  auto block = [&](int64_t i, __mmask16 m) {
    const __m512 t = y_step == 0 ? row : _mm512_fmadd_ps(LoadCodes(y + i, m), vry, vfixed);
    __m512 v = _mm512_fmadd_ps(LoadCodes(x + i, m), vrx, t);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    const __m512i q = _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm512_mask_cvtepi32_storeu_epi8(out + i, m, q);
  };
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    block(i, 0xFFFF);
    block(i + 16, 0xFFFF);
  }
  for (; i < n; i += 16) block(i, n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1));
}

// QLinearMul's row: the codes less their zero points multiplied in int32 (exact), to float, the
// same multiplication, clamp and zero point as Q8MulImpl, one rounding half to even.
template <typename T>
__m512i LoadCodesI32(const T* p, __mmask16 m) {
  const __m128i b = _mm_maskz_loadu_epi8(m, p);
  return std::is_signed_v<T> ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}

template <typename T>
void Q8MulAvx512Impl(const T* x, int32_t zx, const T* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                     int64_t n, T* out) {
  if (n <= 0) return;
  const float zcf = static_cast<float>(zc);
  const __m512 vratio = _mm512_set1_ps(ratio), vzc = _mm512_set1_ps(zcf);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<T>::lowest()) - zcf);
  const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<T>::max()) - zcf);
  const __m512i vzx = _mm512_set1_epi32(zx), vzy = _mm512_set1_epi32(zy);
  const __m512i row = _mm512_set1_epi32(static_cast<int32_t>(y[0]) - zy);  // y_step 0
  auto block = [&](int64_t i, __mmask16 m) {
    const __m512i b = y_step == 0 ? row : _mm512_sub_epi32(LoadCodesI32(y + i, m), vzy);
    const __m512i prod = _mm512_mullo_epi32(_mm512_sub_epi32(LoadCodesI32(x + i, m), vzx), b);
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(prod), vratio);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);  // max_ps gives lo for a NaN first operand
    const __m512i q = _mm512_cvt_roundps_epi32(_mm512_add_ps(v, vzc), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm512_mask_cvtepi32_storeu_epi8(out + i, m, q);
  };
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    block(i, 0xFFFF);
    block(i + 16, 0xFFFF);
  }
  for (; i < n; i += 16) block(i, n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1));
}

}  // namespace

void Q8MulU8Avx512(const uint8_t* x, int32_t zx, const uint8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                   int64_t n, uint8_t* out) {
  Q8MulAvx512Impl(x, zx, y, y_step, zy, ratio, zc, n, out);
}

void Q8MulS8Avx512(const int8_t* x, int32_t zx, const int8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                   int64_t n, int8_t* out) {
  Q8MulAvx512Impl(x, zx, y, y_step, zy, ratio, zc, n, out);
}

void Q8AddU8Avx512(const uint8_t* x, float rx, const uint8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                   uint8_t* out) {
  Q8AddAvx512Impl(x, rx, y, y_step, ry, fixed, n, out);
}

void Q8AddS8Avx512(const int8_t* x, float rx, const int8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                   int8_t* out) {
  Q8AddAvx512Impl(x, rx, y, y_step, ry, fixed, n, out);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
