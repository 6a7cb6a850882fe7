// com.microsoft.MatMulNBits: Y = A . dequant(B)^T (+ bias) with B holding N rows of K
// block-quantized weights: B (N, k_blocks, blob) packs `bits` (2, 4 or 8) per value, low bits
// first, blob = block_size * bits / 8; scales (N, k_blocks); zero_points packed uint8
// (N, ceil(k_blocks * bits / 8)) or unpacked in A's type (N, k_blocks), default 2^(bits-1);
// g_idx (K) maps each k to its block. dequant = (q - zero_point) * scale.
// The weights stay packed: columns of Y are computed in tiles whose weights are dequantized
// into a per-thread buffer and multiplied with linalg::Sgemm. accuracy_level 4 quantizes A to
// int8 per block (scale max|a| / 127) as ONNX Runtime's int8 path does. float, float16 and
// bfloat16 A (computed in float).
#include <algorithm>
#include <cmath>
#include <vector>

#include "linalg/gemm.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/attention_core.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

constexpr int64_t kTileColumns = 64;

class MatMulNBits final : public OpKernel {
 public:
  explicit MatMulNBits(const KernelInfo& info)
      : K_(info.GetInt("K")),
        N_(info.GetInt("N")),
        bits_(info.GetIntOr("bits", 4)),
        block_size_(info.GetInt("block_size")),
        accuracy_level_(info.GetIntOr("accuracy_level", 0)) {
    if (K_ <= 0 || N_ <= 0) info.Fail(StrCat("attributes K and N must be positive, got ", K_, " and ", N_));
    if (bits_ != 2 && bits_ != 4 && bits_ != 8) info.Fail(StrCat("attribute 'bits' must be 2, 4 or 8, got ", bits_));
    if (block_size_ < 16 || (block_size_ & (block_size_ - 1)) != 0)
      info.Fail(StrCat("attribute 'block_size' must be a power of 2 >= 16, got ", block_size_));
    if (info.GetIntOr("weight_prepacked", 0) != 0) info.Fail("weight_prepacked weights are not supported on CPU");
    k_blocks_ = (K_ + block_size_ - 1) / block_size_;
    blob_ = block_size_ * bits_ / 8;
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor& scales = ctx.required_input(2);
    const Tensor* zp = ctx.input(3);
    const Tensor* g_idx = ctx.input(4);
    const Tensor* bias = ctx.input(5);
    const DataType dt = a.dtype();
    if (dt != DataType::kFloat && dt != DataType::kFloat16 && dt != DataType::kBFloat16)
      ctx.Fail(StrCat("A's element type ", DataTypeName(dt), " is not supported"));
    if (a.rank() == 0 || a.shape().back() != K_) ctx.Fail(StrCat("A's last dimension must be K = ", K_));
    if (b.dtype() != DataType::kUInt8 || b.size() != N_ * k_blocks_ * blob_)
      ctx.Fail(StrCat("B must be uint8 (N, k_blocks, blob) = (", N_, ", ", k_blocks_, ", ", blob_, ")"));
    if (scales.dtype() != dt || scales.size() != N_ * k_blocks_)
      ctx.Fail(StrCat("scales must have A's type and ", N_ * k_blocks_, " values"));
    const int64_t zp_packed_row = (k_blocks_ * bits_ + 7) / 8;
    const bool zp_packed = zp && zp->dtype() == DataType::kUInt8;
    if (zp && !(zp_packed ? zp->size() == N_ * zp_packed_row : (zp->dtype() == dt && zp->size() == N_ * k_blocks_)))
      ctx.Fail(StrCat("zero_points must be uint8 with ", N_ * zp_packed_row, " values or A's type with ",
                      N_ * k_blocks_));
    if (bias && (bias->dtype() != dt || bias->size() != N_)) ctx.Fail(StrCat("bias must have A's type and ", N_, " values"));
    std::vector<int64_t> groups;
    if (g_idx) {
      if (g_idx->dtype() != DataType::kInt32 || g_idx->size() != K_) ctx.Fail(StrCat("g_idx must be int32 of size ", K_));
      groups.resize(static_cast<size_t>(K_));
      for (int64_t k = 0; k < K_; ++k) {
        groups[k] = g_idx->data<int32_t>()[k];
        if (groups[k] < 0 || groups[k] >= k_blocks_) ctx.Fail(StrCat("g_idx value ", groups[k], " is out of range"));
      }
    }
    Shape out_shape = a.shape();
    out_shape.back() = N_;
    Tensor& y = ctx.AllocateOutput(0, dt, out_shape);
    const int64_t M = a.size() / K_;
    if (y.size() == 0) return;

    const bool wide = dt != DataType::kFloat;
    std::vector<float> af, yf, sf, zf, bf;
    if (wide) {
      af = ToFloatVector(a);
      sf = ToFloatVector(scales);
      yf.resize(static_cast<size_t>(y.size()));
    }
    if (zp && !zp_packed) zf = ToFloatVector(*zp);
    if (bias) bf = ToFloatVector(*bias);
    const float* ad = wide ? af.data() : a.data<float>();
    const float* sd = wide ? sf.data() : scales.data<float>();
    float* yd = wide ? yf.data() : y.data<float>();
    std::vector<float> aq;
    if (accuracy_level_ == 4) {
      aq = QuantizeRowsInt8(ad, M);
      ad = aq.data();
    }
    const uint8_t* bq = b.data<uint8_t>();
    const uint8_t* zq = zp_packed ? zp->data<uint8_t>() : nullptr;
    const uint32_t mask = (1u << bits_) - 1;
    const float default_zp = static_cast<float>(1 << (bits_ - 1));
    // Dequantizes rows [n0, n1) of B into w ([n1 - n0, K], row-major).
    auto dequant = [&](int64_t n0, int64_t n1, float* w) {
      for (int64_t n = n0; n < n1; ++n) {
        float* wr = w + (n - n0) * K_;
        const uint8_t* row = bq + n * k_blocks_ * blob_;
        for (int64_t k = 0; k < K_; ++k) {
          const int64_t bit = k * bits_;
          const uint32_t q = (row[(k / block_size_) * blob_ + (bit % (block_size_ * bits_)) / 8] >> (bit % 8)) & mask;
          const int64_t g = g_idx ? groups[k] : k / block_size_;
          float z = default_zp;
          if (zq) {
            const int64_t zbit = g * bits_;
            z = static_cast<float>((zq[n * zp_packed_row + zbit / 8] >> (zbit % 8)) & mask);
          } else if (!zf.empty()) {
            z = zf[n * k_blocks_ + g];
          }
          wr[k] = (static_cast<float>(q) - z) * sd[n * k_blocks_ + g];
        }
      }
    };
    const int64_t tiles = (N_ + kTileColumns - 1) / kTileColumns;
    const double cost = static_cast<double>(kTileColumns) * K_ * (M + 4);
    ThreadPool::For(ctx.thread_pool(), tiles, cost, [&](int64_t begin, int64_t end) {
      std::vector<float> w(static_cast<size_t>(kTileColumns * K_));
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n0 = t * kTileColumns, n1 = std::min(N_, n0 + kTileColumns);
        dequant(n0, n1, w.data());
        linalg::Sgemm(false, true, M, n1 - n0, K_, 1.0f, ad, K_, w.data(), K_, 0.0f, yd + n0, N_, nullptr);
        if (!bf.empty())
          for (int64_t m = 0; m < M; ++m)
            for (int64_t n = n0; n < n1; ++n) yd[m * N_ + n] += bf[n];
      }
    });
    if (wide) FromFloat(yf.data(), y);
  }

 private:
  // A with every (row, K block) replaced by its symmetric int8 quantization, dequantized.
  std::vector<float> QuantizeRowsInt8(const float* a, int64_t M) const {
    std::vector<float> q(static_cast<size_t>(M * K_));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k0 = 0; k0 < K_; k0 += block_size_) {
        const int64_t k1 = std::min(K_, k0 + block_size_);
        float amax = 0.0f;
        for (int64_t k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(a[m * K_ + k]));
        const float scale = amax / 127.0f;
        const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
        for (int64_t k = k0; k < k1; ++k)
          q[m * K_ + k] = std::nearbyint(std::clamp(a[m * K_ + k] * inv, -127.0f, 127.0f)) * scale;
      }
    return q;
  }

  int64_t K_, N_, bits_, block_size_, accuracy_level_;
  int64_t k_blocks_ = 0, blob_ = 0;
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "MatMulNBits", 1, kOpsetMax, MatMulNBits);

}  // namespace
}  // namespace onyx::contrib
