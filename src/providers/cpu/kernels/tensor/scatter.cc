// Scatter, ScatterElements, ScatterND (reduction none/add/mul, and max/min from opset 18) and
// TensorScatter (KV-cache update). The output starts as a copy of the data; every index is
// checked before anything is written. Updates apply in index order, so with duplicate indices
// and no reduction the last update wins.
#include <algorithm>

#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

using ReducibleTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                uint16_t, uint32_t, uint64_t, bool>;

Reduction ParseReduction(const KernelInfo& info) {
  const std::string r = info.GetStringOr("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (info.opset() >= 16 && r == "add") return Reduction::kAdd;
  if (info.opset() >= 16 && r == "mul") return Reduction::kMul;
  if (info.opset() >= 18 && r == "max") return Reduction::kMax;
  if (info.opset() >= 18 && r == "min") return Reduction::kMin;
  info.Fail(StrCat("reduction '", r, "' is not supported at opset ", info.opset()));
}

template <typename T>
inline void Combine(T& dst, const T& v, Reduction r) {
  if constexpr (std::is_same_v<T, bool>) {
    if (r == Reduction::kAdd || r == Reduction::kMax) dst = dst || v;
    else dst = dst && v;
  } else {
    using C = ComputeType<T>;
    const C a = ToCompute(dst), b = ToCompute(v);
    switch (r) {
      case Reduction::kAdd: dst = FromCompute<T>(static_cast<C>(a + b)); break;
      case Reduction::kMul: dst = FromCompute<T>(static_cast<C>(a * b)); break;
      case Reduction::kMax: dst = FromCompute<T>(std::max(a, b)); break;
      case Reduction::kMin: dst = FromCompute<T>(std::min(a, b)); break;
      case Reduction::kNone: dst = v; break;
    }
  }
}

// Copies data to the output, then applies `count` runs of `block` update elements: run k goes
// from updates + k * block to output + dst[k].
void ApplyUpdates(const KernelContext& ctx, const Tensor& data, const Tensor& updates, Tensor& out,
                  const std::vector<int64_t>& dst, int64_t block, Reduction reduction) {
  if (reduction == Reduction::kNone) {
    DispatchBySize(ctx, data.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      U* o = out.data<U>();
      CopyN(o, data.data<U>(), data.size());
      const U* u = updates.data<U>();
      for (size_t k = 0; k < dst.size(); ++k) CopyN(o + dst[k], u + static_cast<int64_t>(k) * block, block);
    });
    return;
  }
  Dispatch(ReducibleTypes{}, data.dtype(), ctx.node(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    CopyN(o, data.data<T>(), data.size());
    const T* u = updates.data<T>();
    for (size_t k = 0; k < dst.size(); ++k) {
      T* d = o + dst[k];
      const T* s = u + static_cast<int64_t>(k) * block;
      for (int64_t i = 0; i < block; ++i) Combine(d[i], s[i], reduction);
    }
  });
}

// Scatter (deprecated) and ScatterElements.
class ScatterElements final : public OpKernel {
 public:
  explicit ScatterElements(const KernelInfo& info)
      : axis_(info.GetIntOr("axis", 0)), reduction_(info.node().op_type == "Scatter" ? Reduction::kNone : ParseReduction(info)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const Tensor& updates = ctx.required_input(2);
    const auto r = static_cast<int64_t>(data.rank());
    if (r == 0) ctx.Fail("data must have rank 1 or more");
    if (indices.rank() != data.rank()) ctx.Fail("data and indices must have the same rank");
    if (updates.shape() != indices.shape()) ctx.Fail("updates must have the shape of indices");
    if (updates.dtype() != data.dtype()) ctx.Fail("updates and data have different element types");
    const auto axis = static_cast<size_t>(NormalizeAxisOrFail(ctx, axis_, r, "axis"));
    for (size_t d = 0; d < data.rank(); ++d)
      if (d != axis && indices.dim(d) > data.dim(d))
        ctx.Fail(StrCat("indices dim ", d, " (", indices.dim(d), ") exceeds the data's (", data.dim(d), ")"));
    const std::vector<int64_t> idx = NormalizeIndices(ctx, indices, data.dim(axis), "index");
    std::vector<int64_t> strides = Strides(data.shape());
    const int64_t axis_stride = strides[axis];
    strides[axis] = 0;
    const std::vector<int64_t> zero(indices.rank(), 0);
    std::vector<int64_t> dst(idx.size());
    OffsetWalker w(indices.shape(), strides, zero, 0);
    for (size_t k = 0; k < idx.size(); ++k, w.Next()) dst[k] = w.a() + idx[k] * axis_stride;
    Tensor& out = ctx.AllocateOutput(0, data.dtype(), data.shape());
    ApplyUpdates(ctx, data, updates, out, dst, 1, reduction_);
  }

 private:
  int64_t axis_;
  Reduction reduction_;
};

class ScatterND final : public OpKernel {
 public:
  explicit ScatterND(const KernelInfo& info) : reduction_(ParseReduction(info)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const Tensor& updates = ctx.required_input(2);
    if (updates.dtype() != data.dtype()) ctx.Fail("updates and data have different element types");
    if (indices.rank() < 1) ctx.Fail("indices must have rank 1 or more");
    if (indices.dtype() != DataType::kInt64 && indices.dtype() != DataType::kInt32)
      ctx.Fail("indices must be int32 or int64");
    const size_t q = indices.rank();
    const int64_t k = indices.dim(q - 1);
    if (k > static_cast<int64_t>(data.rank()))
      ctx.Fail(StrCat("index tuples of length ", k, " exceed the data rank ", data.rank()));
    Shape expected(indices.shape().begin(), indices.shape().end() - 1);
    expected.insert(expected.end(), data.shape().begin() + k, data.shape().end());
    if (updates.shape() != expected)
      ctx.Fail(StrCat("updates must have shape ", ShapeToString(expected), ", got ", ShapeToString(updates.shape())));
    const int64_t block = Product(data.shape(), static_cast<size_t>(k), data.rank());
    const int64_t tuples = Product(indices.shape(), 0, q - 1);
    const auto strides = Strides(data.shape());
    std::vector<int64_t> dst(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = 0;
      for (int64_t j = 0; j < k; ++j) {
        const auto d = static_cast<size_t>(j);
        const int64_t at = t * k + j;
        int64_t v = indices.dtype() == DataType::kInt64 ? indices.data<int64_t>()[at] : indices.data<int32_t>()[at];
        if (v < -data.dim(d) || v >= data.dim(d))
          ctx.Fail(StrCat("index ", v, " of tuple ", t, " is out of range for data dim ", d, " of size ", data.dim(d)));
        if (v < 0) v += data.dim(d);
        offset += v * strides[d];
      }
      dst[static_cast<size_t>(t)] = offset;
    }
    Tensor& out = ctx.AllocateOutput(0, data.dtype(), data.shape());
    ApplyUpdates(ctx, data, updates, out, dst, block, reduction_);
  }

 private:
  Reduction reduction_;
};

// TensorScatter (opset 24): writes `update` into a copy of `past_cache` along the sequence axis
// at each batch entry's write index, linearly or wrapping around (circular).
class TensorScatter final : public OpKernel {
 public:
  explicit TensorScatter(const KernelInfo& info) : axis_(info.GetIntOr("axis", -2)) {
    const std::string mode = info.GetStringOr("mode", "linear");
    if (mode != "linear" && mode != "circular") info.Fail(StrCat("mode must be linear or circular, got '", mode, "'"));
    circular_ = mode == "circular";
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& past = ctx.required_input(0);
    const Tensor& update = ctx.required_input(1);
    const Tensor* write = ctx.input(2);
    const auto r = static_cast<int64_t>(past.rank());
    if (r < 2) ctx.Fail("past_cache must have rank 2 or more");
    if (update.rank() != past.rank()) ctx.Fail("update and past_cache must have the same rank");
    if (update.dtype() != past.dtype()) ctx.Fail("update and past_cache have different element types");
    const auto axis = static_cast<size_t>(NormalizeAxisOrFail(ctx, axis_, r, "axis"));
    if (axis == 0) ctx.Fail("axis must not be the batch dim 0");
    for (size_t d = 0; d < past.rank(); ++d)
      if (d != axis && update.dim(d) != past.dim(d))
        ctx.Fail(StrCat("update and past_cache differ in dim ", d));
    const int64_t max_len = past.dim(axis);
    const int64_t seq_len = update.dim(axis);
    if (seq_len > max_len) ctx.Fail(StrCat("update's sequence length ", seq_len, " exceeds the cache's ", max_len));
    const int64_t batch = past.dim(0);
    std::vector<int64_t> starts(static_cast<size_t>(batch), 0);
    if (write != nullptr) {
      starts = ReadInts(ctx, *write, "write_indices");
      if (static_cast<int64_t>(starts.size()) != batch)
        ctx.Fail(StrCat("write_indices has ", starts.size(), " entries for batch size ", batch));
      for (int64_t& s : starts) {
        if (circular_) {
          if (max_len > 0) s = ((s % max_len) + max_len) % max_len;
        } else if (s < 0 || s > max_len - seq_len) {
          ctx.Fail(StrCat("write index ", s, " + sequence length ", seq_len, " does not fit the cache length ", max_len));
        }
      }
    }
    const int64_t inner = Product(past.shape(), axis + 1, past.rank());
    const int64_t outer = Product(past.shape(), 0, axis);
    const int64_t per_batch = outer / std::max<int64_t>(batch, 1);
    std::vector<int64_t> dst;
    dst.reserve(static_cast<size_t>(outer * seq_len));
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t start = starts[static_cast<size_t>(o / per_batch)];
      for (int64_t s = 0; s < seq_len; ++s) {
        const int64_t pos = circular_ ? (start + s) % max_len : start + s;
        dst.push_back((o * max_len + pos) * inner);
      }
    }
    Tensor& out = ctx.AllocateOutput(0, past.dtype(), past.shape());
    ApplyUpdates(ctx, past, update, out, dst, inner, Reduction::kNone);
  }

 private:
  int64_t axis_;
  bool circular_ = false;
};

ONYX_CPU_KERNEL("Scatter", 9, 10, ScatterElements);
ONYX_CPU_KERNEL("Scatter", 11, kOpsetMax, ScatterElements);  // deprecated; negative indices
ONYX_CPU_KERNEL("ScatterElements", 11, 15, ScatterElements);
ONYX_CPU_KERNEL("ScatterElements", 16, 17, ScatterElements);  // + reduction add/mul
ONYX_CPU_KERNEL("ScatterElements", 18, kOpsetMax, ScatterElements);  // + max/min
ONYX_CPU_KERNEL("ScatterND", 11, 15, ScatterND);
ONYX_CPU_KERNEL("ScatterND", 16, 17, ScatterND);
ONYX_CPU_KERNEL("ScatterND", 18, kOpsetMax, ScatterND);
ONYX_CPU_KERNEL("TensorScatter", 24, kOpsetMax, TensorScatter);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
