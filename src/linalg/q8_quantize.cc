// q8_quantize.h's variant: the ISA the SGEMM runs now (so ForceIsa / ONYX_LINALG_ISA test each).
#include <algorithm>
#include <string>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/q8_quantize.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {

void Q8MinMaxScalar(const float* x, int64_t n, float* lo, float* hi);
void Q8QuantizeU8Scalar(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out);
void Q8QuantizeS8Scalar(const float* x, int64_t n, float scale, int8_t zero_point, int8_t* out);
void Q8DequantizeU8Scalar(const uint8_t* x, int64_t n, float scale, float zero_point, float* out);
void Q8DequantizeS8Scalar(const int8_t* x, int64_t n, float scale, float zero_point, float* out);
void Q8AddU8Scalar(const uint8_t* x, float rx, const uint8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                   uint8_t* out);
void Q8AddS8Scalar(const int8_t* x, float rx, const int8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                   int8_t* out);
void Q8MulU8Scalar(const uint8_t* x, int32_t zx, const uint8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                   int64_t n, uint8_t* out);
void Q8MulS8Scalar(const int8_t* x, int32_t zx, const int8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                   int64_t n, int8_t* out);
#if defined(__x86_64__)
void Q8MulU8Avx2(const uint8_t* x, int32_t zx, const uint8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                 int64_t n, uint8_t* out);
void Q8MulS8Avx2(const int8_t* x, int32_t zx, const int8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                 int64_t n, int8_t* out);
void Q8MulU8Avx512(const uint8_t* x, int32_t zx, const uint8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                   int64_t n, uint8_t* out);
void Q8MulS8Avx512(const int8_t* x, int32_t zx, const int8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                   int64_t n, int8_t* out);
void Q8AddU8Avx2(const uint8_t* x, float rx, const uint8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                 uint8_t* out);
void Q8AddS8Avx2(const int8_t* x, float rx, const int8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                 int8_t* out);
void Q8AddU8Avx512(const uint8_t* x, float rx, const uint8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                   uint8_t* out);
void Q8AddS8Avx512(const int8_t* x, float rx, const int8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                   int8_t* out);
void Q8MinMaxAvx2(const float* x, int64_t n, float* lo, float* hi);
void Q8QuantizeU8Avx2(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out);
void Q8QuantizeS8Avx2(const float* x, int64_t n, float scale, int8_t zero_point, int8_t* out);
void Q8DequantizeU8Avx2(const uint8_t* x, int64_t n, float scale, float zero_point, float* out);
void Q8DequantizeS8Avx2(const int8_t* x, int64_t n, float scale, float zero_point, float* out);
void Q8MinMaxAvx512(const float* x, int64_t n, float* lo, float* hi);
void Q8QuantizeU8Avx512(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out);
void Q8QuantizeS8Avx512(const float* x, int64_t n, float scale, int8_t zero_point, int8_t* out);
void Q8DequantizeU8Avx512(const uint8_t* x, int64_t n, float scale, float zero_point, float* out);
void Q8DequantizeS8Avx512(const int8_t* x, int64_t n, float scale, float zero_point, float* out);
#endif

Q8MinMaxFn Q8MinMaxKernel() {
  Q8MinMaxFn fn = &Q8MinMaxScalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8MinMaxAvx512;
  if (isa == "avx2") fn = &Q8MinMaxAvx2;
#endif
  return fn;
}

void Q8MinMax(const float* x, int64_t n, float* lo, float* hi) { Q8MinMaxKernel()(x, n, lo, hi); }

void Q8MinMax(const float* x, int64_t n, float* lo, float* hi, ThreadPool* pool) {
  constexpr int64_t kChunk = 16384;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  if (pool == nullptr || chunks <= 1) return Q8MinMax(x, n, lo, hi);
  std::vector<float> los(static_cast<size_t>(chunks), 0.0f), his(static_cast<size_t>(chunks), 0.0f);
  // About a cycle an element (a vector min and max per 16).
  ThreadPool::For(pool, chunks, static_cast<double>(kChunk), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      Q8MinMax(x + c * kChunk, std::min(kChunk, n - c * kChunk), &los[static_cast<size_t>(c)],
               &his[static_cast<size_t>(c)]);
  });
  *lo = *std::min_element(los.begin(), los.end());
  *hi = *std::max_element(his.begin(), his.end());
}

Q8QuantizeU8Fn Q8QuantizeU8Kernel() {
  Q8QuantizeU8Fn fn = &Q8QuantizeU8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8QuantizeU8Avx512;
  if (isa == "avx2") fn = &Q8QuantizeU8Avx2;
#endif
  return fn;
}

void Q8QuantizeU8(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out) {
  Q8QuantizeU8Kernel()(x, n, scale, zero_point, out);
}

void Q8QuantizeS8(const float* x, int64_t n, float scale, int8_t zero_point, int8_t* out) {
  auto fn = &Q8QuantizeS8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8QuantizeS8Avx512;
  if (isa == "avx2") fn = &Q8QuantizeS8Avx2;
#endif
  fn(x, n, scale, zero_point, out);
}

void Q8DequantizeU8(const uint8_t* x, int64_t n, float scale, float zero_point, float* out) {
  auto fn = &Q8DequantizeU8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8DequantizeU8Avx512;
  if (isa == "avx2") fn = &Q8DequantizeU8Avx2;
#endif
  fn(x, n, scale, zero_point, out);
}

void Q8DequantizeS8(const int8_t* x, int64_t n, float scale, float zero_point, float* out) {
  auto fn = &Q8DequantizeS8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8DequantizeS8Avx512;
  if (isa == "avx2") fn = &Q8DequantizeS8Avx2;
#endif
  fn(x, n, scale, zero_point, out);
}

void Q8AddU8(const uint8_t* x, float rx, const uint8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
             uint8_t* out) {
  auto fn = &Q8AddU8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8AddU8Avx512;
  if (isa == "avx2") fn = &Q8AddU8Avx2;
#endif
  fn(x, rx, y, y_step, ry, fixed, n, out);
}

void Q8AddS8(const int8_t* x, float rx, const int8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
             int8_t* out) {
  auto fn = &Q8AddS8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8AddS8Avx512;
  if (isa == "avx2") fn = &Q8AddS8Avx2;
#endif
  fn(x, rx, y, y_step, ry, fixed, n, out);
}

void Q8MulU8(const uint8_t* x, int32_t zx, const uint8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc, int64_t n,
             uint8_t* out) {
  auto fn = &Q8MulU8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8MulU8Avx512;
  if (isa == "avx2") fn = &Q8MulU8Avx2;
#endif
  fn(x, zx, y, y_step, zy, ratio, zc, n, out);
}

void Q8MulS8(const int8_t* x, int32_t zx, const int8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc, int64_t n,
             int8_t* out) {
  auto fn = &Q8MulS8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8MulS8Avx512;
  if (isa == "avx2") fn = &Q8MulS8Avx2;
#endif
  fn(x, zx, y, y_step, zy, ratio, zc, n, out);
}

}  // namespace onyx::linalg
