// MelWeightMatrix (opset 17): [dft_length/2 + 1, num_mel_bins] triangular filters spaced
// evenly on the mel scale (mel = 2595 log10(1 + hz/700)) between the two edge frequencies,
// written in output_datatype (float by default).
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

int64_t ScalarInt(KernelContext& ctx, size_t index, const char* name) {
  const Tensor& t = ctx.required_input(index);
  if (t.size() != 1 || t.rank() > 1) ctx.Fail(StrCat("'", name, "' must be a scalar, got ", t.Describe()));
  if (t.dtype() == DataType::kInt64) return t.data<int64_t>()[0];
  if (t.dtype() == DataType::kInt32) return t.data<int32_t>()[0];
  ctx.Fail(StrCat("'", name, "' must be int32 or int64, got ", t.Describe()));
}

double ScalarFloat(KernelContext& ctx, size_t index, const char* name) {
  const Tensor& t = ctx.required_input(index);
  if (t.size() != 1 || t.rank() > 1) ctx.Fail(StrCat("'", name, "' must be a scalar, got ", t.Describe()));
  double v = 0.0;
  Dispatch(FloatTypes{}, t.dtype(), ctx.node(),
           [&](auto tag) { v = static_cast<double>(ToCompute(t.data<typename decltype(tag)::type>()[0])); });
  return v;
}

template <typename T>
T CastDouble(double v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

class MelWeightMatrix final : public OpKernel {
 public:
  explicit MelWeightMatrix(const KernelInfo& info)
      : output_type_(static_cast<DataType>(info.GetIntOr("output_datatype", static_cast<int64_t>(DataType::kFloat)))) {
    if (!TryDispatch(NumericTypes{}, output_type_, [](auto) {}))
      info.Fail(StrCat("output_datatype ", static_cast<int>(output_type_), " is not a numeric type"));
  }

  void Compute(KernelContext& ctx) const override {
    const int64_t mel_bins = ScalarInt(ctx, 0, "num_mel_bins");
    const int64_t dft_length = ScalarInt(ctx, 1, "dft_length");
    const int64_t sample_rate = ScalarInt(ctx, 2, "sample_rate");
    const double lower = ScalarFloat(ctx, 3, "lower_edge_hertz");
    const double upper = ScalarFloat(ctx, 4, "upper_edge_hertz");
    if (mel_bins <= 0 || dft_length <= 0 || sample_rate <= 0)
      ctx.Fail(StrCat("num_mel_bins (", mel_bins, "), dft_length (", dft_length, ") and sample_rate (", sample_rate,
                      ") must be positive"));
    if (!(lower >= 0.0) || !(upper >= lower))
      ctx.Fail(StrCat("edges must satisfy 0 <= lower_edge_hertz (", lower, ") <= upper_edge_hertz (", upper, ")"));
    const int64_t spec_bins = dft_length / 2 + 1;
    // The output is allocated first: its size check (arena cap, onyx.run.max_tensor_bytes) must
    // refuse a huge num_mel_bins or dft_length before the filter edges are computed (a fuzzed
    // num_mel_bins of 2^30 spent 49 s in the loop below and then failed to allocate).
    Tensor& y = ctx.AllocateOutput(0, output_type_, {spec_bins, mel_bins});
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = to_mel(lower);
    const double step = (to_mel(upper) - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> edges(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
      edges[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / sample_rate));
      if (edges[i] < 0 || edges[i] >= spec_bins)
        ctx.Fail(StrCat("upper_edge_hertz ", upper, " maps past the last of ", spec_bins,
                        " spectrogram bins (it must not exceed sample_rate / 2)"));
    }
    Dispatch(NumericTypes{}, output_type_, ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = y.data<T>();
      std::fill(out, out + y.size(), CastDouble<T>(0.0));
      for (int64_t i = 0; i < mel_bins; ++i) {
        const int64_t lo = edges[i], center = edges[i + 1], hi = edges[i + 2];
        if (center == lo) {
          out[center * mel_bins + i] = CastDouble<T>(1.0);
        } else {
          for (int64_t j = lo; j <= center; ++j)
            out[j * mel_bins + i] = CastDouble<T>(static_cast<double>(j - lo) / static_cast<double>(center - lo));
        }
        for (int64_t j = center; j < hi; ++j)
          out[j * mel_bins + i] = CastDouble<T>(static_cast<double>(hi - j) / static_cast<double>(hi - center));
      }
    });
  }

 private:
  DataType output_type_;
};

ONYX_CPU_KERNEL("MelWeightMatrix", 17, kOpsetMax, MelWeightMatrix);

}  // namespace
}  // namespace onyx
