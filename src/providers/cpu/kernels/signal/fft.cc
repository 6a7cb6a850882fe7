#include "providers/cpu/kernels/signal/fft.h"

#include <cmath>
#include <numbers>
#include <utility>

namespace onyx::signal {

namespace {
bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }
}  // namespace

FftPlan::FftPlan(int64_t n) : n_(n), pow2_(IsPowerOfTwo(n) || n <= 1) {
  if (n_ <= 1) return;
  if (pow2_) {
    int bits = 0;
    while ((int64_t{1} << bits) < n_) ++bits;
    bitrev_.resize(static_cast<size_t>(n_));
    for (int64_t i = 0; i < n_; ++i) {
      uint32_t r = 0;
      for (int b = 0; b < bits; ++b)
        if (i & (int64_t{1} << b)) r |= 1u << (bits - 1 - b);
      bitrev_[i] = r;
    }
    twiddles_.resize(static_cast<size_t>(n_ / 2));
    for (int64_t k = 0; k < n_ / 2; ++k) {
      const double angle = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n_);
      twiddles_[k] = Complex(std::cos(angle), std::sin(angle));
    }
    return;
  }
  int64_t m = 1;
  while (m < 2 * n_ - 1) m <<= 1;
  inner_ = std::make_unique<FftPlan>(m);
  chirp_.resize(static_cast<size_t>(n_));
  for (int64_t j = 0; j < n_; ++j) {
    // j^2 mod 2n keeps the angle small, so large j lose no precision.
    const int64_t q = (j * j) % (2 * n_);
    const double angle = -std::numbers::pi * static_cast<double>(q) / static_cast<double>(n_);
    chirp_[j] = Complex(std::cos(angle), std::sin(angle));
  }
  chirp_fft_.assign(static_cast<size_t>(m), Complex(0.0, 0.0));
  chirp_fft_[0] = std::conj(chirp_[0]);
  for (int64_t j = 1; j < n_; ++j) chirp_fft_[j] = chirp_fft_[m - j] = std::conj(chirp_[j]);
  std::vector<Complex> scratch;
  inner_->Transform(chirp_fft_.data(), false, scratch);
}

void FftPlan::Radix2(Complex* data) const {
  for (int64_t i = 0; i < n_; ++i)
    if (i < bitrev_[i]) std::swap(data[i], data[bitrev_[i]]);
  for (int64_t len = 2; len <= n_; len <<= 1) {
    const int64_t half = len / 2, step = n_ / len;
    for (int64_t start = 0; start < n_; start += len)
      for (int64_t k = 0; k < half; ++k) {
        const Complex t = twiddles_[k * step] * data[start + k + half];
        data[start + k + half] = data[start + k] - t;
        data[start + k] += t;
      }
  }
}

void FftPlan::Bluestein(Complex* data, std::vector<Complex>& scratch) const {
  const int64_t m = inner_->size();
  // The inner plan is a power of two and needs no scratch, so one buffer serves.
  scratch.assign(static_cast<size_t>(m), Complex(0.0, 0.0));
  for (int64_t j = 0; j < n_; ++j) scratch[j] = data[j] * chirp_[j];
  std::vector<Complex> unused;
  inner_->Transform(scratch.data(), false, unused);
  for (int64_t k = 0; k < m; ++k) scratch[k] *= chirp_fft_[k];
  inner_->Transform(scratch.data(), true, unused);
  const double inv_m = 1.0 / static_cast<double>(m);
  for (int64_t k = 0; k < n_; ++k) data[k] = scratch[k] * inv_m * chirp_[k];
}

void FftPlan::Transform(Complex* data, bool inverse, std::vector<Complex>& scratch) const {
  if (n_ <= 1) return;
  // The inverse is the conjugate of the forward transform of the conjugate.
  if (inverse)
    for (int64_t i = 0; i < n_; ++i) data[i] = std::conj(data[i]);
  if (pow2_)
    Radix2(data);
  else
    Bluestein(data, scratch);
  if (inverse)
    for (int64_t i = 0; i < n_; ++i) data[i] = std::conj(data[i]);
}

}  // namespace onyx::signal
