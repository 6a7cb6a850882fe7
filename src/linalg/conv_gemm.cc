// GemmConv: a convolution as GEMMs on the packed SGEMM (linalg/gemm.h). Per image and group,
// Y[m, p] = W[m, k] * X'[k, p] with the weights packed once (PackedA): for a pointwise
// convolution X' is the input itself (no copy); otherwise X' is the im2col matrix, built one
// column tile at a time. Bias, residual and activation run in the GEMM's epilogue.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <cstring>
#include <vector>

#include "linalg/conv.h"
#include "linalg/conv_scratch.h"
#include "linalg/gemm.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

constexpr int64_t kIm2ColBytes = int64_t{2} << 20;  // im2col tile budget

// GemmEpilogue has every ConvActivation but HardSwish (applied after the GEMM instead).
bool ToGemmActivation(const ConvActivation& act, GemmEpilogue* e) {
  e->alpha = act.alpha;
  e->beta = act.beta;
  switch (act.kind) {
    case ConvActivation::kNone: e->activation = GemmEpilogue::kNone; return true;
    case ConvActivation::kRelu: e->activation = GemmEpilogue::kRelu; return true;
    case ConvActivation::kClip: e->activation = GemmEpilogue::kClip; return true;
    case ConvActivation::kLeakyRelu: e->activation = GemmEpilogue::kLeakyRelu; return true;
    case ConvActivation::kHardSigmoid: e->activation = GemmEpilogue::kHardSigmoid; return true;
    case ConvActivation::kSigmoid: e->activation = GemmEpilogue::kSigmoid; return true;
    case ConvActivation::kTanh: e->activation = GemmEpilogue::kTanh; return true;
    case ConvActivation::kSilu: e->activation = GemmEpilogue::kSilu; return true;
    case ConvActivation::kHardSwish: e->activation = GemmEpilogue::kNone; return false;
  }
  return false;
}

// Rows (c, kh, kw) x columns [p0, p1) of the im2col matrix of one image's group channels.
void Im2Col(const Conv2dShape& s, const float* x, int64_t channels, int64_t p0, int64_t p1, float* col) {
  const int64_t cols = p1 - p0;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < s.kernel_h; ++kh)
      for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
        float* dst = col + ((c * s.kernel_h + kh) * s.kernel_w + kw) * cols;
        const float* plane = x + c * s.in_h * s.in_w;
        for (int64_t p = p0; p < p1;) {
          const int64_t oh = p / s.out_w, ow0 = p % s.out_w;
          const int64_t n = std::min(p1 - p, s.out_w - ow0);  // the rest of this output row
          const int64_t ih = oh * s.stride_h - s.pad_top + kh * s.dilation_h;
          float* d = dst + (p - p0);
          if (ih < 0 || ih >= s.in_h) {
            std::fill(d, d + n, 0.0f);
          } else {
            const float* row = plane + ih * s.in_w;
            const int64_t off = kw * s.dilation_w - s.pad_left;
            for (int64_t i = 0; i < n; ++i) {
              const int64_t iw = (ow0 + i) * s.stride_w + off;
              d[i] = iw >= 0 && iw < s.in_w ? row[iw] : 0.0f;
            }
          }
          p += n;
        }
      }
}

}  // namespace

GemmConv::GemmConv(const Conv2dShape& s, const float* w, const PackSource* source)
    : out_channels_(s.out_channels),
      group_(s.group),
      in_per_group_(s.in_channels / s.group),
      kernel_h_(s.kernel_h),
      kernel_w_(s.kernel_w) {
  const int64_t mg = out_channels_ / group_, k = in_per_group_ * kernel_h_ * kernel_w_;
  for (int64_t g = 0; g < group_; ++g)
    packed_.emplace_back(false, mg, k, w + g * mg * k, k, nullptr, source, "conv_gemm:g" + std::to_string(g) + ":");
}

bool GemmConv::Supports(const Conv2dShape& s, const ConvRunArgs& args) const {
  return !packed_.empty() && s.group == group_ && s.out_channels == out_channels_ &&
         s.in_channels == group_ * in_per_group_ && s.kernel_h == kernel_h_ && s.kernel_w == kernel_w_ &&
         args.x_layout == ConvLayout::kNchw && args.y_layout == ConvLayout::kNchw;
}

std::string GemmConv::name() const {
  return std::string("f32_conv_gemm(") + (packed_.empty() ? "" : packed_.front().kernel_name()) + ")";
}

void GemmConv::Run(const Conv2dShape& s, const float* x, float* y, const ConvRunArgs& args, ThreadPool* pool) const {
  const int64_t mg = out_channels_ / group_, cg = in_per_group_;
  const int64_t k = cg * kernel_h_ * kernel_w_;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  if (out_plane == 0 || s.batch == 0) return;
  GemmEpilogue e;
  const bool fused_act = ToGemmActivation(args.activation, &e);
  const bool pointwise = s.IsPointwise();
  const int64_t tile = pointwise ? out_plane
                                 : std::clamp<int64_t>(kIm2ColBytes / (k * static_cast<int64_t>(sizeof(float))), 64,
                                                       std::max<int64_t>(out_plane, 64));
  // The caller's kept buffer (conv_scratch.h): SgemmPackedA's tasks take none of its slots.
  const ConvScratch col(ScratchSlot::kInput, pointwise ? 0 : static_cast<size_t>(k * std::min(tile, out_plane)));
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t g = 0; g < group_; ++g) {
      const float* xg = x + (n * s.in_channels + g * cg) * in_plane;
      const int64_t y_off = (n * out_channels_ + g * mg) * out_plane;
      e.bias_per_row = args.bias != nullptr ? args.bias + g * mg : nullptr;
      for (int64_t p0 = 0; p0 < out_plane; p0 += tile) {
        const int64_t p1 = std::min(out_plane, p0 + tile);
        e.residual = args.residual != nullptr ? args.residual + y_off + p0 : nullptr;
        e.ldr = out_plane;
        const float* b = xg + p0;
        int64_t ldb = in_plane;
        if (!pointwise) {
          Im2Col(s, xg, cg, p0, p1, col.get());
          b = col.get();
          ldb = p1 - p0;
        }
        SgemmPackedA(false, mg, p1 - p0, k, 1.0f, packed_[g], b, ldb, 0.0f, y + y_off + p0, out_plane, pool, &e);
      }
    }
  if (!fused_act) {
    ConvActivation act = args.activation;
    ApplyConvEpilogue(y, 1, 1, s.batch * out_channels_ * out_plane, nullptr, nullptr, act, pool);
  }
}

}  // namespace onyx::linalg
