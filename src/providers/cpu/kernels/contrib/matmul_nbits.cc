// com.microsoft.MatMulNBits: Y = A . dequant(B)^T (+ bias) with B holding N rows of K
// block-quantized weights: B (N, k_blocks, blob) packs `bits` (2, 4 or 8) per value, low bits
// first, blob = block_size * bits / 8; scales (N, k_blocks); zero_points packed uint8
// (N, ceil(k_blocks * bits / 8)) or unpacked in A's type (N, k_blocks), default 2^(bits-1);
// g_idx (K) maps each k to its block. dequant = (q - zero_point) * scale.
// The weights stay packed. Few rows of A (decoding): 4-bit codes in blocks of 32 or more are
// dequantized in registers by linalg::Q4Gemv; otherwise, per block, sum_k a q is computed on
// the unpacked codes and the zero point applied once through the block sums of A. More rows:
// column tiles are dequantized into a per-thread buffer and multiplied with linalg::Sgemm.
// Per-block float scales and zero points are decoded once when they are constant.
// accuracy_level 4 quantizes A to int8 per block (scale max|a| / 127) as ONNX Runtime's int8
// path does. float, float16 and bfloat16 A (computed in float).
#include <algorithm>
#include <cmath>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/q4_gemm.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/attention_core.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

constexpr int64_t kTileColumns = 64;
constexpr int64_t kGemvMaxRows = 8;

// Codes of one block (count values) as floats.
void UnpackBlock(const uint8_t* blob, int64_t bits, int64_t count, float* q) {
  if (bits == 4) {
    for (int64_t j = 0; j < count / 2; ++j) {
      q[2 * j] = static_cast<float>(blob[j] & 15);
      q[2 * j + 1] = static_cast<float>(blob[j] >> 4);
    }
    if (count & 1) q[count - 1] = static_cast<float>(blob[count / 2] & 15);
  } else if (bits == 8) {
    for (int64_t j = 0; j < count; ++j) q[j] = static_cast<float>(blob[j]);
  } else {  // 2 bits
    for (int64_t j = 0; j < count; ++j) q[j] = static_cast<float>((blob[j / 4] >> (2 * (j % 4))) & 3);
  }
}

// sum a[j] b[j] with 8 independent partial sums, so the loop vectorizes.
inline float Dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[j + l] * b[j + l];
  float sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; j < n; ++j) sum += a[j] * b[j];
  return sum;
}

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
    // Decode the per-block scales and zero points once when the model fixes them.
    const Tensor* scales = info.ConstantInput(2);
    const Tensor* zp = info.has_input(3) ? info.ConstantInput(3) : nullptr;
    if (scales && (!info.has_input(3) || zp) && CheckParams(*scales, zp).empty()) DecodeParams(*scales, zp, scale_, zero_);
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
    if (scales.dtype() != dt) ctx.Fail("scales must have A's type");
    if (const std::string problem = CheckParams(scales, zp); !problem.empty()) ctx.Fail(problem);
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

    std::vector<float> scale_local, zero_local;
    const bool decoded = !scale_.empty();
    if (!decoded) DecodeParams(scales, zp, scale_local, zero_local);
    const float* sd = decoded ? scale_.data() : scale_local.data();
    const float* zd = decoded ? zero_.data() : zero_local.data();
    const bool wide = dt != DataType::kFloat;
    std::vector<float> af, yf, bf;
    if (wide) {
      af = ToFloatVector(a);
      yf.resize(static_cast<size_t>(y.size()));
    }
    if (bias) bf = ToFloatVector(*bias);
    const float* ad = wide ? af.data() : a.data<float>();
    float* yd = wide ? yf.data() : y.data<float>();
    std::vector<float> aq;
    if (accuracy_level_ == 4) {
      aq = QuantizeRowsInt8(ad, M);
      ad = aq.data();
    }
    const uint8_t* bq = b.data<uint8_t>();
    const float* bias_data = bf.empty() ? nullptr : bf.data();
    if (!g_idx && bits_ == 4 && block_size_ % 32 == 0 && M <= linalg::kQ4GemvMaxRows) {
      // Codes dequantized in registers by the SIMD kernel; columns split over the threads.
      std::vector<float> ap(static_cast<size_t>(M * K_));
      linalg::Q4PermuteA(ad, K_, static_cast<int>(M), K_, ap.data());
      ThreadPool::For(ctx.thread_pool(), N_, 0.6 * static_cast<double>(K_) * static_cast<double>(M + 1),
                      [&](int64_t begin, int64_t end) {
                        linalg::Q4Gemv(ap.data(), K_, static_cast<int>(M), K_, bq, block_size_, sd, zd, bias_data, yd,
                                       N_, begin, end);
                      });
    } else if (!g_idx && M <= kGemvMaxRows) {
      Gemv(ctx, ad, M, bq, sd, zd, bias_data, yd);
    } else {
      TiledGemm(ctx, ad, M, bq, sd, zd, g_idx ? groups.data() : nullptr, bias_data, yd);
    }
    if (wide) FromFloat(yf.data(), y);
  }

 private:
  // Empty when scales/zero_points fit, else the problem.
  std::string CheckParams(const Tensor& scales, const Tensor* zp) const {
    if (scales.size() != N_ * k_blocks_) return StrCat("scales must hold N * k_blocks = ", N_ * k_blocks_, " values");
    if (!zp) return {};
    const int64_t packed_row = (k_blocks_ * bits_ + 7) / 8;
    if (zp->dtype() == DataType::kUInt8 ? zp->size() != N_ * packed_row
                                        : (zp->dtype() != scales.dtype() || zp->size() != N_ * k_blocks_))
      return StrCat("zero_points must be uint8 with ", N_ * packed_row, " values or the scales' type with ",
                    N_ * k_blocks_);
    return {};
  }

  // Float scale and zero point of every (n, block).
  void DecodeParams(const Tensor& scales, const Tensor* zp, std::vector<float>& scale, std::vector<float>& zero) const {
    scale = ToFloatVector(scales);
    zero.assign(static_cast<size_t>(N_ * k_blocks_), static_cast<float>(1 << (bits_ - 1)));
    if (!zp) return;
    if (zp->dtype() == DataType::kUInt8) {
      const int64_t row = (k_blocks_ * bits_ + 7) / 8;
      const uint8_t* z = zp->data<uint8_t>();
      for (int64_t n = 0; n < N_; ++n)
        for (int64_t g = 0; g < k_blocks_; ++g) {
          const int64_t bit = g * bits_;
          zero[n * k_blocks_ + g] = static_cast<float>((z[n * row + bit / 8] >> (bit % 8)) & ((1 << bits_) - 1));
        }
    } else {
      zero = ToFloatVector(*zp);
    }
  }

  // y[m, n] = sum_blocks s (sum_k a q - z sum_k a), for few rows of A.
  void Gemv(KernelContext& ctx, const float* a, int64_t M, const uint8_t* bq, const float* sd, const float* zd,
            const float* bias, float* y) const {
    std::vector<float> asum(static_cast<size_t>(M * k_blocks_), 0.0f);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K_; ++k) asum[m * k_blocks_ + k / block_size_] += a[m * K_ + k];
    ThreadPool::For(ctx.thread_pool(), N_, 3.0 * K_ * (M + 1), [&](int64_t begin, int64_t end) {
      std::vector<float> q(static_cast<size_t>(block_size_));
      for (int64_t n = begin; n < end; ++n) {
        for (int64_t m = 0; m < M; ++m) y[m * N_ + n] = bias ? bias[n] : 0.0f;
        for (int64_t g = 0; g < k_blocks_; ++g) {
          const int64_t k0 = g * block_size_, count = std::min(block_size_, K_ - k0);
          UnpackBlock(bq + (n * k_blocks_ + g) * blob_, bits_, count, q.data());
          const float s = sd[n * k_blocks_ + g], z = zd[n * k_blocks_ + g];
          for (int64_t m = 0; m < M; ++m) {
            const float dot = Dot(a + m * K_ + k0, q.data(), count);
            y[m * N_ + n] += s * (dot - z * asum[m * k_blocks_ + g]);
          }
        }
      }
    });
  }

  // Column tiles of dequantized weights times A on linalg::Sgemm.
  // The bias is added in the GEMM's epilogue, while each tile of Y is in registers.
  void TiledGemm(KernelContext& ctx, const float* a, int64_t M, const uint8_t* bq, const float* sd, const float* zd,
                 const int64_t* groups, const float* bias, float* y) const {
    const int64_t tiles = (N_ + kTileColumns - 1) / kTileColumns;
    const double cost = static_cast<double>(kTileColumns) * K_ * (M + 4);
    ThreadPool::For(ctx.thread_pool(), tiles, cost, [&](int64_t begin, int64_t end) {
      std::vector<float> w(static_cast<size_t>(kTileColumns * K_)), q(static_cast<size_t>(block_size_));
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n0 = t * kTileColumns, n1 = std::min(N_, n0 + kTileColumns);
        for (int64_t n = n0; n < n1; ++n) {
          float* wr = w.data() + (n - n0) * K_;
          for (int64_t g = 0; g < k_blocks_; ++g) {
            const int64_t k0 = g * block_size_, count = std::min(block_size_, K_ - k0);
            UnpackBlock(bq + (n * k_blocks_ + g) * blob_, bits_, count, q.data());
            if (groups) {  // g_idx: each k takes its own block's parameters
              for (int64_t j = 0; j < count; ++j) {
                const int64_t p = n * k_blocks_ + groups[k0 + j];
                wr[k0 + j] = (q[j] - zd[p]) * sd[p];
              }
            } else {
              const float s = sd[n * k_blocks_ + g], z = zd[n * k_blocks_ + g];
              for (int64_t j = 0; j < count; ++j) wr[k0 + j] = (q[j] - z) * s;
            }
          }
        }
        linalg::GemmEpilogue ep;
        ep.bias_per_col = bias != nullptr ? bias + n0 : nullptr;
        linalg::Sgemm(false, true, M, n1 - n0, K_, 1.0f, a, K_, w.data(), K_, 0.0f, y + n0, N_, nullptr,
                      bias != nullptr ? &ep : nullptr);
      }
    });
  }

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
  std::vector<float> scale_, zero_;  // decoded at creation when constant
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "MatMulNBits", 1, kOpsetMax, MatMulNBits);

}  // namespace
}  // namespace onyx::contrib
