// Pad (constant / reflect / edge / wrap; negative pads crop first) and CenterCropPad (a pad or
// crop centred on each axis). Each output row is filled from one input row: the middle is a
// memcpy, the padded ends are looked up through a per-axis index map.
#include <algorithm>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// Where each output index of one axis reads from (-1: the constant).
struct AxisMap {
  std::vector<int64_t> src;
  int64_t pad_begin = 0;  // output positions before the copied middle
  int64_t crop_begin = 0; // first input index kept
  int64_t kept = 0;       // input elements kept
};

// Output size of one axis; fails on over-cropping or sizes beyond int64.
int64_t PaddedDim(const KernelContext& ctx, int64_t dim, int64_t begin, int64_t end, size_t axis) {
  if (begin < -dim || end < -dim || dim + std::min<int64_t>(0, begin) + std::min<int64_t>(0, end) < 0)
    ctx.Fail(StrCat("pads ", begin, ", ", end, " crop more than the ", dim, " elements of axis ", axis));
  const int64_t kept = dim + std::min<int64_t>(0, begin) + std::min<int64_t>(0, end);
  const int64_t grow = std::max<int64_t>(0, begin);
  const int64_t grow_end = std::max<int64_t>(0, end);
  if (grow > INT64_MAX / 4 || grow_end > INT64_MAX / 4) ctx.Fail(StrCat("pads ", begin, ", ", end, " are too large"));
  return kept + grow + grow_end;
}

AxisMap MapAxis(const KernelContext& ctx, int64_t dim, int64_t begin, int64_t end, PadMode mode, size_t axis) {
  const int64_t out = PaddedDim(ctx, dim, begin, end, axis);
  AxisMap m;
  m.crop_begin = std::max<int64_t>(0, -begin);
  m.kept = dim - m.crop_begin - std::max<int64_t>(0, -end);
  m.pad_begin = std::max<int64_t>(0, begin);
  const int64_t n = m.kept;
  if (n == 0 && out > 0 && mode != PadMode::kConstant)
    ctx.Fail(StrCat("axis ", axis, " has nothing to pad from in this mode"));
  m.src.resize(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    int64_t i = o - m.pad_begin;
    if (i < 0 || i >= n) {
      switch (mode) {
        case PadMode::kConstant: i = -1; break;
        case PadMode::kEdge: i = std::clamp<int64_t>(i, 0, n - 1); break;
        case PadMode::kWrap: i = ((i % n) + n) % n; break;
        case PadMode::kReflect:
          if (n == 1) {
            i = 0;
          } else {
            const int64_t period = 2 * (n - 1);
            i = ((i % period) + period) % period;
            if (i >= n) i = period - i;
          }
          break;
      }
    }
    m.src[static_cast<size_t>(o)] = i < 0 ? -1 : i + m.crop_begin;
  }
  return m;
}

template <typename U>
void PadTyped(ThreadPool* pool, const Tensor& x, const std::vector<AxisMap>& maps, const U& value, Tensor& y) {
  const size_t r = x.rank();
  const U* in = x.data<U>();
  U* out = y.data<U>();
  if (r == 0) {
    out[0] = in[0];
    return;
  }
  const auto strides = Strides(x.shape());
  const AxisMap& last = maps[r - 1];
  const auto row = static_cast<int64_t>(last.src.size());
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < r; ++d) rows *= static_cast<int64_t>(maps[d].src.size());
  ThreadPool::For(pool, rows, 8.0 + static_cast<double>(row * static_cast<int64_t>(sizeof(U))) / 8.0,
                  [&](int64_t begin, int64_t end) {
                    std::vector<int64_t> idx(r, 0);
                    int64_t rest = begin;
                    for (size_t d = r - 1; d-- > 0;) {
                      const auto n = static_cast<int64_t>(maps[d].src.size());
                      idx[d] = rest % n;
                      rest /= n;
                    }
                    for (int64_t i = begin; i < end; ++i) {
                      U* dst = out + i * row;
                      int64_t offset = 0;
                      bool constant = false;
                      for (size_t d = 0; d + 1 < r; ++d) {
                        const int64_t s = maps[d].src[static_cast<size_t>(idx[d])];
                        if (s < 0) constant = true;
                        offset += s * strides[d];
                      }
                      if (constant) {
                        FillN(dst, value, row);
                      } else {
                        const U* src = in + offset;
                        for (int64_t o = 0; o < last.pad_begin; ++o) {
                          const int64_t s = last.src[static_cast<size_t>(o)];
                          dst[o] = s < 0 ? value : src[s];
                        }
                        CopyN(dst + last.pad_begin, src + last.crop_begin, last.kept);
                        for (int64_t o = last.pad_begin + last.kept; o < row; ++o) {
                          const int64_t s = last.src[static_cast<size_t>(o)];
                          dst[o] = s < 0 ? value : src[s];
                        }
                      }
                      for (size_t d = r - 1; d-- > 0;) {
                        if (++idx[d] < static_cast<int64_t>(maps[d].src.size())) break;
                        idx[d] = 0;
                      }
                    }
                  });
}

// Pads x by pads = [begin_0.., end_0..] (2 * rank entries). `value` is a one-element tensor of
// x's type, or undefined for zero.
void PadTensor(KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& pads, PadMode mode,
               const Tensor& value) {
  const size_t r = x.rank();
  Shape out_shape(r);
  for (size_t d = 0; d < r; ++d) out_shape[d] = PaddedDim(ctx, x.dim(d), pads[d], pads[d + r], d);
  // Allocating first turns absurd sizes into a clean error before the index maps are built.
  Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
  if (y.size() == 0) return;
  if (x.size() == 0 && mode != PadMode::kConstant) ctx.Fail("cannot pad an empty tensor in this mode");
  std::vector<AxisMap> maps;
  for (size_t d = 0; d < r; ++d) maps.push_back(MapAxis(ctx, x.dim(d), pads[d], pads[d + r], mode, d));
  if (IsSubByte(x.dtype())) {
    const Tensor bytes = UnpackSubByte(x);
    const uint8_t v = value.defined() ? UnpackSubByte(value).data<uint8_t>()[0] : uint8_t{0};
    Tensor padded(DataType::kUInt8, out_shape);
    PadTyped<uint8_t>(ctx.thread_pool(), bytes, maps, v, padded);
    PackSubByte(padded, y);
    return;
  }
  DispatchBySize(ctx, x.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U v{};
    if (value.defined()) v = *value.data<U>();
    PadTyped<U>(ctx.thread_pool(), x, maps, v, y);
  });
}

// A one-element tensor of `dtype` holding `v` (Pad-1..10's float `value` attribute).
Tensor ScalarOf(const KernelContext& ctx, DataType dtype, float v) {
  Tensor t(dtype, {});
  if (dtype == DataType::kBool) {
    *t.data<bool>() = v != 0.0f;
    return t;
  }
  Dispatch(NumericTypes{}, dtype, ctx.node(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    *t.data<T>() = FromCompute<T>(static_cast<ComputeType<T>>(v));
  });
  return t;
}

class Pad final : public OpKernel {
 public:
  explicit Pad(const KernelInfo& info) : opset_(info.opset()) {
    const std::string mode = info.GetStringOr("mode", "constant");
    if (mode == "constant") mode_ = PadMode::kConstant;
    else if (mode == "reflect") mode_ = PadMode::kReflect;
    else if (mode == "edge") mode_ = PadMode::kEdge;
    else if (mode == "wrap" && opset_ >= 19) mode_ = PadMode::kWrap;
    else info.Fail(StrCat("mode '", mode, "' is not supported at opset ", opset_));
    if (opset_ < 11) {
      pads_ = info.GetInts(opset_ < 2 ? "paddings" : "pads");
      value_ = info.GetFloatOr("value", 0.0f);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const size_t r = x.rank();
    std::vector<int64_t> pads = pads_;
    Tensor value;
    if (opset_ < 11) {
      if (value_ != 0.0f && x.dtype() != DataType::kString) value = ScalarOf(ctx, x.dtype(), value_);
    } else {
      pads = ReadInts(ctx, ctx.required_input(1), "pads");
      if (const Tensor* v = ctx.input(2)) {
        if (v->dtype() != x.dtype()) ctx.Fail("constant_value must have the data's element type");
        if (v->size() != 1) ctx.Fail(StrCat("constant_value must hold one value, got ", v->Describe()));
        value = *v;
      }
      if (opset_ >= 18 && ctx.input(3) != nullptr) {
        const std::vector<int64_t> axes =
            NormalizeAxes(ctx, ReadInts(ctx, *ctx.input(3), "axes"), static_cast<int64_t>(r), "axis");
        if (pads.size() != 2 * axes.size())
          ctx.Fail(StrCat("pads has ", pads.size(), " entries for ", axes.size(), " axes"));
        std::vector<int64_t> full(2 * r, 0);
        for (size_t i = 0; i < axes.size(); ++i) {
          full[static_cast<size_t>(axes[i])] = pads[i];
          full[static_cast<size_t>(axes[i]) + r] = pads[i + axes.size()];
        }
        pads = std::move(full);
      }
    }
    if (pads.size() != 2 * r) ctx.Fail(StrCat("pads has ", pads.size(), " entries, expected ", 2 * r));
    PadTensor(ctx, x, pads, mode_, value);
  }

 private:
  int opset_;
  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> pads_;
  float value_ = 0.0f;
};

// CenterCropPad (opset 18): crop or zero-pad each listed axis to the requested size, centred
// (the extra element of an odd difference goes to the end).
class CenterCropPad final : public OpKernel {
 public:
  explicit CenterCropPad(const KernelInfo& info) : has_axes_(info.HasAttr("axes")) {
    if (has_axes_) axes_ = info.GetInts("axes");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::vector<int64_t> shape = ReadInts(ctx, ctx.required_input(1), "shape");
    const auto r = static_cast<int64_t>(x.rank());
    std::vector<int64_t> axes = axes_;
    if (!has_axes_) {
      axes.resize(x.rank());
      for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
    }
    axes = NormalizeAxes(ctx, axes, r, "axis");
    if (shape.size() != axes.size())
      ctx.Fail(StrCat("shape [", StrJoin(shape), "] must have one entry per axis (", axes.size(), ")"));
    std::vector<int64_t> pads(2 * x.rank(), 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      const auto a = static_cast<size_t>(axes[i]);
      const int64_t target = shape[i];
      if (target < 0) ctx.Fail(StrCat("shape [", StrJoin(shape), "] has a negative size"));
      const int64_t diff = target - x.dim(a);
      const int64_t half = (diff < 0 ? -diff : diff) / 2;
      pads[a] = diff < 0 ? -half : half;
      pads[a + x.rank()] = diff - pads[a];
    }
    PadTensor(ctx, x, pads, PadMode::kConstant, Tensor());
  }

 private:
  bool has_axes_;
  std::vector<int64_t> axes_;
};

ONYX_CPU_KERNEL("Pad", 1, 1, Pad);     // paddings attribute
ONYX_CPU_KERNEL("Pad", 2, 10, Pad);    // pads attribute
ONYX_CPU_KERNEL("Pad", 11, 17, Pad);   // pads / constant_value inputs
ONYX_CPU_KERNEL("Pad", 18, 18, Pad);   // + axes input
ONYX_CPU_KERNEL("Pad", 19, kOpsetMax, Pad);  // + wrap mode
ONYX_CPU_KERNEL("CenterCropPad", 18, kOpsetMax, CenterCropPad);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
