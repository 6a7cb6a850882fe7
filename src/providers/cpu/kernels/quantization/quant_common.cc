#include "providers/cpu/kernels/quantization/quant_common.h"

#include <algorithm>
#include <cmath>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/cast/element_convert.h"

namespace onyx {

bool QuantIntegerRange(DataType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case DataType::kInt2: *lo = -2, *hi = 1; return true;
    case DataType::kUInt2: *lo = 0, *hi = 3; return true;
    case DataType::kInt4: *lo = -8, *hi = 7; return true;
    case DataType::kUInt4: *lo = 0, *hi = 15; return true;
    case DataType::kInt8: *lo = -128, *hi = 127; return true;
    case DataType::kUInt8: *lo = 0, *hi = 255; return true;
    case DataType::kInt16: *lo = -32768, *hi = 32767; return true;
    case DataType::kUInt16: *lo = 0, *hi = 65535; return true;
    case DataType::kInt32: *lo = INT32_MIN, *hi = INT32_MAX; return true;
    default: return false;
  }
}

std::vector<double> AllAsDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.size()));
  if (!v.empty()) LoadDoubles(t, 0, t.size(), v.data());
  return v;
}

std::vector<int64_t> AllAsInt64s(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.size()));
  if (!v.empty()) LoadInt64s(t, 0, t.size(), v.data());
  return v;
}

void GemmInt32(int64_t m, int64_t n, int64_t k, const int32_t* a, int64_t lda, const int32_t* b, int64_t ldb,
               int32_t* c, int64_t ldc, ThreadPool* pool) {
  ThreadPool::For(pool, m, 2.0 * static_cast<double>(n * k), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      // uint32 arithmetic: the wrap ONNX allows, without signed-overflow UB.
      auto* row = reinterpret_cast<uint32_t*>(c + i * ldc);
      std::fill(row, row + n, 0u);
      for (int64_t p = 0; p < k; ++p) {
        const auto av = static_cast<uint32_t>(a[i * lda + p]);
        if (av == 0) continue;
        const auto* brow = reinterpret_cast<const uint32_t*>(b + p * ldb);
        for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
      }
    }
  });
}

DynamicQuantParams DynamicQuantParamsOf(float lo, float hi) {
  DynamicQuantParams q;
  q.scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  // std::min(255, NaN) is 255 (its first operand), as in ONNX Runtime's clamp.
  q.zero_point = static_cast<uint8_t>(std::nearbyint(std::max(0.0f, std::min(255.0f, 0.0f - lo / q.scale))));
  return q;
}

int64_t RoundAndSaturate(double v, int64_t lo, int64_t hi, int64_t nan_value) {
  if (std::isnan(v)) return std::clamp(nan_value, lo, hi);
  const double r = std::nearbyint(v);  // the default rounding mode: to nearest, ties to even
  if (r <= static_cast<double>(lo)) return lo;
  if (r >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(r);
}

}  // namespace onyx
