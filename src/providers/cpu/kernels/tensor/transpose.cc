// Transpose, and DepthToSpace / SpaceToDepth (a transpose of a reshaped view). The copy first
// drops size-1 dims and merges dims that stay adjacent, so most real permutations become a
// short list of contiguous-block memcpys or one tiled 2-D transpose per outer index. 4-byte
// elements transpose through linalg's blocked SIMD transpose.
#include <algorithm>
#include <numeric>

#include "linalg/transpose.h"
#include "linalg/x8_transpose.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

constexpr int64_t kTile = 32;

struct Collapsed {
  Shape in_shape;
  std::vector<int64_t> perm;
};

// Drops size-1 dims and merges input dims that are consecutive in both orders.
Collapsed Collapse(const Shape& in_shape, const std::vector<int64_t>& perm) {
  const size_t r = perm.size();
  std::vector<int64_t> renumber(r, -1);
  Shape kept;
  for (size_t d = 0; d < r; ++d)
    if (in_shape[d] != 1) {
      renumber[d] = static_cast<int64_t>(kept.size());
      kept.push_back(in_shape[d]);
    }
  std::vector<std::pair<int64_t, int64_t>> groups;  // [first, last] input dims, in output order
  for (size_t i = 0; i < r; ++i) {
    const int64_t v = renumber[static_cast<size_t>(perm[i])];
    if (v < 0) continue;
    if (!groups.empty() && groups.back().second + 1 == v) groups.back().second = v;
    else groups.emplace_back(v, v);
  }
  std::vector<size_t> order(groups.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a].first < groups[b].first; });
  std::vector<int64_t> input_pos(groups.size());
  Collapsed c;
  for (size_t j = 0; j < order.size(); ++j) {
    input_pos[order[j]] = static_cast<int64_t>(j);
    const auto [first, last] = groups[order[j]];
    c.in_shape.push_back(Product(kept, static_cast<size_t>(first), static_cast<size_t>(last) + 1));
  }
  for (size_t i = 0; i < groups.size(); ++i) c.perm.push_back(input_pos[i]);
  return c;
}

template <typename U>
void TransposeTyped(ThreadPool* pool, const U* in, U* out, const Shape& s, const std::vector<int64_t>& perm) {
  const size_t r = s.size();
  const int64_t total = Product(s, 0, r);
  if (total == 0) return;
  if (r <= 1) {
    CopyN(out, in, total);
    return;
  }
  const auto in_strides = Strides(s);
  Shape out_shape(r);
  std::vector<int64_t> in_stride_of_out(r);
  for (size_t i = 0; i < r; ++i) {
    out_shape[i] = s[static_cast<size_t>(perm[i])];
    in_stride_of_out[i] = in_strides[static_cast<size_t>(perm[i])];
  }
  const auto out_strides = Strides(out_shape);

  if (perm[r - 1] == static_cast<int64_t>(r - 1)) {
    // The innermost dim stays innermost: copy rows of it.
    const int64_t block = s[r - 1];
    const std::vector<int64_t> dims(out_shape.begin(), out_shape.end() - 1);
    const std::vector<int64_t> sin(in_stride_of_out.begin(), in_stride_of_out.end() - 1);
    const std::vector<int64_t> sout(out_strides.begin(), out_strides.end() - 1);
    const int64_t rows = total / block;
    ThreadPool::For(pool, rows, 4.0 + static_cast<double>(block * static_cast<int64_t>(sizeof(U))) / 16.0,
                    [&](int64_t begin, int64_t end) {
                      OffsetWalker w(dims, sin, sout, begin);
                      for (int64_t i = begin; i < end; ++i, w.Next()) CopyN(out + w.b(), in + w.a(), block);
                    });
    return;
  }

  // Tiled 2-D transpose between the output's innermost dim (strided in the input) and the
  // input's innermost dim (at output position q), for each index of the other dims.
  size_t q = 0;
  while (perm[q] != static_cast<int64_t>(r - 1)) ++q;
  const int64_t a_len = out_shape[r - 1];
  const int64_t a_stride = in_stride_of_out[r - 1];
  const int64_t b_len = out_shape[q];
  const int64_t b_stride = out_strides[q];
  std::vector<int64_t> dims, sin, sout;
  for (size_t i = 0; i + 1 < r; ++i) {
    if (i == q) continue;
    dims.push_back(out_shape[i]);
    sin.push_back(in_stride_of_out[i]);
    sout.push_back(out_strides[i]);
  }
  const int64_t outer = total / (a_len * b_len);
  if constexpr (sizeof(U) == 4 || sizeof(U) == 1) {
    // Tiles of kPanelB output rows x kPanelA output columns, out[i][j] = in[j][i], each one
    // linalg 2-D transpose (4-byte or 1-byte elements: the latter quantized images between
    // NCHW and NHWC); tiles spread over the pool whichever side is long.
    constexpr auto transpose_2d = sizeof(U) == 4 ? &linalg::Transpose2D32 : &linalg::Transpose2D8;
    constexpr int64_t kPanelB = 64, kPanelA = 1024;
    const int64_t panels_b = (b_len + kPanelB - 1) / kPanelB;
    const int64_t panels_a = (a_len + kPanelA - 1) / kPanelA;
    const int64_t per_outer = panels_b * panels_a;
    ThreadPool::For(pool, outer * per_outer, static_cast<double>(kPanelB * std::min(a_len, kPanelA)) / 2.0,
                    [&](int64_t begin, int64_t end) {
                      for (int64_t t = begin; t < end; ++t) {
                        const OffsetWalker w(dims, sin, sout, t / per_outer);
                        const int64_t i0 = (t % per_outer) / panels_a * kPanelB;
                        const int64_t j0 = (t % panels_a) * kPanelA;
                        const int64_t i1 = std::min(b_len, i0 + kPanelB);
                        const int64_t j1 = std::min(a_len, j0 + kPanelA);
                        transpose_2d(in + w.a() + i0 + j0 * a_stride, static_cast<size_t>(a_stride),
                                     out + w.b() + i0 * b_stride + j0, static_cast<size_t>(b_stride),
                                     static_cast<size_t>(j1 - j0), static_cast<size_t>(i1 - i0));
                      }
                    });
    return;
  }
  const int64_t tiles_b = (b_len + kTile - 1) / kTile;
  ThreadPool::For(pool, outer * tiles_b, 2.0 * static_cast<double>(kTile * a_len), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const OffsetWalker w(dims, sin, sout, t / tiles_b);
      const int64_t i0 = (t % tiles_b) * kTile;
      const int64_t i1 = std::min(b_len, i0 + kTile);
      for (int64_t j0 = 0; j0 < a_len; j0 += kTile) {
        const int64_t j1 = std::min(a_len, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i) {
          U* o = out + w.b() + i * b_stride;
          const U* src = in + w.a() + i;
          for (int64_t j = j0; j < j1; ++j) o[j] = src[j * a_stride];
        }
      }
    }
  });
}

}  // namespace

void TransposeCopy(const KernelContext& ctx, const Tensor& src, const std::vector<int64_t>& perm, Tensor& dst) {
  if (IsSubByte(src.dtype())) {
    const Tensor bytes = UnpackSubByte(src);
    Tensor moved(DataType::kUInt8, dst.shape());
    TransposeCopy(ctx, bytes, perm, moved);
    PackSubByte(moved, dst);
    return;
  }
  const Collapsed c = Collapse(src.shape(), perm);
  DispatchBySize(ctx, src.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    TransposeTyped<U>(ctx.thread_pool(), src.data<U>(), dst.data<U>(), c.in_shape, c.perm);
  });
}

namespace {

// Whether the permutation moves no element (only size-1 dims change places): then the output
// can share the input's bytes.
bool MovesNothing(const Shape& shape, const std::vector<int64_t>& perm) {
  const Collapsed c = Collapse(shape, perm);
  for (size_t i = 0; i < c.perm.size(); ++i)
    if (c.perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

class Transpose final : public OpKernel {
 public:
  explicit Transpose(const KernelInfo& info) {
    if (info.HasAttr("perm")) {
      perm_ = info.GetInts("perm");
      has_perm_ = true;
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const size_t r = x.rank();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(r);
      for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(r - 1 - i);
    }
    if (perm.size() != r) ctx.Fail(StrCat("perm [", StrJoin(perm), "] does not match the input rank ", r));
    std::vector<char> seen(r, 0);
    for (int64_t& p : perm) {
      if (p < 0) p += static_cast<int64_t>(r);  // tolerated by other runtimes; spec lists [0, r)
      if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<size_t>(p)])
        ctx.Fail(StrCat("perm [", StrJoin(perm_), "] is not a permutation of the input's ", r, " dims"));
      seen[static_cast<size_t>(p)] = 1;
    }
    Shape out_shape(r);
    for (size_t i = 0; i < r; ++i) out_shape[i] = x.dim(static_cast<size_t>(perm[i]));
    if (MovesNothing(x.shape(), perm)) {
      ctx.SetOutput(0, Value(x.Reshaped(out_shape)));
      return;
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
    TransposeCopy(ctx, x, perm, y);
  }

 private:
  std::vector<int64_t> perm_;
  bool has_perm_ = false;
};

// DepthToSpace (DCR / CRD) and SpaceToDepth on NCHW: a 6-D transpose of a reshaped input.
class SpaceDepth final : public OpKernel {
 public:
  SpaceDepth(const KernelInfo& info, bool to_space) : to_space_(to_space) {
    blocksize_ = info.GetInt("blocksize");
    if (blocksize_ <= 0) info.Fail(StrCat("blocksize must be positive, got ", blocksize_));
    if (to_space && info.opset() >= 11) {
      const std::string mode = info.GetStringOr("mode", "DCR");
      if (mode != "DCR" && mode != "CRD") info.Fail(StrCat("mode must be DCR or CRD, got '", mode, "'"));
      crd_ = mode == "CRD";
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() != 4) ctx.Fail("input must be 4-D (N, C, H, W)");
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = blocksize_;
    Shape view, out_shape;
    std::vector<int64_t> perm;
    if (to_space_) {
      if (c % (b * b) != 0) ctx.Fail(StrCat("channels ", c, " are not a multiple of blocksize^2 = ", b * b));
      const int64_t oc = c / (b * b);
      if (crd_) {
        view = {n, oc, b, b, h, w};
        perm = {0, 1, 4, 2, 5, 3};
      } else {
        view = {n, b, b, oc, h, w};
        perm = {0, 3, 4, 1, 5, 2};
      }
      out_shape = {n, oc, h * b, w * b};
    } else {
      if (h % b != 0 || w % b != 0)
        ctx.Fail(StrCat("height ", h, " and width ", w, " must be multiples of blocksize ", b));
      view = {n, c, h / b, b, w / b, b};
      perm = {0, 3, 5, 1, 2, 4};
      out_shape = {n, c * b * b, h / b, w / b};
    }
    Shape permuted(6);
    for (size_t i = 0; i < 6; ++i) permuted[i] = view[static_cast<size_t>(perm[i])];
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
    Tensor y6 = y.Reshaped(permuted);
    TransposeCopy(ctx, x.Reshaped(view), perm, y6);
  }

 private:
  bool to_space_;
  bool crd_ = false;
  int64_t blocksize_ = 1;
};

ONYX_CPU_KERNEL("Transpose", 1, kOpsetMax, Transpose);

std::unique_ptr<OpKernel> MakeDepthToSpace(const KernelInfo& info) { return std::make_unique<SpaceDepth>(info, true); }
std::unique_ptr<OpKernel> MakeSpaceToDepth(const KernelInfo& info) { return std::make_unique<SpaceDepth>(info, false); }
ONYX_REGISTER_KERNEL_FN("CPU", "", "DepthToSpace", 1, 10, MakeDepthToSpace);   // DCR only
ONYX_REGISTER_KERNEL_FN("CPU", "", "DepthToSpace", 11, kOpsetMax, MakeDepthToSpace);  // + mode
ONYX_REGISTER_KERNEL_FN("CPU", "", "SpaceToDepth", 1, kOpsetMax, MakeSpaceToDepth);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
