// A complex FFT plan of any length: iterative radix-2 for powers of two, Bluestein's chirp-z
// (through a power-of-two plan) otherwise, so every length costs O(n log n). Plans are
// immutable after construction and may be shared by threads; each call brings its scratch.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

namespace onyx::signal {

using Complex = std::complex<double>;

class FftPlan {
 public:
  explicit FftPlan(int64_t n);

  int64_t size() const { return n_; }
  // In place: X[k] = sum_j x[j] e^(-+2 pi i jk/n) (minus forward, plus inverse), unscaled.
  // `scratch` is resized as needed.
  void Transform(Complex* data, bool inverse, std::vector<Complex>& scratch) const;

 private:
  void Radix2(Complex* data) const;  // forward, power-of-two n_
  void Bluestein(Complex* data, std::vector<Complex>& scratch) const;

  int64_t n_ = 0;
  bool pow2_ = true;
  std::vector<uint32_t> bitrev_;   // radix-2: bit-reversal permutation
  std::vector<Complex> twiddles_;  // radix-2: e^(-2 pi i k/n), k < n/2
  // Bluestein: chirp w[j] = e^(-pi i j^2/n) and the FFT of its zero-padded conjugate.
  std::vector<Complex> chirp_;
  std::vector<Complex> chirp_fft_;
  std::unique_ptr<FftPlan> inner_;
};

}  // namespace onyx::signal
