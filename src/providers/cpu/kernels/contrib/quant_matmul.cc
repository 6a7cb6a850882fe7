// Integer matrix products of com.microsoft quantization, all on exact int32 accumulation
// acc[m, n] = sum_k (A[m, k] - a_zp) * (B[k, n] - b_zp[n]):
//   MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp?, b_zp?, bias?)
//       Y = acc * (a_scale * b_scale[n]) + bias[n], numpy batch broadcasting;
//   DynamicQuantizeMatMul(A float, B, b_scale, b_zp?, bias?): A is first quantized to uint8 with
//       DynamicQuantizeLinear's per-tensor parameters, then as above;
//   QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp?) with transA/transB/alpha:
//       acc += C (int32, broadcast to (M, N)); scale = alpha * a_scale * b_scale[n] (/ y_scale);
//       Y = round(acc * scale) + y_zp saturated when y_zp is given, else acc * scale (float).
// b_scale/b_zp are scalars or per column (N). Rounding is to nearest even, as ONNX Runtime.
// MatMulIntegerToFloat's scales, bias and Y may be float16 (ONNX Runtime's T1): computed in
// float, Y rounded once.
// QGemm runs on the int8 GEMM (linalg/q8_gemm.h), B packed once when constant; so do the other
// two when B is a constant 2-D matrix. Otherwise a constant B and zero point are centered into
// int16 once, when the kernel is created.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "linalg/q8_gemm.h"
#include "linalg/q8_gemv.h"
#include "linalg/q8_quantize.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/float_compute.h"
#include "providers/cpu/kernels/quantization/q8_matmul_to_float.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

// Values of an 8-bit tensor (uint8 or int8) as int32.
std::vector<int32_t> Int8Values(KernelContext& ctx, const Tensor& t, const char* name) {
  std::vector<int32_t> v(static_cast<size_t>(t.size()));
  if (t.dtype() == DataType::kUInt8) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<uint8_t>()[i];
  } else if (t.dtype() == DataType::kInt8) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<int8_t>()[i];
  } else {
    ctx.Fail(StrCat("input '", name, "' must be uint8 or int8, got ", DataTypeName(t.dtype())));
  }
  return v;
}

// A scalar or per-column (N) parameter expanded to N values.
template <typename V>
std::vector<V> PerColumn(KernelContext& ctx, const std::vector<V>& values, int64_t n, const char* name) {
  if (values.size() == 1) return std::vector<V>(static_cast<size_t>(n), values[0]);
  if (static_cast<int64_t>(values.size()) != n)
    ctx.Fail(StrCat("input '", name, "' must be a scalar or have ", n, " values, got ", values.size()));
  return values;
}

std::vector<float> FloatValues(KernelContext& ctx, const Tensor& t, const char* name) {
  if (t.dtype() != DataType::kFloat) ctx.Fail(StrCat("input '", name, "' must be float"));
  return std::vector<float>(t.data<float>(), t.data<float>() + t.size());
}

// acc[M, N] = (A - za)(B - zb) for one matrix pair; A row-major [M, K] (lda), B [K, N] (ldb = N).
void IntGemm(const int32_t* a, int64_t lda, int32_t za, const int16_t* b_centered, int64_t M, int64_t N, int64_t K,
             int32_t* acc, ThreadPool* pool) {
  ThreadPool::For(pool, M, 2.0 * N * K, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) {
      int32_t* row = acc + m * N;
      for (int64_t k = 0; k < K; ++k) {
        const int32_t av = a[m * lda + k] - za;
        if (av == 0) continue;
        const int16_t* br = b_centered + k * N;
        for (int64_t n = 0; n < N; ++n) row[n] += av * br[n];
      }
    }
  });
}

// (B - zb[n]) as int16 [K, N].
std::vector<int16_t> CenterB(const std::vector<int32_t>& b, const std::vector<int32_t>& zb, int64_t K, int64_t N,
                             int64_t offset) {
  std::vector<int16_t> c(static_cast<size_t>(K * N));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) c[k * N + n] = static_cast<int16_t>(b[offset + k * N + n] - zb[n]);
  return c;
}

// (B - zb) as int16 [K, N] from a constant 2-D B ([K, N], or [N, K] when trans_b) and its
// constant zero point (null: 0); empty when they do not fit (Compute then reports the problem).
std::vector<int16_t> PrepackB(const Tensor* b, const Tensor* zp, bool has_zp, bool trans_b) {
  if (!b || b->rank() != 2 || (has_zp && !zp)) return {};
  auto value = [](const Tensor& t, int64_t i) -> int32_t {
    return t.dtype() == DataType::kUInt8 ? t.data<uint8_t>()[i] : t.data<int8_t>()[i];
  };
  if (b->dtype() != DataType::kUInt8 && b->dtype() != DataType::kInt8) return {};
  const int64_t K = trans_b ? b->dim(1) : b->dim(0), N = trans_b ? b->dim(0) : b->dim(1);
  if (zp && (zp->dtype() != b->dtype() || (zp->size() != 1 && zp->size() != N))) return {};
  std::vector<int16_t> c(static_cast<size_t>(K * N));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      const int32_t z = zp ? value(*zp, zp->size() == 1 ? 0 : n) : 0;
      c[k * N + n] = static_cast<int16_t>(value(*b, trans_b ? n * K + k : k * N + n) - z);
    }
  return c;
}

// Batched A[..., M, K] x B[..., K, N] with numpy broadcasting of the batch dims; returns the
// int32 accumulators and sets the output shape.
std::vector<int32_t> BatchedIntMatMul(KernelContext& ctx, const Shape& as, const std::vector<int32_t>& a, int32_t za,
                                      const Shape& bs, const std::vector<int32_t>& b, const std::vector<int32_t>& zb,
                                      const std::vector<int16_t>* packed_b, Shape& out_shape) {
  if (as.empty() || bs.empty()) ctx.Fail("A and B must have rank >= 1");
  Shape a2 = as, b2 = bs;
  if (a2.size() == 1) a2.insert(a2.begin(), 1);
  if (b2.size() == 1) b2.push_back(1);
  const int64_t M = a2[a2.size() - 2], K = a2.back(), N = b2.back();
  if (b2[b2.size() - 2] != K) ctx.Fail(StrCat("inner dimensions differ: ", K, " vs ", b2[b2.size() - 2]));
  const Shape ab(a2.begin(), a2.end() - 2), bb(b2.begin(), b2.end() - 2);
  const Shape batch = BroadcastShapes({ab, bb});
  out_shape = batch;
  if (as.size() > 1) out_shape.push_back(M);
  if (bs.size() > 1) out_shape.push_back(N);
  const std::vector<int32_t> zbn = packed_b ? std::vector<int32_t>{} : PerColumn(ctx, zb, N, "b_zero_point");
  const int64_t batches = ShapeSize(batch);
  std::vector<int32_t> acc(static_cast<size_t>(batches * M * N), 0);
  const auto a_str = BroadcastStrides(ab, batch), b_str = BroadcastStrides(bb, batch);
  const int64_t b_batches = ShapeSize(bb);
  std::vector<std::vector<int16_t>> centered(static_cast<size_t>(b_batches));
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t ao = 0, bo = 0, rem = bi;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      ao += idx * a_str[d];
      bo += idx * b_str[d];
    }
    const int16_t* bc = packed_b ? packed_b->data() : nullptr;
    if (!bc) {
      if (centered[bo].empty() && K * N > 0) centered[bo] = CenterB(b, zbn, K, N, bo * K * N);
      bc = centered[bo].data();
    }
    IntGemm(a.data() + ao * M * K, K, za, bc, M, N, K, acc.data() + bi * M * N, ctx.thread_pool());
  }
  return acc;
}

class MatMulIntegerToFloat final : public OpKernel {
 public:
  MatMulIntegerToFloat(const KernelInfo& info, bool dynamic) : dynamic_(dynamic) {
    const size_t zp_index = dynamic ? 3 : 5;
    q8_b_ = PackConstantQ8B(info, 1, zp_index);
    if (q8_b_.empty())
      packed_b_ = PrepackB(info.ConstantInput(1), info.has_input(zp_index) ? info.ConstantInput(zp_index) : nullptr,
                           info.has_input(zp_index), false);
  }

  void Compute(KernelContext& ctx) const override {
    if (!HasHalfInputs(ctx)) return ComputeFloat(ctx);
    // float16 scales and bias (ONNX Runtime's T1 = float16): computed in float, Y rounded once.
    const DataType dt = dynamic_ ? CommonInputType(ctx, {0, 2, 4}) : CommonInputType(ctx, {2, 3, 6});
    FloatComputeContext wide(ctx);
    ComputeFloat(wide);
    wide.Finish(dt);
  }

 private:
  void ComputeFloat(KernelContext& ctx) const {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    // Input positions differ: DynamicQuantizeMatMul(A, B, b_scale, b_zp, bias),
    // MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp, b_zp, bias).
    const Tensor& b_scale = ctx.required_input(dynamic_ ? 2 : 3);
    const Tensor* b_zp = ctx.input(dynamic_ ? 3 : 5);
    const Tensor* bias = ctx.input(dynamic_ ? 4 : 6);
    if (!q8_b_.empty() && (dynamic_ ? a.dtype() == DataType::kFloat : a.dtype() == DataType::kUInt8 ||
                                                                            a.dtype() == DataType::kInt8)) {
      // A constant 2-D B: the int8 GEMM (quantization/q8_matmul_to_float.h).
      float as = 1.0f;
      int32_t az = 0;
      if (!dynamic_) {
        const Tensor& a_scale_t = ctx.required_input(2);
        if (a_scale_t.dtype() != DataType::kFloat || a_scale_t.size() != 1)
          ctx.Fail("a_scale must be a float scalar (per-tensor)");
        as = a_scale_t.data<float>()[0];
        if (const Tensor* a_zp = ctx.input(4)) {
          if (a_zp->dtype() != a.dtype() || a_zp->size() != 1) ctx.Fail("a_zero_point must be a scalar of A's type");
          az = Int8Values(ctx, *a_zp, "a_zero_point")[0];
        }
      }
      Q8MatMulToFloat(ctx, a, dynamic_, as, az, q8_b_, b_scale, bias);
      return;
    }
    std::vector<int32_t> av;
    float a_scale = 1.0f;
    int32_t za = 0;
    if (dynamic_) {
      if (a.dtype() != DataType::kFloat) ctx.Fail("A must be float");
      av = QuantizeDynamic(a, a_scale, za);
    } else {
      av = Int8Values(ctx, a, "A");
      const std::vector<float> as = FloatValues(ctx, ctx.required_input(2), "a_scale");
      if (as.size() != 1) ctx.Fail("a_scale must be a scalar (per-tensor)");
      a_scale = as[0];
      if (const Tensor* a_zp = ctx.input(4)) {
        if (a_zp->dtype() != a.dtype() || a_zp->size() != 1) ctx.Fail("a_zero_point must be a scalar of A's type");
        za = Int8Values(ctx, *a_zp, "a_zero_point")[0];
      }
    }
    const bool packed = !packed_b_.empty();
    const std::vector<int32_t> bv = packed ? std::vector<int32_t>{} : Int8Values(ctx, b, "B");
    std::vector<int32_t> zb{0};
    if (b_zp) {
      if (b_zp->dtype() != b.dtype()) ctx.Fail("b_zero_point must have B's type");
      if (!packed) zb = Int8Values(ctx, *b_zp, "b_zero_point");
    }
    Shape out_shape;
    const std::vector<int32_t> acc =
        BatchedIntMatMul(ctx, a.shape(), av, za, b.shape(), bv, zb, packed ? &packed_b_ : nullptr, out_shape);
    const int64_t N = b.rank() > 1 ? b.shape().back() : 1;
    const std::vector<float> bs = PerColumn(ctx, FloatValues(ctx, b_scale, "b_scale"), N, "b_scale");
    std::vector<float> bias_v;
    if (bias) {
      bias_v = FloatValues(ctx, *bias, "bias");
      if (static_cast<int64_t>(bias_v.size()) != N) ctx.Fail(StrCat("bias must have ", N, " values"));
    }
    std::vector<float> mult(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) mult[n] = a_scale * bs[n];
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, out_shape);
    float* yd = y.data<float>();
    for (int64_t i = 0; i < y.size(); ++i) {
      const int64_t n = i % N;
      yd[i] = static_cast<float>(acc[i]) * mult[n] + (bias ? bias_v[n] : 0.0f);
    }
  }

  // DynamicQuantizeLinear's codes, scale and zero point (the kernel's own loops), widened to int32.
  static std::vector<int32_t> QuantizeDynamic(const Tensor& a, float& scale, int32_t& zp) {
    const float* d = a.data<float>();
    const int64_t n = a.size();
    float lo = 0.0f, hi = 0.0f;
    linalg::Q8MinMax(d, n, &lo, &hi);
    const DynamicQuantParams p = DynamicQuantParamsOf(lo, hi);
    scale = p.scale;
    zp = p.zero_point;
    std::vector<uint8_t> codes(static_cast<size_t>(n));
    linalg::Q8QuantizeU8(d, n, p.scale, p.zero_point, codes.data());
    return std::vector<int32_t>(codes.begin(), codes.end());
  }

  bool dynamic_;
  std::vector<int16_t> packed_b_;  // (B - b_zp) when both are constant
  linalg::PackedQ8B q8_b_;         // the same for the int8 GEMM (2-D B)
};

class QGemm final : public OpKernel {
 public:
  explicit QGemm(const KernelInfo& info)
      : alpha_(info.GetFloatOr("alpha", 1.0f)),
        trans_a_(info.GetIntOr("transA", 0) != 0),
        trans_b_(info.GetIntOr("transB", 0) != 0) {
    const Tensor* b = info.ConstantInput(3);
    const Tensor* zp = info.ConstantInput(5);
    if (b != nullptr && zp != nullptr && b->rank() == 2) {
      const linalg::PackMemory memory = linalg_kernels::PackMemoryFor(info);
      q8_b_ = PackB(*b, *zp, info.thread_pool(), &memory);
      if (!q8_b_.empty()) gemv_b_ = PackGemvB(*b, *zp);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(3);
    const Tensor* c = ctx.input(6);
    const Tensor* y_scale = ctx.input(7);
    const Tensor* y_zp = ctx.input(8);
    if (a.rank() != 2 || b.rank() != 2) ctx.Fail("A and B must be 2-D");
    const int64_t M = trans_a_ ? a.dim(1) : a.dim(0), K = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t Kb = trans_b_ ? b.dim(1) : b.dim(0), N = trans_b_ ? b.dim(0) : b.dim(1);
    if (K != Kb) ctx.Fail(StrCat("inner dimensions differ: ", K, " vs ", Kb));
    const std::vector<float> as = FloatValues(ctx, ctx.required_input(1), "a_scale");
    const Tensor& a_zp = ctx.required_input(2);
    if (as.size() != 1 || a_zp.size() != 1 || a_zp.dtype() != a.dtype())
      ctx.Fail("a_scale and a_zero_point must be scalars (a_zero_point of A's type)");
    const int32_t za = Int8Values(ctx, a_zp, "a_zero_point")[0];
    const Tensor& b_zp_t = ctx.required_input(5);
    if (b_zp_t.dtype() != b.dtype()) ctx.Fail("b_zero_point must have B's type");
    const std::vector<float> bs = PerColumn(ctx, FloatValues(ctx, ctx.required_input(4), "b_scale"), N, "b_scale");
    if (b.dtype() != DataType::kUInt8 && b.dtype() != DataType::kInt8)
      ctx.Fail(StrCat("input 'B' must be uint8 or int8, got ", DataTypeName(b.dtype())));
    PerColumn(ctx, Int8Values(ctx, b_zp_t, "b_zero_point"), N, "b_zero_point");  // checks its size
    float ys = 1.0f;
    if (y_scale) {
      const std::vector<float> v = FloatValues(ctx, *y_scale, "y_scale");
      if (v.size() != 1) ctx.Fail("y_scale must be a scalar");
      ys = v[0];
    }
    if (y_zp && (y_zp->size() != 1 || (y_zp->dtype() != DataType::kUInt8 && y_zp->dtype() != DataType::kInt8)))
      ctx.Fail("y_zero_point must be a uint8 or int8 scalar");

    // A as [M, K] codes (transposed when transA) and B packed for the int8 GEMM (once when
    // constant).
    const auto* a_bytes = static_cast<const uint8_t*>(a.raw_data());
    std::vector<uint8_t> a_mk;
    if (trans_a_) {
      a_mk.resize(static_cast<size_t>(M * K));
      for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < K; ++k) a_mk[m * K + k] = a_bytes[k * M + m];
      a_bytes = a_mk.data();
    }
    linalg::PackedQ8B b_local;
    if (q8_b_.empty()) b_local = PackB(b, b_zp_t, ctx.thread_pool());
    const linalg::PackedQ8B& packed = q8_b_.empty() ? b_local : q8_b_;
    if (packed.k() != K || packed.n() != N) ctx.Fail("B changed shape since it was packed");
    std::vector<float> scale(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      scale[n] = alpha_ * as[0] * bs[n];
      if (y_scale) scale[n] /= ys;
    }
    // C, checked, and whether it is one row (then it is the quantized output stage's bias).
    std::vector<int64_t> c_strides{0, 0};
    if (c) {
      if (c->dtype() != DataType::kInt32) ctx.Fail("C must be int32");
      const Shape& cs = c->shape();
      Shape target{M, N};
      bool ok = cs.size() <= 2;
      for (size_t i = 0; ok && i < cs.size(); ++i) ok = cs[i] == 1 || cs[i] == target[2 - cs.size() + i];
      if (!ok) ctx.Fail(StrCat("C shape ", ShapeToString(cs), " does not broadcast to (", M, ", ", N, ")"));
      c_strides = BroadcastStrides(cs, target);
    }
    const bool a_signed = a.dtype() == DataType::kInt8;
    // One row against a constant B: the matrix-vector kernel (linalg/q8_gemv.h), then the
    // output loop below (the GEMM would compute a whole tile of rows for it).
    const bool use_gemv = M == 1 && !gemv_b_.empty() && gemv_b_.k() == K && gemv_b_.n() == N;
    if (y_zp && c_strides[0] == 0 && !use_gemv) {
      // Requantized in the GEMM's output stage, C as the per-column int32 bias.
      std::vector<int32_t> bias;
      if (c) {
        bias.resize(static_cast<size_t>(N));
        for (int64_t n = 0; n < N; ++n) bias[n] = c->data<int32_t>()[n * c_strides[1]];
      }
      const bool is_signed = y_zp->dtype() == DataType::kInt8;
      Tensor& y = ctx.AllocateOutput(0, y_zp->dtype(), {M, N});
      linalg::Q8Output out;
      out.kind = linalg::Q8Output::kQuantized;
      out.c = y.raw_data();
      out.ldc = N;
      out.scale = scale.data();
      out.scale_per_column = true;
      out.bias_int = c ? bias.data() : nullptr;
      out.zero_point = is_signed ? y_zp->data<int8_t>()[0] : y_zp->data<uint8_t>()[0];
      out.out_signed = is_signed;
      linalg::Q8Gemm(M, a_bytes, a_signed, K, &za, false, packed, out, ctx.thread_pool());
      return;
    }
    // Otherwise int32 sums, C added, then scaled (C is scaled with the sum, as one int32).
    std::vector<int32_t> acc(static_cast<size_t>(M * N), 0);
    if (use_gemv) {
      linalg::Q8Gemv(a_bytes, a_signed, za, gemv_b_, acc.data(), ctx.thread_pool());
    } else {
      linalg::Q8Output out;
      out.kind = linalg::Q8Output::kInt32;
      out.c = acc.data();
      out.ldc = N;
      linalg::Q8Gemm(M, a_bytes, a_signed, K, &za, false, packed, out, ctx.thread_pool());
    }
    if (c)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) acc[m * N + n] += c->data<int32_t>()[m * c_strides[0] + n * c_strides[1]];
    if (y_zp) {
      Tensor& y = ctx.AllocateOutput(0, y_zp->dtype(), {M, N});
      const bool is_signed = y_zp->dtype() == DataType::kInt8;
      const int32_t zy = is_signed ? y_zp->data<int8_t>()[0] : y_zp->data<uint8_t>()[0];
      const float lo = static_cast<float>((is_signed ? -128 : 0) - zy), hi = static_cast<float>((is_signed ? 127 : 255) - zy);
      for (int64_t i = 0; i < M * N; ++i) {
        const float v = std::clamp(static_cast<float>(acc[i]) * scale[i % N], lo, hi);
        const int32_t q = static_cast<int32_t>(std::nearbyint(v)) + zy;
        if (is_signed) y.data<int8_t>()[i] = static_cast<int8_t>(q);
        else y.data<uint8_t>()[i] = static_cast<uint8_t>(q);
      }
    } else {
      Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, {M, N});
      for (int64_t i = 0; i < M * N; ++i) y.data<float>()[i] = static_cast<float>(acc[i]) * scale[i % N];
    }
  }

 private:
  // B (2-D, [K, N] or [N, K] when transB) with its zero point (one, or one per column), packed;
  // empty when they do not fit (Compute then reports the problem).
  linalg::PackedQ8B PackB(const Tensor& b, const Tensor& zp, ThreadPool* pool,
                          const linalg::PackMemory* memory = nullptr) const {
    if (b.rank() != 2 || (b.dtype() != DataType::kUInt8 && b.dtype() != DataType::kInt8) || zp.dtype() != b.dtype())
      return {};
    const int64_t k = trans_b_ ? b.dim(1) : b.dim(0), n = trans_b_ ? b.dim(0) : b.dim(1);
    if (zp.size() != 1 && zp.size() != n) return {};
    std::vector<int32_t> z(static_cast<size_t>(zp.size()));
    for (int64_t i = 0; i < zp.size(); ++i)
      z[i] = zp.dtype() == DataType::kUInt8 ? zp.data<uint8_t>()[i] : zp.data<int8_t>()[i];
    return linalg::PackedQ8B(trans_b_, k, n, b.raw_data(), b.dtype() == DataType::kInt8, b.dim(1), z.data(),
                             z.size() > 1, pool, memory);
  }

  // The same B packed for the matrix-vector kernel (checked by PackB first).
  linalg::PackedQ8Gemv PackGemvB(const Tensor& b, const Tensor& zp) const {
    const int64_t k = trans_b_ ? b.dim(1) : b.dim(0), n = trans_b_ ? b.dim(0) : b.dim(1);
    std::vector<int32_t> z(static_cast<size_t>(zp.size()));
    for (int64_t i = 0; i < zp.size(); ++i)
      z[i] = zp.dtype() == DataType::kUInt8 ? zp.data<uint8_t>()[i] : zp.data<int8_t>()[i];
    return linalg::PackedQ8Gemv(trans_b_, k, n, b.raw_data(), b.dtype() == DataType::kInt8, b.dim(1), z.data(),
                                z.size() > 1);
  }

  float alpha_;
  bool trans_a_, trans_b_;
  linalg::PackedQ8B q8_b_;         // B and its zero point packed when both are constant
  linalg::PackedQ8Gemv gemv_b_;    // the same for one row of A
};

ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "MatMulIntegerToFloat", 1, kOpsetMax,
                        [](const KernelInfo& info) -> std::unique_ptr<OpKernel> {
                          return std::make_unique<MatMulIntegerToFloat>(info, false);
                        });
ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "DynamicQuantizeMatMul", 1, kOpsetMax,
                        [](const KernelInfo& info) -> std::unique_ptr<OpKernel> {
                          return std::make_unique<MatMulIntegerToFloat>(info, true);
                        });
ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "QGemm", 1, kOpsetMax, QGemm);

}  // namespace
}  // namespace onyx::contrib
