// The scalar reference for reductions: sums in double, max / min with NaN winning.
#include <cmath>
#include <limits>

#include "linalg/f32_vector_kernels.h"

namespace onyx::linalg {
namespace {

double Square(double v) { return v * v; }
double Plain(double v) { return v; }
double Abs(double v) { return std::fabs(v); }

template <double (*F)(double)>
double Sum(const float* x, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) s += F(x[i]);
  return s;
}

template <double (*F)(double)>
void Accumulate(const float* x, double* acc, size_t n) {
  for (size_t i = 0; i < n; ++i) acc[i] += F(x[i]);
}

template <bool kMax>
float Extremum(const float* x, size_t n) {
  float m = kMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return x[i];
    if (kMax ? x[i] > m : x[i] < m) m = x[i];
  }
  return m;
}

template <bool kMax>
void AccumulateExtremum(const float* x, float* acc, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(acc[i])) continue;
    if (std::isnan(x[i]) || (kMax ? x[i] > acc[i] : x[i] < acc[i])) acc[i] = x[i];
  }
}

}  // namespace

constexpr F32ReduceKernels kF32ReduceScalar = {
    "scalar",
    &Sum<Plain>,
    &Sum<Square>,
    &Sum<Abs>,
    &Extremum<true>,
    &Extremum<false>,
    &Accumulate<Plain>,
    &Accumulate<Square>,
    &Accumulate<Abs>,
    &AccumulateExtremum<true>,
    &AccumulateExtremum<false>,
};

}  // namespace onyx::linalg
