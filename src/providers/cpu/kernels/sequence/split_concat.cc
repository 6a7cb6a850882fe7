// SplitToSequence and ConcatFromSequence (opset 11): a tensor cut along an axis into a sequence,
// and a sequence of tensors joined along an existing axis or stacked along a new one.
#include "ops/broadcast.h"
#include "providers/cpu/kernels/sequence/tensor_pieces.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

std::vector<int64_t> ReadInts(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i)
    v[i] = t.dtype() == DataType::kInt64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i];
  return v;
}

class SplitToSequence final : public OpKernel {
 public:
  explicit SplitToSequence(const KernelInfo& info)
      : axis_(info.GetIntOr("axis", 0)), keepdims_(info.GetIntOr("keepdims", 1) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() == 0) ctx.Fail("cannot split a scalar");
    const int64_t axis = NormalizeAxis(axis_, static_cast<int64_t>(x.rank()));
    const int64_t dim = x.dim(static_cast<size_t>(axis));
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (const Tensor* split = ctx.input(1)) {
      if (split->dtype() != DataType::kInt32 && split->dtype() != DataType::kInt64)
        ctx.Fail("split must be an int32 or int64 tensor");
      if (split->rank() == 0) {
        const int64_t chunk = ReadInts(*split)[0];
        if (chunk <= 0) ctx.Fail(StrCat("split size must be positive, got ", chunk));
        for (int64_t at = 0; at < dim; at += chunk) sizes.push_back(std::min(chunk, dim - at));
      } else if (split->rank() == 1) {
        sizes = ReadInts(*split);
        int64_t sum = 0;
        for (int64_t s : sizes) {
          if (s < 0) ctx.Fail(StrCat("split sizes must not be negative, got ", s));
          sum += s;
        }
        if (sum != dim) ctx.Fail(StrCat("split sizes add up to ", sum, " but axis ", axis, " has ", dim));
      } else {
        ctx.Fail("split must be a scalar or a 1-D tensor");
      }
    } else {
      sizes.assign(static_cast<size_t>(dim), 1);
      squeeze = !keepdims_;
    }
    std::vector<Tensor> pieces = SplitAlongAxis(x, axis, sizes);
    std::vector<Value> elems;
    elems.reserve(pieces.size());
    for (Tensor& p : pieces) {
      if (squeeze) {
        Shape s = p.shape();
        s.erase(s.begin() + axis);
        p = p.Reshaped(s);
      }
      elems.emplace_back(std::move(p));
    }
    ctx.SetOutput(0, Value::Sequence(std::move(elems), TypeInfo::Tensor(x.dtype())));
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

class ConcatFromSequence final : public OpKernel {
 public:
  explicit ConcatFromSequence(const KernelInfo& info)
      : axis_(info.GetInt("axis")), new_axis_(info.GetIntOr("new_axis", 0)) {
    if (new_axis_ != 0 && new_axis_ != 1) info.Fail(StrCat("new_axis must be 0 or 1, got ", new_axis_));
  }

  void Compute(KernelContext& ctx) const override {
    const Value* seq = ctx.input_value(0);
    if (seq == nullptr || !seq->is_sequence()) ctx.Fail("input must be a sequence of tensors");
    const auto& elems = seq->sequence();
    if (elems.empty()) ctx.Fail("cannot concatenate an empty sequence");
    std::vector<Tensor> pieces;
    pieces.reserve(elems.size());
    for (const Value& v : elems) {
      if (!v.is_tensor()) ctx.Fail(StrCat("sequence element is ", v.Describe(), ", not a tensor"));
      pieces.push_back(v.tensor());
    }
    const int64_t rank = static_cast<int64_t>(pieces[0].rank());
    if (new_axis_) {
      ctx.SetOutput(0, Value(StackAlongAxis(pieces, NormalizeAxis(axis_, rank + 1))));
    } else {
      if (rank == 0) ctx.Fail("cannot concatenate scalars without new_axis=1");
      ctx.SetOutput(0, Value(ConcatAlongAxis(pieces, NormalizeAxis(axis_, rank))));
    }
  }

 private:
  int64_t axis_;
  int64_t new_axis_;
};

ONYX_CPU_KERNEL("SplitToSequence", 11, kOpsetMax, SplitToSequence);
ONYX_CPU_KERNEL("ConcatFromSequence", 11, kOpsetMax, ConcatFromSequence);

}  // namespace
}  // namespace onyx
