#include "providers/cpu/kernels/quantization/q8_matmul_to_float.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "linalg/q8_quantize.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/kernel.h"

namespace onyx {

linalg::PackedQ8B PackConstantQ8B(const KernelInfo& info, size_t b_index, size_t zp_index) {
  const Tensor* b = info.ConstantInput(b_index);
  const bool has_zp = info.has_input(zp_index);
  const Tensor* zp = has_zp ? info.ConstantInput(zp_index) : nullptr;
  if (b == nullptr || b->rank() != 2 || (has_zp && zp == nullptr)) return {};
  if (b->dtype() != DataType::kUInt8 && b->dtype() != DataType::kInt8) return {};
  if (zp && (zp->dtype() != b->dtype() || (zp->size() != 1 && !(zp->rank() == 1 && zp->dim(0) == b->dim(1)))))
    return {};  // Compute reports the problem
  const std::vector<int64_t> z = zp ? AllAsInt64s(*zp) : std::vector<int64_t>{0};
  const std::vector<int32_t> zps(z.begin(), z.end());
  const linalg::PackMemory memory = linalg_kernels::PackMemoryFor(info);
  return linalg::PackedQ8B(false, b->dim(0), b->dim(1), b->raw_data(), b->dtype() == DataType::kInt8, b->dim(1),
                           zps.data(), zps.size() > 1, info.thread_pool(), &memory);
}

void Q8MatMulToFloat(KernelContext& ctx, const Tensor& a, bool quantize_a, float a_scale, int32_t a_zero,
                     const linalg::PackedQ8B& b, const Tensor& b_scale, const Tensor* bias) {
  const int64_t k = b.k(), n = b.n();
  if (a.rank() == 0 || a.shape().back() != k)
    ctx.Fail(StrCat("A ", a.Describe(), " does not end in B's inner dimension ", k));
  if (b_scale.dtype() != DataType::kFloat || (b_scale.size() != 1 && b_scale.size() != n))
    ctx.Fail(StrCat("b_scale must be float with 1 or ", n, " values, not ", b_scale.Describe()));
  if (bias && (bias->dtype() != DataType::kFloat || bias->size() != n))
    ctx.Fail(StrCat("bias must be float with ", n, " values, not ", bias->Describe()));
  const int64_t rows = k == 0 ? 0 : a.size() / k;
  Shape out_shape(a.shape().begin(), a.shape().end() - 1);
  out_shape.push_back(n);
  Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, out_shape);
  if (y.size() == 0) return;
  std::vector<uint8_t> codes;
  const void* a_codes = a.raw_data();
  bool a_signed = a.dtype() == DataType::kInt8;
  if (quantize_a) {  // DynamicQuantizeLinear's parameters (scale 1 for an all-zero A)
    const float* d = a.data<float>();
    // Range and codes by chunks on the threads (min / max and the element-wise rounding give
    // the same result in any split): on one thread this pass was a quarter of the 2-thread
    // time of BERT's 3072-wide products.
    const int64_t size = static_cast<int64_t>(a.size());
    const int64_t chunk = 16384;
    const int64_t chunks = (size + chunk - 1) / chunk;
    float lo = 0.0f, hi = 0.0f;
    linalg::Q8MinMax(d, size, &lo, &hi, ctx.thread_pool());
    const DynamicQuantParams q = DynamicQuantParamsOf(lo, hi);
    a_scale = q.scale;
    a_zero = q.zero_point;
    codes.resize(static_cast<size_t>(a.size()));
    ThreadPool::For(ctx.thread_pool(), chunks, static_cast<double>(chunk) * 2.0, [&](int64_t c0, int64_t c1) {
      const int64_t begin = c0 * chunk, end = std::min(size, c1 * chunk);
      linalg::Q8QuantizeU8(d + begin, end - begin, a_scale, static_cast<uint8_t>(a_zero), codes.data() + begin);
    });
    a_codes = codes.data();
    a_signed = false;
  }
  std::vector<float> mult(static_cast<size_t>(n));
  const float* bs = b_scale.data<float>();
  for (int64_t j = 0; j < n; ++j) mult[static_cast<size_t>(j)] = a_scale * bs[b_scale.size() == 1 ? 0 : j];
  linalg::Q8Output out;
  out.kind = linalg::Q8Output::kFloat;
  out.c = y.data<float>();
  out.ldc = n;
  out.scale = mult.data();
  out.scale_per_column = true;
  // The bias is added in the GEMM's output stage after the product is rounded, as ONNX Runtime
  // does (one fused multiply-add there would flip quantized codes downstream, in the next
  // layer's DynamicQuantizeLinear); no second pass reads and writes all of Y.
  out.bias = bias != nullptr ? bias->data<float>() : nullptr;
  linalg::Q8Gemm(rows, a_codes, a_signed, k, &a_zero, false, b, out, ctx.thread_pool());
}

}  // namespace onyx
