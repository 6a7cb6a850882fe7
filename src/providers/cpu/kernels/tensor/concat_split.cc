// Concat and Split: both move whole blocks of `dim(axis) * inner` elements per outer index, so
// every copy is a memcpy. A Split whose pieces are contiguous in the input (nothing outside the
// axis varies) returns views of the input's bytes.
#include <algorithm>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

constexpr int64_t kChunkBytes = 1 << 16;

struct Segment {
  void* dst;
  const void* src;
  int64_t count;  // elements
};

// Copies `segments`, splitting big ones so the pool gets several pieces of work.
template <typename U>
void CopySegments(ThreadPool* pool, std::vector<Segment> segments) {
  const int64_t chunk = std::max<int64_t>(1, kChunkBytes / static_cast<int64_t>(sizeof(U)));
  std::vector<Segment> pieces;
  for (const Segment& s : segments)
    for (int64_t off = 0; off < s.count; off += chunk)
      pieces.push_back({static_cast<U*>(s.dst) + off, static_cast<const U*>(s.src) + off, std::min(chunk, s.count - off)});
  ThreadPool::For(pool, static_cast<int64_t>(pieces.size()),
                  4.0 + static_cast<double>(chunk * static_cast<int64_t>(sizeof(U))) / 16.0,
                  [&](int64_t begin, int64_t end) {
                    for (int64_t i = begin; i < end; ++i) {
                      const Segment& p = pieces[static_cast<size_t>(i)];
                      CopyN(static_cast<U*>(p.dst), static_cast<const U*>(p.src), p.count);
                    }
                  });
}

class Concat final : public OpKernel {
 public:
  explicit Concat(const KernelInfo& info) {
    // Concat-1..3: axis optional, default 1; 4+: required; negative from 11.
    axis_ = info.opset() < 4 ? info.GetIntOr("axis", 1) : info.GetInt("axis");
  }

  void Compute(KernelContext& ctx) const override {
    const size_t n = ctx.num_inputs();
    if (n == 0) ctx.Fail("needs at least one input");
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < n; ++i) inputs.push_back(&ctx.required_input(i));
    const Tensor& first = *inputs[0];
    const auto r = static_cast<int64_t>(first.rank());
    if (r == 0) ctx.Fail("inputs must have rank 1 or more");
    const auto axis = static_cast<size_t>(NormalizeAxisOrFail(ctx, axis_, r, "axis"));
    Shape out_shape = first.shape();
    out_shape[axis] = 0;
    for (const Tensor* t : inputs) {
      if (t->dtype() != first.dtype()) ctx.Fail("inputs have different element types");
      if (t->rank() != first.rank()) ctx.Fail("inputs have different ranks");
      for (size_t d = 0; d < first.rank(); ++d)
        if (d != axis && t->dim(d) != first.dim(d))
          ctx.Fail(StrCat("inputs differ in dim ", d, " (", t->dim(d), " vs ", first.dim(d), ")"));
      out_shape[axis] += t->dim(axis);
    }
    Tensor& y = ctx.AllocateOutput(0, first.dtype(), out_shape);
    if (y.size() == 0) return;
    if (IsSubByte(first.dtype())) ctx.Fail(StrCat("element type ", DataTypeName(first.dtype()), " is not supported"));
    const int64_t outer = Product(out_shape, 0, axis);
    const int64_t inner = Product(out_shape, axis + 1, out_shape.size());
    const int64_t row = out_shape[axis] * inner;
    DispatchBySize(ctx, first.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      U* out = y.data<U>();
      if (outer * static_cast<int64_t>(n) <= 4096) {
        std::vector<Segment> segments;
        for (int64_t o = 0; o < outer; ++o) {
          int64_t offset = o * row;
          for (const Tensor* t : inputs) {
            const int64_t block = t->dim(axis) * inner;
            // An input its producer already wrote into place (runtime/concat_in_place.h).
            const U* src = t->data<U>() + o * block;
            if (block > 0 && src != out + offset) segments.push_back({out + offset, src, block});
            offset += block;
          }
        }
        CopySegments<U>(ctx.thread_pool(), std::move(segments));
        return;
      }
      ThreadPool::For(ctx.thread_pool(), outer, 4.0 + static_cast<double>(row * static_cast<int64_t>(sizeof(U))) / 16.0,
                      [&](int64_t begin, int64_t end) {
                        for (int64_t o = begin; o < end; ++o) {
                          U* dst = out + o * row;
                          for (const Tensor* t : inputs) {
                            const int64_t block = t->dim(axis) * inner;
                            const U* src = t->data<U>() + o * block;
                            if (src != dst) CopyN(dst, src, block);
                            dst += block;
                          }
                        }
                      });
    });
  }

 private:
  int64_t axis_;
};

// Split: sizes from the `split` attribute (opset 1-12; opset 1 also as input 1), the `split`
// input (13+), num_outputs (18+), or equal parts.
class Split final : public OpKernel {
 public:
  explicit Split(const KernelInfo& info) : axis_(info.GetIntOr("axis", 0)), opset_(info.opset()) {
    if (opset_ < 13 && info.HasAttr("split")) split_attr_ = info.GetInts("split");
    if (opset_ >= 18 && info.HasAttr("num_outputs")) {
      num_outputs_ = info.GetInt("num_outputs");
      if (num_outputs_ < 1) info.Fail(StrCat("num_outputs must be positive, got ", num_outputs_));
      if (num_outputs_ != static_cast<int64_t>(info.num_outputs()))
        info.Fail(StrCat("num_outputs is ", num_outputs_, " but the node has ", info.num_outputs(), " outputs"));
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const auto r = static_cast<int64_t>(x.rank());
    if (r == 0) ctx.Fail("input must have rank 1 or more");
    const auto axis = static_cast<size_t>(NormalizeAxisOrFail(ctx, axis_, r, "axis"));
    const int64_t dim = x.dim(axis);
    const auto n = static_cast<int64_t>(ctx.num_outputs());
    std::vector<int64_t> sizes = split_attr_;
    const bool split_input = (opset_ == 1 || opset_ >= 13) && ctx.input(1) != nullptr;
    if (split_input) {
      if (num_outputs_ > 0) ctx.Fail("both the split input and num_outputs are given");
      sizes = ReadInts(ctx, *ctx.input(1), "split");
    }
    if (!sizes.empty() || split_input) {
      if (static_cast<int64_t>(sizes.size()) != n)
        ctx.Fail(StrCat("split [", StrJoin(sizes), "] has ", sizes.size(), " entries for ", n, " outputs"));
      int64_t sum = 0;
      for (int64_t s : sizes) {
        if (s < 0 || s > dim) ctx.Fail(StrCat("split [", StrJoin(sizes), "] has a size outside [0, ", dim, "]"));
        sum += s;
      }
      if (sum != dim) ctx.Fail(StrCat("split [", StrJoin(sizes), "] sums to ", sum, ", not the axis size ", dim));
    } else if (num_outputs_ > 0) {
      const int64_t chunk = (dim + n - 1) / n;
      const int64_t last = dim - chunk * (n - 1);
      if (last < 0) ctx.Fail(StrCat("axis size ", dim, " cannot be split into ", n, " chunks of ", chunk));
      sizes.assign(static_cast<size_t>(n), chunk);
      sizes.back() = last;
    } else {
      if (dim % n != 0) ctx.Fail(StrCat("axis size ", dim, " is not divisible into ", n, " equal parts"));
      sizes.assign(static_cast<size_t>(n), dim / n);
    }

    const int64_t outer = Product(x.shape(), 0, axis);
    const int64_t inner = Product(x.shape(), axis + 1, x.rank());
    const bool sub_byte = IsSubByte(x.dtype());
    if (sub_byte && outer > 1) ctx.Fail(StrCat("element type ", DataTypeName(x.dtype()), " is not supported"));
    struct Piece {
      void* dst;
      int64_t offset;  // within an input row, in elements
      int64_t block;   // elements per outer index
    };
    std::vector<Piece> pieces;
    const Tensor bytes = sub_byte ? UnpackSubByte(x) : Tensor();
    int64_t start = 0;
    for (int64_t i = 0; i < n; ++i) {
      const auto out_index = static_cast<size_t>(i);
      Shape shape = x.shape();
      shape[axis] = sizes[out_index];
      const int64_t block = sizes[out_index] * inner;
      if (outer == 1 && sub_byte) {
        Tensor piece(DataType::kUInt8, shape);
        CopyN(piece.data<uint8_t>(), bytes.data<uint8_t>() + start * inner, block);
        PackSubByte(piece, ctx.AllocateOutput(out_index, x.dtype(), shape));
      } else if (outer == 1) {
        // One contiguous piece: a view of the input's bytes.
        char* base = static_cast<char*>(const_cast<void*>(x.raw_data()));
        ctx.SetOutput(out_index, Value(Tensor::View(x.dtype(), shape, base + StorageBytes(x.dtype(), start * inner),
                                                    x.holder(), x.device())));
      } else {
        Tensor& y = ctx.AllocateOutput(out_index, x.dtype(), shape);
        if (block > 0 && outer > 0 && ctx.has_output(out_index)) pieces.push_back({y.raw_data(), start * inner, block});
      }
      start += sizes[out_index];
    }
    if (pieces.empty()) return;
    const int64_t row = dim * inner;
    DispatchBySize(ctx, x.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U* in = x.data<U>();
      if (outer * static_cast<int64_t>(pieces.size()) <= 4096) {
        std::vector<Segment> copies;
        for (const Piece& p : pieces)
          for (int64_t o = 0; o < outer; ++o)
            copies.push_back({static_cast<U*>(p.dst) + o * p.block, in + o * row + p.offset, p.block});
        CopySegments<U>(ctx.thread_pool(), std::move(copies));
        return;
      }
      ThreadPool::For(ctx.thread_pool(), outer, 4.0 + static_cast<double>(row * static_cast<int64_t>(sizeof(U))) / 16.0,
                      [&](int64_t begin, int64_t end) {
                        for (int64_t o = begin; o < end; ++o)
                          for (const Piece& p : pieces)
                            CopyN(static_cast<U*>(p.dst) + o * p.block, in + o * row + p.offset, p.block);
                      });
    });
  }

 private:
  int64_t axis_;
  int opset_;
  std::vector<int64_t> split_attr_;
  int64_t num_outputs_ = 0;
};

ONYX_CPU_KERNEL("Concat", 1, 3, Concat);   // axis defaults to 1
ONYX_CPU_KERNEL("Concat", 4, 10, Concat);  // axis required
ONYX_CPU_KERNEL("Concat", 11, kOpsetMax, Concat);  // negative axis
ONYX_CPU_KERNEL("Split", 1, 1, Split);     // split as input or attribute
ONYX_CPU_KERNEL("Split", 2, 10, Split);    // split attribute
ONYX_CPU_KERNEL("Split", 11, 12, Split);   // negative axis
ONYX_CPU_KERNEL("Split", 13, 17, Split);   // split input
ONYX_CPU_KERNEL("Split", 18, kOpsetMax, Split);  // + num_outputs

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
