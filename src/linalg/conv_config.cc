// The convolution kernel selection chain (best first, scalar last), the scalar reference, and
// the NCHW <-> NCHWc reorders.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/conv.h"
#include "linalg/f32_conv_kernel.h"
#include "platform/cpu_features.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

#define ONYX_CONV_TABLE(ns, block, fb, ...)                                                                 \
  ConvKernelTable {                                                                                        \
    #ns, block, fb, __VA_ARGS__, &ns::DirectTile, &ns::Unblock, &ns::Block, &ns::EpilogueRow, &ns::EpilogueBlocked, \
        &ns::DepthwisePlane, &ns::DepthwiseBlocked, &ns::WinogradInput, &ns::WinogradOutput,               \
        &ns::WinogradWeights                                                                                 \
  }

// Block = vector width; the register tiles must match kMaxFilterBlocks / kMaxPixels of the ISA
// files.
const ConvKernelTable kScalarTable = ONYX_CONV_TABLE(scalar, 8, 1, {0, 4});
#if defined(__x86_64__)
const ConvKernelTable kAvx2Table = ONYX_CONV_TABLE(avx2, 8, 2, {0, 12, 6});
const ConvKernelTable kAvx512Table = ONYX_CONV_TABLE(avx512, 16, 4, {0, 16, 12, 8, 6});
#endif

struct Candidate {
  const ConvKernelTable* table;
  bool (*supported)(const CpuFeatures& cpu);
};

const Candidate kChain[] = {
#if defined(__x86_64__)
    {&kAvx512Table, [](const CpuFeatures& f) { return f.avx512f && f.avx512bw && f.avx512vl && f.fma; }},
    {&kAvx2Table, [](const CpuFeatures& f) { return f.avx2 && f.fma; }},
#endif
    {&kScalarTable, [](const CpuFeatures&) { return true; }},
};

const ConvKernelTable* Find(std::string_view isa) {
  for (const Candidate& c : kChain)
    if (isa == c.table->isa && c.supported(GetCpuFeatures())) return c.table;
  return nullptr;
}

const ConvKernelTable* Best() {
  for (const char* var : {"ONYX_CONV_ISA", "ONYX_LINALG_ISA"})
    if (const char* env = std::getenv(var))
      if (const ConvKernelTable* forced = Find(env)) return forced;
  for (const Candidate& c : kChain)
    if (c.supported(GetCpuFeatures())) return c.table;
  return &kScalarTable;
}

std::atomic<const ConvKernelTable*> g_forced{nullptr};

}  // namespace

const ConvKernelTable& SelectedConvKernels() {
  if (const ConvKernelTable* forced = g_forced.load(std::memory_order_acquire)) return *forced;
  static const ConvKernelTable* const best = Best();
  return *best;
}

bool ForceConvIsa(std::string_view isa) {
  if (isa.empty() || isa == "auto") {
    g_forced.store(nullptr, std::memory_order_release);
    return true;
  }
  const ConvKernelTable* table = Find(isa);
  if (table == nullptr) return false;
  g_forced.store(table, std::memory_order_release);
  return true;
}

std::string ConvIsa() { return SelectedConvKernels().isa; }

std::vector<std::string> SupportedConvIsas() {
  std::vector<std::string> out;
  for (const Candidate& c : kChain)
    if (c.supported(GetCpuFeatures())) out.emplace_back(c.table->isa);
  return out;
}

int ConvBlockSize() { return SelectedConvKernels().block; }

const char* ConvIsaName() { return SelectedConvKernels().isa; }

ConvAlgorithm ConvAlgorithmFromEnvironment() {
  const char* env = std::getenv("ONYX_CONV_ALGO");
  if (env == nullptr) return ConvAlgorithm::kAuto;
  const std::string_view v = env;
  if (v == "direct") return ConvAlgorithm::kDirect;
  if (v == "gemm") return ConvAlgorithm::kGemm;
  if (v == "winograd") return ConvAlgorithm::kWinograd;
  if (v == "depthwise") return ConvAlgorithm::kDepthwise;
  return ConvAlgorithm::kAuto;
}

ConvChoice ChooseConvAlgorithm(ConvAlgorithm forced, const Conv2dShape& s, bool exact, int64_t out_plane) {
  const bool depthwise_ok = s.group > 1 && s.group == s.in_channels && s.out_channels % s.group == 0;
  const bool winograd_ok = WinogradConv::Applicable(s) && !exact;
  switch (forced) {
    case ConvAlgorithm::kGemm: return {ConvAlgorithm::kGemm, "forced by ONYX_CONV_ALGO=gemm"};
    case ConvAlgorithm::kDirect: return {ConvAlgorithm::kDirect, "forced by ONYX_CONV_ALGO=direct"};
    case ConvAlgorithm::kWinograd:
      return winograd_ok ? ConvChoice{ConvAlgorithm::kWinograd, "forced by ONYX_CONV_ALGO=winograd"}
                         : ConvChoice{ConvAlgorithm::kDirect, "ONYX_CONV_ALGO=winograd does not apply to this shape"};
    case ConvAlgorithm::kDepthwise:
      return depthwise_ok ? ConvChoice{ConvAlgorithm::kDepthwise, "forced by ONYX_CONV_ALGO=depthwise"}
                          : ConvChoice{ConvAlgorithm::kDirect, "ONYX_CONV_ALGO=depthwise does not apply to this shape"};
    case ConvAlgorithm::kAuto: break;
  }
  if (depthwise_ok) return {ConvAlgorithm::kDepthwise, "group == input channels"};
  if (winograd_ok && s.in_channels >= kConvWinogradMinChannels && s.out_channels >= kConvWinogradMinChannels)
    return {ConvAlgorithm::kWinograd, "3x3, stride 1, dilation 1, group 1, at least 16 input and output channels"};
  // 1x1 convolutions are plain GEMMs on NCHW (strided ones on a subsampled copy): no reorder
  // of input or output. Tiny outputs (a 7x7 map) give the direct tiles too few pixels per
  // weight load; im2col is cheap there.
  if (s.kernel_h == 1 && s.kernel_w == 1) return {ConvAlgorithm::kGemm, "1x1 kernel"};
  if (out_plane > 0 && out_plane <= kConvGemmMaxOutputPixels)
    return {ConvAlgorithm::kGemm, "output of at most 64 pixels per channel"};
  const char* why = exact && WinogradConv::Applicable(s)
                        ? "between DequantizeLinear and QuantizeLinear: exact arithmetic, no Winograd"
                    : out_plane > 0 ? "none of the other engines' conditions hold"
                                    : "the output size is not known statically (a known output of at most 64 pixels "
                                      "would take GEMM im2col)";
  return {ConvAlgorithm::kDirect, why};
}

ConvChoice ChooseNchwcAlgorithm(const Conv2dShape& s, bool plain_input, bool exact) {
  if (plain_input) return {ConvAlgorithm::kDirect, "plain NCHW input (a first layer with few channels)"};
  if (s.IsDepthwise() && s.out_channels == s.in_channels)
    return {ConvAlgorithm::kDepthwise, "group == input channels == output channels"};
  if (WinogradConv::Applicable(s) && s.in_channels >= kConvWinogradMinChannels &&
      s.out_channels >= kConvWinogradMinChannels && !exact) {
    // ONYX_CONV_ALGO=direct turns Winograd off on the NCHWc path too (to measure its speed or
    // rounding); before, the switch reached only plain-layout convolutions.
    if (ConvAlgorithmFromEnvironment() == ConvAlgorithm::kDirect)
      return {ConvAlgorithm::kDirect, "forced by ONYX_CONV_ALGO=direct"};
    return {ConvAlgorithm::kWinograd, "3x3, stride 1, dilation 1, group 1, at least 16 input and output channels"};
  }
  return {ConvAlgorithm::kDirect, exact && WinogradConv::Applicable(s)
                                      ? "between DequantizeLinear and QuantizeLinear: exact arithmetic, no Winograd"
                                      : "none of the other engines' conditions hold"};
}

bool NchwcRunsDirectForSmallPlane(const Conv2dShape& s) {
  return s.out_h * s.out_w <= kNchwcWinogradMaxDirectPlane &&
         s.in_channels * s.out_channels >= kNchwcWinogradMinDirectWeights;
}

const char* ConvAlgorithmName(ConvAlgorithm algorithm, const Conv2dShape& s) {
  switch (algorithm) {
    case ConvAlgorithm::kWinograd: return "winograd F(4x4,3x3)";
    case ConvAlgorithm::kDirect: return "direct NCHWc";
    case ConvAlgorithm::kGemm: return s.IsPointwise() ? "gemm pointwise" : "gemm im2col";
    case ConvAlgorithm::kDepthwise: return "depthwise";
    case ConvAlgorithm::kAuto: break;
  }
  return "auto";
}

float ActivateScalar(float v, const ConvActivation& a) {
  switch (a.kind) {
    case ConvActivation::kNone:
      return v;
    case ConvActivation::kRelu:
      return v > 0.0f ? v : 0.0f;
    case ConvActivation::kClip:
      return std::min(std::max(v, a.alpha), a.beta);
    case ConvActivation::kLeakyRelu:
      return v < 0.0f ? a.alpha * v : v;
    case ConvActivation::kHardSigmoid:
      return std::max(0.0f, std::min(1.0f, a.alpha * v + a.beta));
    case ConvActivation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-v));
    case ConvActivation::kTanh:
      return std::tanh(v);
    case ConvActivation::kSilu:
      return v / (1.0f + std::exp(-v));
    case ConvActivation::kHardSwish:
      return v * std::max(0.0f, std::min(1.0f, v / 6.0f + 0.5f));
  }
  return v;
}

bool Conv2dShape::ComputeOutputSize() {
  const int64_t wh = (kernel_h - 1) * dilation_h + 1, ww = (kernel_w - 1) * dilation_w + 1;
  const int64_t sh = in_h + pad_top + pad_bottom - wh, sw = in_w + pad_left + pad_right - ww;
  if (sh < 0 || sw < 0 || stride_h < 1 || stride_w < 1) return false;
  out_h = sh / stride_h + 1;
  out_w = sw / stride_w + 1;
  return true;
}

bool Conv2dShape::IsPointwise() const {
  // out == in too where the sizes are known (out_* is 0 in a shape made from the weights alone):
  // a stride is 1 wherever a dimension has one output position (window geometry), which alone
  // does not make the output plane the input plane.
  return kernel_h == 1 && kernel_w == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 && pad_left == 0 &&
         pad_bottom == 0 && pad_right == 0 && (out_h == 0 || out_h == in_h) && (out_w == 0 || out_w == in_w);
}

void ConvReference(const Conv2dShape& s, const float* x, const float* w, const float* bias, const float* residual,
                   const ConvActivation& act, float* y) {
  const int64_t cg = s.in_channels / s.group, mg = s.out_channels / s.group;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t m = 0; m < s.out_channels; ++m) {
      const int64_t g = m / mg;
      for (int64_t oh = 0; oh < s.out_h; ++oh)
        for (int64_t ow = 0; ow < s.out_w; ++ow) {
          double acc = bias != nullptr ? bias[m] : 0.0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
              const int64_t ih = oh * s.stride_h - s.pad_top + kh * s.dilation_h;
              if (ih < 0 || ih >= s.in_h) continue;
              for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
                const int64_t iw = ow * s.stride_w - s.pad_left + kw * s.dilation_w;
                if (iw < 0 || iw >= s.in_w) continue;
                acc += static_cast<double>(x[((n * s.in_channels + g * cg + c) * s.in_h + ih) * s.in_w + iw]) *
                       w[((m * cg + c) * s.kernel_h + kh) * s.kernel_w + kw];
              }
            }
          const int64_t yi = ((n * s.out_channels + m) * s.out_h + oh) * s.out_w + ow;
          float v = static_cast<float>(acc);
          if (residual != nullptr) v += residual[yi];
          y[yi] = ActivateScalar(v, act);
        }
    }
}

namespace {

const ConvKernelTable& TableForBlock(int block) {
  if (SelectedConvKernels().block == block) return SelectedConvKernels();
  for (const Candidate& c : kChain)
    if (c.table->block == block && c.supported(GetCpuFeatures())) return *c.table;
  return kScalarTable;  // block 8
}

}  // namespace

void ApplyConvEpilogue(float* y, int64_t batch, int64_t channels, int64_t plane, const float* bias,
                       const float* residual, const ConvActivation& act, ThreadPool* pool) {
  if (bias == nullptr && residual == nullptr && act.kind == ConvActivation::kNone) return;
  const ConvKernelTable& k = SelectedConvKernels();
  ThreadPool::For(pool, batch * channels, static_cast<double>(plane) * 4.0, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      k.epilogue_row(y + i * plane, plane, bias != nullptr ? bias[i % channels] : 0.0f,
                     residual != nullptr ? residual + i * plane : nullptr, &act);
  });
}

void ReorderToNchwc(const float* x, int64_t batch, int64_t channels, int64_t pixels, int block, float* y,
                    ThreadPool* pool) {
  const ConvKernelTable& k = TableForBlock(block);
  const int64_t blocks = (channels + block - 1) / block;
  ThreadPool::For(pool, batch * blocks, static_cast<double>(pixels * block) * 2.0, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t n = i / blocks, cb = i % blocks;
      const int64_t c0 = cb * block;
      k.block_rows(x + (n * channels + c0) * pixels, pixels, std::min<int64_t>(block, channels - c0), pixels,
              y + (n * blocks + cb) * pixels * block);
    }
  });
}

void ReorderFromNchwc(const float* x, int64_t batch, int64_t channels, int64_t pixels, int block, float* y,
                      ThreadPool* pool) {
  const ConvKernelTable& k = TableForBlock(block);
  const int64_t blocks = (channels + block - 1) / block;
  ThreadPool::For(pool, batch * blocks, static_cast<double>(pixels * block) * 2.0, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t n = i / blocks, cb = i % blocks;
      const int64_t c0 = cb * block;
      k.unblock(x + (n * blocks + cb) * pixels * block, pixels, std::min<int64_t>(block, channels - c0),
                y + (n * channels + c0) * pixels, pixels, nullptr, 0, nullptr);
    }
  });
}

}  // namespace onyx::linalg
