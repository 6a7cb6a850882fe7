// Preparing the int8 convolutions' weights (quant_conv_weights.h).
#include "providers/cpu/kernels/quantization/quant_conv_weights.h"

#include "linalg/q8_conv_w.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/cpu/kernels/quantization/quant_conv_geometry.h"

namespace onyx {
namespace quant_conv {

bool IsDepthwise(int64_t channels, int64_t out_channels, int64_t group) {
  return group > 1 && group == channels && group == out_channels;
}

QuantWeights PrepareWeights(const Tensor& w, const std::vector<int64_t>& w_zp, int64_t group, ThreadPool* pool,
                            bool channels_last, const linalg::PackMemory* memory) {
  QuantWeights q;
  const int64_t m = w.dim(0), per = m == 0 ? 0 : w.size() / m, mg = m / group;
  auto zp = [&](int64_t ch) { return static_cast<int32_t>(w_zp.size() == 1 ? w_zp[0] : w_zp[static_cast<size_t>(ch)]); };
  const bool is_signed = w.dtype() == DataType::kInt8;
  const auto* bytes = static_cast<const uint8_t*>(w.raw_data());
  if (!channels_last && IsDepthwise(w.dim(1) * group, m, group)) {
    q.depthwise.resize(static_cast<size_t>(m * per));
    for (int64_t ch = 0; ch < m; ++ch)
      for (int64_t r = 0; r < per; ++r) {
        const uint8_t v = bytes[ch * per + r];
        q.depthwise[static_cast<size_t>(ch * per + r)] = (is_signed ? static_cast<int8_t>(v) : v) - zp(ch);
      }
    return q;
  }
  if (channels_last && w.rank() == 4 && IsDepthwise(w.dim(1) * group, m, group)) {
    std::vector<int32_t> zps(static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) zps[static_cast<size_t>(j)] = zp(j);
    q.depthwise_nhwc = linalg::PackedQ8DepthwiseNhwc(m, w.dim(2), w.dim(3), bytes, is_signed, zps.data(), true);
    return q;
  }
  if (!channels_last && (w.rank() == 4 || w.rank() == 3) && linalg::Q8GemmWAvailable()) {  // 2-D, or 1-D as one image row
    for (int64_t g = 0; g < group; ++g) {
      std::vector<int32_t> zps(static_cast<size_t>(mg));
      for (int64_t j = 0; j < mg; ++j) zps[static_cast<size_t>(j)] = zp(g * mg + j);
      q.nchw.emplace_back(mg, per, bytes + g * mg * per, is_signed, zps.data(), true, memory);
    }
    return q;
  }
  if (channels_last && w.rank() == 4 && group == 1 && linalg::Q8ConvNhwcAvailable()) {
    std::vector<int32_t> zps(static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) zps[static_cast<size_t>(j)] = zp(j);
    q.direct = linalg::PackedQ8Nhwc(m, w.dim(1), w.dim(2), w.dim(3), bytes, is_signed, zps.data(), true, memory);
    if (!q.direct.empty()) return q;  // else (asymmetric weights, C % 4 != 0) the GEMM below
  }
  // 2-D weights go channels-last, [M, kh, kw, C/group], the order of Im2RowHwc's rows.
  std::vector<uint8_t> reordered;
  if (w.rank() == 4) {
    const int64_t cg = w.dim(1), ks = w.dim(2) * w.dim(3);
    reordered.resize(static_cast<size_t>(w.size()));
    for (int64_t ch = 0; ch < m; ++ch)
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t r = 0; r < ks; ++r) reordered[static_cast<size_t>((ch * ks + r) * cg + c)] = bytes[(ch * cg + c) * ks + r];
    bytes = reordered.data();
  }
  for (int64_t g = 0; g < group; ++g) {
    std::vector<int32_t> zps(static_cast<size_t>(mg));
    for (int64_t j = 0; j < mg; ++j) zps[static_cast<size_t>(j)] = zp(g * mg + j);
    q.groups.emplace_back(true, per, mg, bytes + g * mg * per, is_signed, per, zps.data(), true, pool, memory);
  }
  return q;
}

QuantWeights PrepackWeights(const KernelInfo& info, size_t w_index, size_t zp_index, int64_t group,
                            bool channels_last) {
  const Tensor* w = info.ConstantInput(w_index);
  const Tensor* zp = info.has_input(zp_index) ? info.ConstantInput(zp_index) : nullptr;
  if (w == nullptr || w->rank() < 3 || (info.has_input(zp_index) && zp == nullptr) || w->dim(0) % group != 0) return {};
  if (!IsInt8Type(w->dtype()) || (zp && (zp->dtype() != w->dtype() || (zp->size() != 1 && zp->size() != w->dim(0)))))
    return {};  // Compute reports the error
  if (channels_last && (w->rank() != 4 || (group != 1 && !IsDepthwise(w->dim(1) * group, w->dim(0), group))))
    return {};  // Compute reports the error
  const linalg::PackMemory memory = linalg_kernels::PackMemoryFor(info);
  return PrepareWeights(*w, zp ? AllAsInt64s(*zp) : std::vector<int64_t>{0}, group, info.thread_pool(), channels_last,
                        &memory);
}

const QuantWeights& WeightsFor(const QuantWeights& prepared, const Tensor& w, const Tensor* w_zp, int64_t group,
                               ThreadPool* pool, QuantWeights& scratch, bool channels_last) {
  if (!prepared.empty()) return prepared;
  scratch = PrepareWeights(w, w_zp ? AllAsInt64s(*w_zp) : std::vector<int64_t>{0}, group, pool, channels_last);
  return scratch;
}

}  // namespace quant_conv
}  // namespace onyx
