// MatMulInteger (opset 10) and QLinearMatMul (10; 21 adds float16/bfloat16 scales and float8
// operands): numpy matmul of quantized operands. Integer operands run on the int8 GEMM
// (linalg/q8_gemm.h), exactly in int32 with B packed once when constant; zero points (and
// QLinearMatMul's scales) are per tensor, per row of a / per column of b
// (1-D), or N-D shaped [..., M, 1] / [..., 1, N] with batch dims broadcast.
#include <algorithm>
#include <cmath>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/q8_gemm.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/cast/element_convert.h"
#include "providers/cpu/kernels/linalg/batched_gemm.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// numpy matmul geometry: 1-D operands promoted, batch dims broadcast.
struct MatMulShape {
  Shape a, b;             // operand shapes after promotion (rank >= 2)
  Shape batch;            // broadcast batch dims
  Shape out;              // output shape (promoted dims dropped again)
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> a_batch_strides, b_batch_strides;  // in matrices
};

MatMulShape ResolveMatMul(KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.rank() == 0 || b.rank() == 0) ctx.Fail("matmul operands must have rank >= 1");
  MatMulShape s;
  s.a = a.shape();
  s.b = b.shape();
  const bool a_vec = s.a.size() == 1, b_vec = s.b.size() == 1;
  if (a_vec) s.a.insert(s.a.begin(), 1);
  if (b_vec) s.b.push_back(1);
  s.m = s.a[s.a.size() - 2];
  s.k = s.a.back();
  s.n = s.b.back();
  if (s.b[s.b.size() - 2] != s.k)
    ctx.Fail(StrCat("inner dimensions differ: ", s.k, " vs ", s.b[s.b.size() - 2]));
  const Shape a_batch(s.a.begin(), s.a.end() - 2), b_batch(s.b.begin(), s.b.end() - 2);
  s.batch = BroadcastShapes({a_batch, b_batch});
  s.out = s.batch;
  if (!a_vec) s.out.push_back(s.m);
  if (!b_vec) s.out.push_back(s.n);
  s.a_batch_strides = BroadcastStrides(a_batch, s.batch);
  s.b_batch_strides = BroadcastStrides(b_batch, s.batch);
  return s;
}

// Offset of batch `index` in an input with the given broadcast strides.
int64_t BatchOffset(const Shape& batch, const std::vector<int64_t>& strides, int64_t index) {
  int64_t off = 0;
  for (size_t d = batch.size(); d-- > 0;) {
    off += (index % batch[d]) * strides[d];
    index /= batch[d];
  }
  return off;
}

// A quantization parameter (scale or zero point) of operand a (per row) or b (per column).
struct MatParam {
  std::vector<double> values;
  std::vector<int64_t> batch_strides;  // in blocks of `block` values; empty: same for all batches
  int64_t block = 0;                   // values per batch block
  int64_t step = 0;                    // stride along rows (a) / columns (b); 0 when per tensor

  double At(const Shape& batch, int64_t batch_index, int64_t rc) const {
    const int64_t base = batch_strides.empty() ? 0 : BatchOffset(batch, batch_strides, batch_index) * block;
    return values[static_cast<size_t>(base + rc * step)];
  }
};

MatParam ResolveParam(KernelContext& ctx, const char* what, const Tensor* t, const MatMulShape& s, bool is_a) {
  MatParam p;
  if (t == nullptr) {
    p.values = {0.0};
    return p;
  }
  p.values = AllAsDoubles(*t);
  const int64_t len = is_a ? s.m : s.n;
  if (t->size() == 1) return p;
  if (t->rank() == 1 && t->dim(0) == len) {
    p.step = 1;
    return p;
  }
  const Shape& operand = is_a ? s.a : s.b;
  const Shape& shape = t->shape();
  bool ok = shape.size() == operand.size() && shape.size() >= 2;
  if (ok) {
    const int64_t r = shape[shape.size() - 2], c = shape.back();
    ok = is_a ? (c == 1 && (r == s.m || r == 1)) : (r == 1 && (c == s.n || c == 1));
    const Shape pb(shape.begin(), shape.end() - 2);
    const size_t offset = s.batch.size() - pb.size();
    for (size_t d = 0; ok && d < pb.size(); ++d) ok = pb[d] == 1 || pb[d] == s.batch[offset + d];
    if (ok) {
      p.step = (is_a ? r : c) == 1 ? 0 : 1;
      p.block = r * c;
      p.batch_strides = BroadcastStrides(pb, s.batch);
    }
  }
  if (!ok)
    ctx.Fail(StrCat(what, " of shape ", ShapeToString(shape), " is neither a scalar, a ", is_a ? "per-row" : "per-column",
                    " vector of ", len, " nor shaped [..., ", is_a ? StrCat(s.m, ", 1") : StrCat("1, ", s.n), "]"));
  return p;
}

bool IsInt8Type(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

// Zero point (or scale) values of one batch, one per row of a / column of b, as int32 / float.
std::vector<int32_t> ZeroPoints(const MatParam& p, const Shape& batch, int64_t bi, int64_t len) {
  std::vector<int32_t> out(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) out[static_cast<size_t>(i)] = static_cast<int32_t>(p.At(batch, bi, i));
  return out;
}

// b packed for the int8 GEMM at session creation when b and its zero point are constants, b is
// 2-D and the zero point per tensor or per column; empty otherwise.
linalg::PackedQ8B PrepackB(const KernelInfo& info, size_t b_index, size_t zp_index) {
  const Tensor* b = info.ConstantInput(b_index);
  const Tensor* zp = info.has_input(zp_index) ? info.ConstantInput(zp_index) : nullptr;
  if (b == nullptr || b->rank() != 2 || (info.has_input(zp_index) && zp == nullptr) || !IsInt8Type(b->dtype()) ||
      (zp && (zp->dtype() != b->dtype() || !(zp->size() == 1 || (zp->rank() == 1 && zp->dim(0) == b->dim(1))))))
    return {};  // Compute reports any error
  const std::vector<int64_t> z = zp ? AllAsInt64s(*zp) : std::vector<int64_t>{0};
  const std::vector<int32_t> zps(z.begin(), z.end());
  const linalg::PackMemory memory = linalg_kernels::PackMemoryFor(info);
  return linalg::PackedQ8B(false, b->dim(0), b->dim(1), b->raw_data(), b->dtype() == DataType::kInt8, b->dim(1),
                           zps.data(), zps.size() > 1, info.thread_pool(), &memory);
}

// The int8 product of one batch into `out` (already pointing at the batch's output);
// `prepacked` (when not empty) is b with its zero point.
void Int8Batch(const Tensor& a, const Tensor& b, const MatMulShape& s, const MatParam& a_zp, const MatParam& b_zp,
               int64_t bi, const linalg::PackedQ8B& prepacked, const linalg::Q8Output& out, ThreadPool* pool) {
  const int64_t a_off = BatchOffset(s.batch, s.a_batch_strides, bi) * s.m * s.k;
  const auto* a_data = static_cast<const uint8_t*>(a.raw_data()) + a_off;
  const std::vector<int32_t> azp = ZeroPoints(a_zp, s.batch, bi, s.m);
  const bool a_signed = a.dtype() == DataType::kInt8;
  if (!prepacked.empty()) {
    linalg::Q8Gemm(s.m, a_data, a_signed, s.k, azp.data(), true, prepacked, out, pool);
    return;
  }
  const int64_t b_off = BatchOffset(s.batch, s.b_batch_strides, bi) * s.k * s.n;
  const std::vector<int32_t> bzp = ZeroPoints(b_zp, s.batch, bi, s.n);
  const linalg::PackedQ8B packed(false, s.k, s.n, static_cast<const uint8_t*>(b.raw_data()) + b_off,
                                 b.dtype() == DataType::kInt8, s.n, bzp.data(), true, pool);
  linalg::Q8Gemm(s.m, a_data, a_signed, s.k, azp.data(), true, packed, out, pool);
}

// Runs fn(bi, pool) for every batch. Batches of small products (attention's heads) share the
// threads one batch each, every GEMM on one thread (linalg_kernels::ForEachProduct's rule):
// split inside, each thread would pack the same A (and a per-call B) for a few column panels,
// and wait at a join per batch.
template <typename Fn>
void ForEachBatch(int64_t batches, const MatMulShape& s, ThreadPool* pool, Fn&& fn) {
  const double cost = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  linalg_kernels::ForEachProduct(batches, cost, pool, false, fn);
}

class MatMulInteger final : public OpKernel {
 public:
  explicit MatMulInteger(const KernelInfo& info) : packed_b_(PrepackB(info, 1, 3)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor* a_zp = ctx.input(2);
    const Tensor* b_zp = ctx.input(3);
    if (!IsInt8Type(a.dtype()) || !IsInt8Type(b.dtype()))
      ctx.Fail(StrCat("operands must be int8 or uint8, not ", DataTypeName(a.dtype()), " and ",
                      DataTypeName(b.dtype())));
    if ((a_zp && a_zp->dtype() != a.dtype()) || (b_zp && b_zp->dtype() != b.dtype()))
      ctx.Fail("a zero point's type differs from its operand's");
    const MatMulShape s = ResolveMatMul(ctx, a, b);
    const MatParam azp = ResolveParam(ctx, "a_zero_point", a_zp, s, true);
    const MatParam bzp = ResolveParam(ctx, "b_zero_point", b_zp, s, false);
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt32, s.out);
    const int64_t batches = ShapeSize(s.batch);
    ForEachBatch(batches, s, ctx.thread_pool(), [&](int64_t bi, ThreadPool* pool) {
      linalg::Q8Output out;
      out.c = y.data<int32_t>() + bi * s.m * s.n;
      out.ldc = s.n;
      Int8Batch(a, b, s, azp, bzp, bi, packed_b_, out, pool);
    });
  }

 private:
  linalg::PackedQ8B packed_b_;
};

bool IsFloat8(DataType t) {
  return t == DataType::kFloat8E4M3FN || t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2 ||
         t == DataType::kFloat8E5M2FNUZ;
}

class QLinearMatMul final : public OpKernel {
 public:
  explicit QLinearMatMul(const KernelInfo& info) : opset_(info.opset()), packed_b_(PrepackB(info, 3, 5)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& a_scale = ctx.required_input(1);
    const Tensor& a_zp = ctx.required_input(2);
    const Tensor& b = ctx.required_input(3);
    const Tensor& b_scale = ctx.required_input(4);
    const Tensor& b_zp = ctx.required_input(5);
    const Tensor& y_scale = ctx.required_input(6);
    const Tensor& y_zp = ctx.required_input(7);
    const bool float8 = opset_ >= 21 && IsFloat8(a.dtype()) && IsFloat8(b.dtype()) && IsFloat8(y_zp.dtype());
    if (!float8 && !(IsInt8Type(a.dtype()) && IsInt8Type(b.dtype()) && IsInt8Type(y_zp.dtype())))
      ctx.Fail(StrCat("operands must be int8/uint8", opset_ >= 21 ? " or float8" : "", ", not ",
                      DataTypeName(a.dtype()), ", ", DataTypeName(b.dtype()), " -> ", DataTypeName(y_zp.dtype())));
    if (a_zp.dtype() != a.dtype() || b_zp.dtype() != b.dtype())
      ctx.Fail("a zero point's type differs from its operand's");
    const DataType st = a_scale.dtype();
    const bool scale_ok = st == DataType::kFloat || (opset_ >= 21 && (st == DataType::kFloat16 || st == DataType::kBFloat16));
    if (!scale_ok || b_scale.dtype() != st || y_scale.dtype() != st)
      ctx.Fail(StrCat("scales must all be float", opset_ >= 21 ? ", float16 or bfloat16" : "", ", not ",
                      DataTypeName(st), ", ", DataTypeName(b_scale.dtype()), ", ", DataTypeName(y_scale.dtype())));
    if (y_scale.size() != 1 || y_zp.size() != 1) ctx.Fail("y_scale and y_zero_point must be scalars");
    const MatMulShape s = ResolveMatMul(ctx, a, b);
    const MatParam as = ResolveParam(ctx, "a_scale", &a_scale, s, true);
    const MatParam azp = ResolveParam(ctx, "a_zero_point", &a_zp, s, true);
    const MatParam bs = ResolveParam(ctx, "b_scale", &b_scale, s, false);
    const MatParam bzp = ResolveParam(ctx, "b_zero_point", &b_zp, s, false);
    const double ys = AllAsDoubles(y_scale)[0];
    const double yzp = AllAsDoubles(y_zp)[0];
    Tensor& y = ctx.AllocateOutput(0, y_zp.dtype(), s.out);
    const int64_t m = s.m, n = s.n, k = s.k;
    const int64_t batches = ShapeSize(s.batch);
    int64_t lo = 0, hi = 0;
    QuantIntegerRange(y_zp.dtype(), &lo, &hi);
    // Sized only on the paths that need them (the per-tensor int8 path writes y directly):
    // zeroing m x n doubles and int32s per call cost as much as a small GEMM.
    std::vector<double> out;
    std::vector<int32_t> acc;
    std::vector<float> af, bf, cf;
    // One a_scale for all rows: the requantization runs in the GEMM's output stage, in float as
    // ONNX Runtime does it (below, the per-row and float8 forms).
    const bool row_scale = as.step != 0 || !as.batch_strides.empty();
    if (!float8 && !row_scale) {
      ForEachBatch(batches, s, ctx.thread_pool(), [&](int64_t bi, ThreadPool* pool) {
        std::vector<float> mult(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j)
          mult[static_cast<size_t>(j)] =
              static_cast<float>(RoundToType(RoundToType(as.At(s.batch, bi, 0) * bs.At(s.batch, bi, j), st) / ys, st));
        linalg::Q8Output q;
        q.kind = linalg::Q8Output::kQuantized;
        q.c = static_cast<uint8_t*>(y.raw_data()) + bi * m * n;
        q.ldc = n;
        q.scale = mult.data();
        q.scale_per_column = true;
        q.zero_point = static_cast<int32_t>(yzp);
        q.out_signed = y.dtype() == DataType::kInt8;
        Int8Batch(a, b, s, azp, bzp, bi, packed_b_, q, pool);
      });
      return;
    }
    for (int64_t bi = 0; bi < batches; ++bi) {
      if (float8) {
        // Dequantize both operands, multiply in float, requantize below.
        af.assign(static_cast<size_t>(m * k), 0.0f);
        bf.assign(static_cast<size_t>(k * n), 0.0f);
        cf.assign(static_cast<size_t>(m * n), 0.0f);
        std::vector<double> tmp(static_cast<size_t>(std::max(m * k, k * n)));
        LoadDoubles(a, BatchOffset(s.batch, s.a_batch_strides, bi) * m * k, m * k, tmp.data());
        for (int64_t i = 0; i < m * k; ++i)
          af[static_cast<size_t>(i)] = static_cast<float>(tmp[static_cast<size_t>(i)] - azp.At(s.batch, bi, i / k));
        LoadDoubles(b, BatchOffset(s.batch, s.b_batch_strides, bi) * k * n, k * n, tmp.data());
        for (int64_t i = 0; i < k * n; ++i)
          bf[static_cast<size_t>(i)] = static_cast<float>(tmp[static_cast<size_t>(i)] - bzp.At(s.batch, bi, i % n));
        linalg::Sgemm(false, false, m, n, k, 1.0f, af.data(), k, bf.data(), n, 0.0f, cf.data(), n, ctx.thread_pool());
      } else {
        acc.resize(static_cast<size_t>(m * n));
        linalg::Q8Output q;
        q.c = acc.data();
        q.ldc = n;
        Int8Batch(a, b, s, azp, bzp, bi, packed_b_, q, ctx.thread_pool());
      }
      out.resize(static_cast<size_t>(m * n));
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          // The multiplier is computed in the scales' type, as the reference does; the product
          // with the accumulator in double.
          const double mult = RoundToType(
              RoundToType(as.At(s.batch, bi, i) * bs.At(s.batch, bi, j), st) / ys, st);
          const size_t o = static_cast<size_t>(i * n + j);
          const double v = (float8 ? static_cast<double>(cf[o]) : static_cast<double>(acc[o])) * mult;
          if (float8) out[o] = v + yzp;
          else out[o] = static_cast<double>(RoundAndSaturate(std::nearbyint(v) + yzp, lo, hi, lo));
        }
      }
      ConvertOptions opts;  // float8 results saturate
      StoreDoubles(y, bi * m * n, m * n, out.data(), opts);
    }
  }

 private:
  int opset_;
  linalg::PackedQ8B packed_b_;
};

ONYX_CPU_KERNEL("MatMulInteger", 10, kOpsetMax, MatMulInteger);
ONYX_CPU_KERNEL("QLinearMatMul", 10, 20, QLinearMatMul);  // int8/uint8, float scales
ONYX_CPU_KERNEL("QLinearMatMul", 21, kOpsetMax, QLinearMatMul);  // + float16/bfloat16 scales, float8

}  // namespace
}  // namespace onyx
