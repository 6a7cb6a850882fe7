// FeatureVectorizer (ai.onnx.ml 1): concatenates its inputs' rows into one float row of
// sum(inputdimensions) columns; an input's row is cut to or zero-padded up to its dimension.
// Inputs are [C] (one row) or [N, ...] (N rows of the flattened trailing axes).
#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

class FeatureVectorizer final : public OpKernel {
 public:
  explicit FeatureVectorizer(const KernelInfo& info) : dims_(info.GetIntsOr("inputdimensions", {})) {
    for (int64_t d : dims_) {
      if (d < 0) info.Fail(StrCat("inputdimensions has a negative value ", d));
      total_ += d;
    }
  }

  void Compute(KernelContext& ctx) const override {
    if (ctx.num_inputs() != dims_.size())
      ctx.Fail(StrCat(ctx.num_inputs(), " inputs but inputdimensions has ", dims_.size(), " values"));
    const Tensor& first = ctx.required_input(0);
    if (first.rank() == 0) ctx.Fail("inputs must have at least one dimension");
    const int64_t n = first.rank() == 1 ? 1 : first.dim(0);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, {n, total_});
    float* py = y.data<float>();
    std::fill(py, py + y.size(), 0.0f);
    int64_t offset = 0;
    for (size_t k = 0; k < dims_.size(); ++k) {
      const Tensor& x = ctx.required_input(k);
      if (x.rank() == 0) ctx.Fail(StrCat("input ", k, " must have at least one dimension"));
      const int64_t rows = x.rank() == 1 ? 1 : x.dim(0);
      if (rows != n) ctx.Fail(StrCat("input ", k, " has ", rows, " rows but input 0 has ", n));
      const int64_t width = rows == 0 ? 0 : x.size() / rows;
      const int64_t copy = std::min(width, dims_[k]);
      const std::vector<float> xf = InputAsFloat(ctx, x);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < copy; ++c) py[r * total_ + offset + c] = xf[r * width + c];
      offset += dims_[k];
    }
  }

 private:
  std::vector<int64_t> dims_;
  int64_t total_ = 0;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "FeatureVectorizer", 1, kOpsetMax, FeatureVectorizer);

}  // namespace
}  // namespace onyx::ml
