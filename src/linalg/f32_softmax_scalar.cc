// The scalar reference for softmax and log-softmax rows and column blocks. Sums accumulate in
// double: a serial float sum of a long row drifts by up to n ulp.
#include <cmath>

#include "linalg/f32_vector_kernels.h"

namespace onyx::linalg {
namespace {

float RowMax(const float* x, size_t n) {
  float m = x[0];
  for (size_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

void SoftmaxRow(const float* x, float* y, size_t n) {
  const float m = RowMax(x, n);
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += (y[i] = std::exp(x[i] - m));
  const float inv = static_cast<float>(1.0 / sum);
  for (size_t i = 0; i < n; ++i) y[i] *= inv;
}

void LogSoftmaxRow(const float* x, float* y, size_t n) {
  const float m = RowMax(x, n);
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(x[i] - m);
  const float log_sum = static_cast<float>(std::log(sum));
  for (size_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
}

// One column at a time (strided; this is the reference, not the fast path). scratch is unused.
template <bool kLog>
void Columns(const float* x, float* y, size_t n, size_t inner, float*) {
  for (size_t j = 0; j < inner; ++j) {
    float m = x[j];
    for (size_t i = 1; i < n; ++i) m = x[i * inner + j] > m ? x[i * inner + j] : m;
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
      const float e = std::exp(x[i * inner + j] - m);
      if (!kLog) y[i * inner + j] = e;
      sum += e;
    }
    const float s = static_cast<float>(kLog ? std::log(sum) : 1.0 / sum);
    for (size_t i = 0; i < n; ++i) y[i * inner + j] = kLog ? (x[i * inner + j] - m) - s : y[i * inner + j] * s;
  }
}

}  // namespace

constexpr F32SoftmaxKernels kF32SoftmaxScalar = {"scalar", &SoftmaxRow, &LogSoftmaxRow, &Columns<false>,
                                                 &Columns<true>};

}  // namespace onyx::linalg
