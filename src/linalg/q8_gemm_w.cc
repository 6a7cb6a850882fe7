// PackedQ8W (q8_gemm.h's weight-stationary int8 GEMM): W packed once into the [M / 8][K / 4][8][4]
// int8 panels of q8_gemm_w_avx512_vnni_8x32.cc, with its per-row code sums and zero points;
// without AVX-512 VNNI, Q8GemmWAvailable is false and nothing else here runs.
#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "base/int_math.h"
#include "linalg/q8_conv_w.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_gemm_kernel.h"

namespace onyx::linalg {

PackedQ8W::PackedQ8W(int64_t m, int64_t k, const void* w, bool w_signed, const int32_t* zero_points,
                     bool zero_per_row, const PackMemory* memory)
    : packed_(true), m_(m), k_(k) {
  if (m < 0 || k < 0) throw std::invalid_argument("PackedQ8W: negative dimension");
  constexpr int64_t kRows = 8, kGroup = 4;
  const int64_t panels = CeilDiv(m, kRows), kp = CeilDiv(k, kGroup) * kGroup;
  data_ = FreshPack(memory, static_cast<size_t>(std::max<int64_t>(1, panels * kp * kRows / 4)));
  auto* out = reinterpret_cast<int8_t*>(data_.data());
  std::fill_n(out, data_.size() * 4, int8_t{0});
  row_sums_.assign(static_cast<size_t>(panels * kRows), 0);
  row_zero_.assign(static_cast<size_t>(m), 0);
  for (int64_t i = 0; i < m; ++i) {
    const int32_t z = zero_points == nullptr ? 0 : zero_points[zero_per_row ? i : 0];
    row_zero_[static_cast<size_t>(i)] = z - (w_signed ? 0 : 128);
    int8_t* panel = out + (i / kRows) * kp * kRows;
    const int64_t r = i % kRows;
    uint32_t sum = 0;
    for (int64_t p = 0; p < k; ++p) {
      const uint8_t b = static_cast<const uint8_t*>(w)[i * k + p];
      const int32_t v = w_signed ? static_cast<int8_t>(b) : static_cast<int32_t>(b) - 128;
      panel[(p / kGroup * kRows + r) * kGroup + p % kGroup] = static_cast<int8_t>(v);
      sum += static_cast<uint32_t>(v);
    }
    row_sums_[static_cast<size_t>(i)] = static_cast<int32_t>(sum);
  }
}

#if !defined(__x86_64__)
bool Q8GemmWAvailable() { return false; }
void Q8GemmW(const PackedQ8W&, int64_t, const void*, bool, int64_t, int32_t, const Q8Output&, ThreadPool*) {
  throw std::logic_error("Q8GemmW: no AVX-512 VNNI on this build");
}
void Q8GemmWRows(const PackedQ8W&, int64_t, int64_t, int64_t, const void*, bool, int64_t, int32_t, const Q8Output&,
                 ThreadPool*) {
  throw std::logic_error("Q8GemmWRows: no AVX-512 VNNI on this build");
}
void Q8ConvW(const PackedQ8W&, const Q8ConvShape&, const void*, bool, int32_t, const Q8Output&, ThreadPool*) {
  throw std::logic_error("Q8ConvW: no AVX-512 VNNI on this build");
}
#else
bool Q8GemmWAvailable() { return std::string_view(SelectedQ8VectorIsa()) == "avx512vnni"; }
#endif

}  // namespace onyx::linalg
