// Expand and Tile. Both are a broadcast copy: Tile of [d0, d1] by [r0, r1] is the input
// broadcast to [r0, d0, r1, d1] (the repeat dims have input stride 0). Dims are merged and the
// innermost one becomes a memcpy (or a fill where it is broadcast), one per output row.
#include <algorithm>

#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

// Fills y (whose element count is the product of dims) from x, where output dim d reads x
// with element stride in_strides[d] (0 where x is repeated).
void BroadcastCopy(const KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& in_strides, Tensor& y) {
  if (y.size() == 0) return;
  std::vector<int64_t> md, ms;  // merged dims and input strides
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!md.empty() && ((ms.back() == 0 && in_strides[d] == 0) || (in_strides[d] != 0 && ms.back() == in_strides[d] * dims[d]))) {
      md.back() *= dims[d];
      ms.back() = in_strides[d];
    } else {
      md.push_back(dims[d]);
      ms.push_back(in_strides[d]);
    }
  }
  if (md.empty()) {
    md.push_back(1);
    ms.push_back(1);
  }
  const int64_t row = md.back();
  const bool fill = ms.back() == 0;
  md.pop_back();
  ms.pop_back();
  const std::vector<int64_t> out_strides = [&] {
    std::vector<int64_t> s(md.size());
    int64_t stride = row;
    for (size_t d = md.size(); d-- > 0;) {
      s[d] = stride;
      stride *= md[d];
    }
    return s;
  }();
  const int64_t rows = y.size() / row;
  DispatchBySize(ctx, x.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* in = x.data<U>();
    U* out = y.data<U>();
    ThreadPool::For(ctx.thread_pool(), rows, 4.0 + static_cast<double>(row * static_cast<int64_t>(sizeof(U))) / 16.0,
                    [&](int64_t begin, int64_t end) {
                      OffsetWalker w(md, ms, out_strides, begin);
                      for (int64_t i = begin; i < end; ++i, w.Next()) {
                        if (fill) FillN(out + w.b(), in[w.a()], row);
                        else CopyN(out + w.b(), in + w.a(), row);
                      }
                    });
  });
}

class Expand final : public OpKernel {
 public:
  explicit Expand(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::vector<int64_t> shape = ReadInts(ctx, ctx.required_input(1), "shape");
    for (int64_t d : shape)
      if (d < 0) ctx.Fail(StrCat("shape [", StrJoin(shape), "] has a negative dim"));
    // Bidirectional broadcast: a 1 in `shape` keeps the input's dim.
    const size_t rank = std::max(x.rank(), shape.size());
    Shape out(rank);
    for (size_t i = 0; i < rank; ++i) {
      const int64_t a = i + x.rank() >= rank ? x.dim(i + x.rank() - rank) : 1;
      const int64_t b = i + shape.size() >= rank ? shape[i + shape.size() - rank] : 1;
      if (a != b && a != 1 && b != 1)
        ctx.Fail(StrCat("shape [", StrJoin(shape), "] does not broadcast with the input's ", ShapeToString(x.shape())));
      out[i] = a == 1 ? b : a;
    }
    if (out == x.shape()) {
      ctx.SetOutput(0, Value(x));
      return;
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out);
    BroadcastCopy(ctx, x, out, BroadcastStrides(x.shape(), out), y);
  }
};

// Tile-1..5: inputs (input, tiles, axis) repeat one axis; 6+: repeats per axis.
class Tile final : public OpKernel {
 public:
  explicit Tile(const KernelInfo& info) : opset_(info.opset()) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const auto r = static_cast<int64_t>(x.rank());
    std::vector<int64_t> repeats;
    if (opset_ < 6) {
      const int64_t tiles = ReadScalarInt(ctx, ctx.required_input(1), "tiles");
      const int64_t axis = NormalizeAxisOrFail(ctx, ReadScalarInt(ctx, ctx.required_input(2), "axis"), r, "axis");
      repeats.assign(x.rank(), 1);
      repeats[static_cast<size_t>(axis)] = tiles;
    } else {
      repeats = ReadInts(ctx, ctx.required_input(1), "repeats");
    }
    if (static_cast<int64_t>(repeats.size()) != r)
      ctx.Fail(StrCat("repeats [", StrJoin(repeats), "] must have one entry per input dim (", r, ")"));
    Shape out(x.rank());
    std::vector<int64_t> dims, strides;
    const auto in_strides = Strides(x.shape());
    for (size_t d = 0; d < x.rank(); ++d) {
      if (repeats[d] < 0) ctx.Fail(StrCat("repeats [", StrJoin(repeats), "] has a negative entry"));
      if (repeats[d] > 0 && x.dim(d) > INT64_MAX / repeats[d]) ctx.Fail(StrCat("repeats [", StrJoin(repeats), "] are too large"));
      out[d] = x.dim(d) * repeats[d];
      dims.push_back(repeats[d]);
      strides.push_back(0);
      dims.push_back(x.dim(d));
      strides.push_back(in_strides[d]);
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out);
    BroadcastCopy(ctx, x, dims, strides, y);
  }

 private:
  int opset_;
};

ONYX_CPU_KERNEL("Expand", 8, kOpsetMax, Expand);
ONYX_CPU_KERNEL("Tile", 1, 5, Tile);  // tiles + axis inputs
ONYX_CPU_KERNEL("Tile", 6, kOpsetMax, Tile);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
