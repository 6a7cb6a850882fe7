// Gather, GatherElements, GatherND and Compress: reads selected by indices (or a mask). Every
// index is checked (and negatives normalized) before any copy; Gather, GatherND and Compress
// copy whole inner blocks with memcpy.
#include <algorithm>

#include "linalg/f16_widen.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/linalg/deferred_half_widening.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

// Copies `count` blocks of `block` elements: block k goes from in + src(k) to out + k * block.
template <typename U, typename SrcFn>
void GatherBlocks(ThreadPool* pool, const U* in, U* out, int64_t count, int64_t block, const SrcFn& src) {
  ThreadPool::For(pool, count, 2.0 + static_cast<double>(block * static_cast<int64_t>(sizeof(U))) / 16.0,
                  [&](int64_t begin, int64_t end) {
                    if (block == 1) {
                      for (int64_t k = begin; k < end; ++k) out[k] = in[src(k)];
                    } else {
                      for (int64_t k = begin; k < end; ++k) CopyN(out + k * block, in + src(k), block);
                    }
                  });
}

// Blocks picked along one axis: block k is (outer index k / n, pick k % n).
struct AxisPicks {
  const std::vector<int64_t>& picks;
  int64_t dim;
  int64_t inner;
  int64_t operator()(int64_t k) const {
    const auto n = static_cast<int64_t>(picks.size());
    return ((k / n) * dim + picks[static_cast<size_t>(k % n)]) * inner;
  }
};

class Gather final : public OpKernel {
 public:
  explicit Gather(const KernelInfo& info) : axis_(info.GetIntOr("axis", 0)) {
    // A float16 table whose float values HalfBodyToFloat left unwritten (an embedding table):
    // the rows read are widened from the float16 bits (exact), and the table is never widened.
    if (const Tensor* t = info.ConstantInput(0)) half_table_ = DeferredHalfSource(*t);
  }

  bool ReadsConstantInputAtRun(size_t input) const override { return input != 0 || !half_table_.defined(); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = half_table_.defined() ? half_table_ : ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const auto r = static_cast<int64_t>(x.rank());
    if (r == 0) ctx.Fail("data must have rank 1 or more");
    const auto axis = static_cast<size_t>(NormalizeAxisOrFail(ctx, axis_, r, "axis"));
    const int64_t dim = x.dim(axis);
    const std::vector<int64_t> idx = NormalizeIndices(ctx, indices, dim, "index");
    Shape out_shape(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis));
    out_shape.insert(out_shape.end(), indices.shape().begin(), indices.shape().end());
    out_shape.insert(out_shape.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.shape().end());
    Tensor& y = ctx.AllocateOutput(0, half_table_.defined() ? DataType::kFloat : x.dtype(), out_shape);
    if (y.size() == 0) return;
    const int64_t outer = Product(x.shape(), 0, axis);
    const int64_t inner = Product(x.shape(), axis + 1, x.rank());
    if (half_table_.defined()) return GatherWidened(ctx, y, outer * static_cast<int64_t>(idx.size()), inner,
                                                    AxisPicks{idx, dim, inner});
    DispatchBySize(ctx, x.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      GatherBlocks<U>(ctx.thread_pool(), x.data<U>(), y.data<U>(), outer * static_cast<int64_t>(idx.size()), inner,
                      AxisPicks{idx, dim, inner});
    });
  }

 private:
  void GatherWidened(KernelContext& ctx, Tensor& y, int64_t count, int64_t block, const AxisPicks& src) const {
    const auto* in = static_cast<const uint16_t*>(half_table_.raw_data());
    float* out = y.data<float>();
    ThreadPool::For(ctx.thread_pool(), count, 2.0 + static_cast<double>(block) / 4.0, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) linalg::WidenHalf(in + src(k), out + k * block, block);
    });
  }

  int64_t axis_;
  Tensor half_table_;  // float16; undefined unless the table is a deferred widening
};

class GatherElements final : public OpKernel {
 public:
  explicit GatherElements(const KernelInfo& info) : axis_(info.GetIntOr("axis", 0)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const auto r = static_cast<int64_t>(x.rank());
    if (r == 0) ctx.Fail("data must have rank 1 or more");
    if (indices.rank() != x.rank()) ctx.Fail("data and indices must have the same rank");
    const auto axis = static_cast<size_t>(NormalizeAxisOrFail(ctx, axis_, r, "axis"));
    for (size_t d = 0; d < x.rank(); ++d)
      if (d != axis && indices.dim(d) > x.dim(d))
        ctx.Fail(StrCat("indices dim ", d, " (", indices.dim(d), ") exceeds the data's (", x.dim(d), ")"));
    const std::vector<int64_t> idx = NormalizeIndices(ctx, indices, x.dim(axis), "index");
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), indices.shape());
    if (y.size() == 0) return;
    // Walk rows of the innermost dim; the index replaces the axis coordinate.
    std::vector<int64_t> in_strides = Strides(x.shape());
    const int64_t axis_stride = in_strides[axis];
    in_strides[axis] = 0;
    const size_t last = x.rank() - 1;
    const int64_t row = indices.dim(last);
    const int64_t last_stride = in_strides[last];
    const std::vector<int64_t> dims(indices.shape().begin(), indices.shape().end() - 1);
    const std::vector<int64_t> row_in(in_strides.begin(), in_strides.end() - 1);
    std::vector<int64_t> row_out = Strides(indices.shape());
    row_out.pop_back();
    DispatchBySize(ctx, x.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U* in = x.data<U>();
      U* out = y.data<U>();
      ThreadPool::For(ctx.thread_pool(), y.size() / row, 4.0 + 2.0 * static_cast<double>(row),
                      [&](int64_t begin, int64_t end) {
                        OffsetWalker w(dims, row_in, row_out, begin);
                        for (int64_t i = begin; i < end; ++i, w.Next()) {
                          const int64_t* ix = idx.data() + w.b();
                          U* o = out + w.b();
                          const U* base = in + w.a();
                          for (int64_t j = 0; j < row; ++j) o[j] = base[j * last_stride + ix[j] * axis_stride];
                        }
                      });
    });
  }

 private:
  int64_t axis_;
};

// GatherND with batch_dims (opset 12+; 0 before).
class GatherND final : public OpKernel {
 public:
  explicit GatherND(const KernelInfo& info) : batch_dims_(info.GetIntOr("batch_dims", 0)) {
    if (batch_dims_ < 0) info.Fail(StrCat("batch_dims must not be negative, got ", batch_dims_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const auto r = static_cast<int64_t>(x.rank());
    const auto q = static_cast<int64_t>(indices.rank());
    const int64_t b = batch_dims_;
    if (r < 1 || q < 1) ctx.Fail("data and indices must have rank 1 or more");
    if (b >= std::min(r, q)) ctx.Fail(StrCat("batch_dims ", b, " must be less than both ranks"));
    for (int64_t d = 0; d < b; ++d)
      if (x.dim(static_cast<size_t>(d)) != indices.dim(static_cast<size_t>(d)))
        ctx.Fail(StrCat("batch dim ", d, " differs between data and indices"));
    const int64_t m = indices.dim(static_cast<size_t>(q - 1));
    if (m < 0 || m > r - b) ctx.Fail(StrCat("index tuples of length ", m, " do not fit data of rank ", r, " after ", b, " batch dims"));
    if (indices.dtype() != DataType::kInt64 && indices.dtype() != DataType::kInt32)
      ctx.Fail("indices must be int32 or int64");
    Shape out_shape(indices.shape().begin(), indices.shape().end() - 1);
    out_shape.insert(out_shape.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(b + m), x.shape().end());
    const int64_t block = Product(x.shape(), static_cast<size_t>(b + m), x.rank());
    const int64_t batches = Product(x.shape(), 0, static_cast<size_t>(b));
    const int64_t batch_stride = Product(x.shape(), static_cast<size_t>(b), x.rank());
    const int64_t tuples = Product(indices.shape(), static_cast<size_t>(b), indices.rank() - 1);
    const auto strides = Strides(x.shape());
    std::vector<int64_t> src(static_cast<size_t>(batches * tuples));
    auto read = [&](int64_t k) {
      return indices.dtype() == DataType::kInt64 ? indices.data<int64_t>()[k] : int64_t{indices.data<int32_t>()[k]};
    };
    for (int64_t bi = 0; bi < batches; ++bi) {
      for (int64_t t = 0; t < tuples; ++t) {
        const int64_t tuple = bi * tuples + t;
        int64_t offset = bi * batch_stride;
        for (int64_t j = 0; j < m; ++j) {
          const auto d = static_cast<size_t>(b + j);
          int64_t v = read(tuple * m + j);
          if (v < -x.dim(d) || v >= x.dim(d))
            ctx.Fail(StrCat("index ", v, " of tuple ", tuple, " is out of range for data dim ", d, " of size ", x.dim(d)));
          if (v < 0) v += x.dim(d);
          offset += v * strides[d];
        }
        src[static_cast<size_t>(tuple)] = offset;
      }
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
    if (y.size() == 0) return;
    DispatchBySize(ctx, x.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      GatherBlocks<U>(ctx.thread_pool(), x.data<U>(), y.data<U>(), static_cast<int64_t>(src.size()), block,
                      [&](int64_t k) { return src[static_cast<size_t>(k)]; });
    });
  }

 private:
  int64_t batch_dims_;
};

// Compress: keep the slices (or, without axis, the flattened elements) whose condition is true.
class Compress final : public OpKernel {
 public:
  explicit Compress(const KernelInfo& info) : has_axis_(info.HasAttr("axis")), axis_(info.GetIntOr("axis", 0)) {
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& cond = ctx.required_input(1);
    if (cond.dtype() != DataType::kBool || cond.rank() != 1) ctx.Fail("condition must be a 1-D bool tensor");
    size_t axis = 0;
    Shape shape = x.shape();
    if (has_axis_) {
      axis = static_cast<size_t>(NormalizeAxisOrFail(ctx, axis_, static_cast<int64_t>(x.rank()), "axis"));
    } else {
      shape = {x.size()};
    }
    const int64_t dim = shape[axis];
    const bool* c = cond.data<bool>();
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < cond.size(); ++i) {
      if (!c[i]) continue;
      if (i >= dim) ctx.Fail(StrCat("condition is true at ", i, ", beyond the axis size ", dim));
      kept.push_back(i);
    }
    const int64_t outer = Product(shape, 0, axis);
    const int64_t inner = Product(shape, axis + 1, shape.size());
    Shape out_shape = shape;
    out_shape[axis] = static_cast<int64_t>(kept.size());
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
    if (y.size() == 0) return;
    DispatchBySize(ctx, x.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      GatherBlocks<U>(ctx.thread_pool(), x.data<U>(), y.data<U>(), outer * static_cast<int64_t>(kept.size()), inner,
                      AxisPicks{kept, dim, inner});
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

ONYX_CPU_KERNEL("Gather", 1, 10, Gather);
ONYX_CPU_KERNEL("Gather", 11, kOpsetMax, Gather);  // negative indices specified
ONYX_CPU_KERNEL("GatherElements", 11, kOpsetMax, GatherElements);
ONYX_CPU_KERNEL("GatherND", 11, 11, GatherND);          // batch_dims is always 0
ONYX_CPU_KERNEL("GatherND", 12, kOpsetMax, GatherND);   // + batch_dims
ONYX_CPU_KERNEL("Compress", 9, 10, Compress);
ONYX_CPU_KERNEL("Compress", 11, kOpsetMax, Compress);   // negative axis

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
