// Slice: starts/ends/axes attributes before opset 10; inputs (with steps) from 10 on. Trailing
// dims taken whole merge into one contiguous block per row (one memcpy); a result that is one
// contiguous range of the input is returned as a view of its bytes.
#include <algorithm>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

struct AxisRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// numpy-style clamping of one axis (ONNX Slice rules).
AxisRange ClampRange(int64_t start, int64_t end, int64_t step, int64_t dim) {
  AxisRange r;
  r.step = step;
  if (dim == 0) return r;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.start = start;
    r.count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    r.start = start;
    const int64_t neg = step == INT64_MIN ? INT64_MAX : -step;
    r.count = start > end ? (start - end - 1) / neg + 1 : 0;
  }
  return r;
}

template <typename U>
void SliceCopy(ThreadPool* pool, const U* in, U* out, const std::vector<int64_t>& dims,
               const std::vector<int64_t>& in_strides, const std::vector<int64_t>& out_strides, int64_t block) {
  int64_t rows = 1;
  for (int64_t d : dims) rows *= d;
  ThreadPool::For(pool, rows, 4.0 + static_cast<double>(block * static_cast<int64_t>(sizeof(U))) / 16.0,
                  [&](int64_t begin, int64_t end) {
                    OffsetWalker w(dims, in_strides, out_strides, begin);
                    if (block == 1) {
                      for (int64_t i = begin; i < end; ++i, w.Next()) out[w.b()] = in[w.a()];
                    } else {
                      for (int64_t i = begin; i < end; ++i, w.Next()) CopyN(out + w.b(), in + w.a(), block);
                    }
                  });
}

class Slice final : public OpKernel {
 public:
  explicit Slice(const KernelInfo& info) : opset_(info.opset()) {
    if (opset_ < 10) {
      starts_ = info.GetInts("starts");
      ends_ = info.GetInts("ends");
      has_axes_ = info.HasAttr("axes");
      if (has_axes_) axes_ = info.GetInts("axes");
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const auto rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    bool has_axes = has_axes_;
    if (opset_ >= 10) {
      starts = ReadInts(ctx, ctx.required_input(1), "starts");
      ends = ReadInts(ctx, ctx.required_input(2), "ends");
      has_axes = ctx.input(3) != nullptr;
      if (has_axes) axes = ReadInts(ctx, *ctx.input(3), "axes");
      if (ctx.input(4) != nullptr) steps = ReadInts(ctx, *ctx.input(4), "steps");
    }
    if (starts.size() != ends.size())
      ctx.Fail(StrCat("starts has ", starts.size(), " entries but ends has ", ends.size()));
    if (!has_axes) {
      axes.resize(starts.size());
      for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
    }
    if (axes.size() != starts.size())
      ctx.Fail(StrCat("axes has ", axes.size(), " entries but starts has ", starts.size()));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (steps.size() != starts.size())
      ctx.Fail(StrCat("steps has ", steps.size(), " entries but starts has ", starts.size()));
    axes = NormalizeAxes(ctx, axes, rank, "axis");

    std::vector<AxisRange> ranges(x.rank());
    for (size_t d = 0; d < x.rank(); ++d) ranges[d].count = x.dim(d);
    for (size_t i = 0; i < axes.size(); ++i) {
      if (steps[i] == 0) ctx.Fail(StrCat("step for axis ", axes[i], " is 0"));
      const auto a = static_cast<size_t>(axes[i]);
      ranges[a] = ClampRange(starts[i], ends[i], steps[i], x.dim(a));
    }
    Shape out_shape(x.rank());
    for (size_t d = 0; d < x.rank(); ++d) out_shape[d] = ranges[d].count;
    const int64_t out_size = ShapeSize(out_shape);
    const auto strides = Strides(x.shape());
    int64_t base = 0;
    for (size_t d = 0; d < x.rank(); ++d) base += ranges[d].start * strides[d];

    // Contiguous block: trailing dims taken whole, plus one more taken with step 1.
    size_t j = x.rank();
    int64_t block = 1;
    auto whole = [&](size_t d) { return ranges[d].start == 0 && ranges[d].step == 1 && ranges[d].count == x.dim(d); };
    while (j > 0 && whole(j - 1)) block *= x.dim(--j);
    if (j > 0 && ranges[j - 1].step == 1) block *= ranges[--j].count;
    bool one_block = true;
    for (size_t d = 0; d < j; ++d) one_block = one_block && ranges[d].count == 1;

    if (IsSubByte(x.dtype())) ctx.Fail(StrCat("element type ", DataTypeName(x.dtype()), " is not supported"));
    if (out_size > 0 && one_block && x.dtype() != DataType::kUndefined) {
      char* bytes = static_cast<char*>(const_cast<void*>(x.raw_data()));
      ctx.SetOutput(0, Value(Tensor::View(x.dtype(), out_shape, bytes + StorageBytes(x.dtype(), base), x.holder(),
                                          x.device())));
      return;
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
    if (out_size == 0) return;
    std::vector<int64_t> dims(out_shape.begin(), out_shape.begin() + static_cast<std::ptrdiff_t>(j));
    std::vector<int64_t> in_strides(j), out_strides(j);
    const auto ostrides = Strides(out_shape);
    for (size_t d = 0; d < j; ++d) {
      in_strides[d] = strides[d] * ranges[d].step;
      out_strides[d] = ostrides[d];
    }
    DispatchBySize(ctx, x.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      SliceCopy<U>(ctx.thread_pool(), x.data<U>() + base, y.data<U>(), dims, in_strides, out_strides, block);
    });
  }

 private:
  int opset_;
  std::vector<int64_t> starts_, ends_, axes_;
  bool has_axes_ = false;
};

ONYX_CPU_KERNEL("Slice", 1, 9, Slice);           // attributes, no steps
ONYX_CPU_KERNEL("Slice", 10, kOpsetMax, Slice);  // inputs with steps

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
