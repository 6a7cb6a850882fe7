// q8_gemv.h: B's packing, the zero-point arithmetic around the panel sums, and the variant,
// which is the int8 GEMM's ISA (so ForceIsa / ForceQ8Isa / ONYX_LINALG_ISA test each one).
#include "linalg/q8_gemv.h"

#include <cstring>
#include <stdexcept>
#include <string_view>

#include "linalg/q8_gemm_kernel.h"

namespace onyx::linalg {

void Q8GemvPanelsScalar(const uint8_t* a, const int8_t* packed, int64_t kp, int64_t panels, int32_t* sums);
#if defined(__x86_64__)
void Q8GemvPanelsAvx2(const uint8_t* a, const int8_t* packed, int64_t kp, int64_t panels, int32_t* sums);
void Q8GemvPanelsAvx512Vnni(const uint8_t* a, const int8_t* packed, int64_t kp, int64_t panels, int32_t* sums);
#endif

namespace {
constexpr int64_t kCols = 16;  // columns per panel
}  // namespace

PackedQ8Gemv::PackedQ8Gemv(bool trans_b, int64_t k, int64_t n, const void* b, bool b_signed, int64_t ldb,
                           const int32_t* zero_points, bool zero_per_column)
    : packed_(true), k_(k), n_(n) {
  if (k < 0 || n < 0) throw std::invalid_argument("PackedQ8Gemv: negative dimension");
  const int64_t kp = padded_k(), panels = (n + kCols - 1) / kCols;
  data_.assign(static_cast<size_t>(panels * kp * kCols), 0);
  col_sums_.assign(static_cast<size_t>(panels * kCols), 0);
  col_zero_.assign(static_cast<size_t>(n), 0);
  const auto* bytes = static_cast<const uint8_t*>(b);
  for (int64_t j = 0; j < n; ++j) {
    // uint8 codes are stored - 128 (int8), and so is their zero point.
    col_zero_[j] = (zero_points == nullptr ? 0 : zero_points[zero_per_column ? j : 0]) - (b_signed ? 0 : 128);
    int8_t* col = data_.data() + (j / kCols) * kp * kCols + (j % kCols) * 4;
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      const uint8_t raw = bytes[trans_b ? j * ldb + i : i * ldb + j];
      const int8_t v = b_signed ? static_cast<int8_t>(raw) : static_cast<int8_t>(static_cast<int32_t>(raw) - 128);
      col[(i / 4) * kCols * 4 + i % 4] = v;
      sum += v;
    }
    col_sums_[j] = sum;
  }
}

const char* Q8GemvIsa() { return SelectedQ8GemmKernel().isa; }

void Q8Gemv(const void* a, bool a_signed, int32_t a_zero, const PackedQ8Gemv& b, int32_t* acc) {
  const int64_t k = b.k(), n = b.n(), kp = b.padded_k(), panels = (n + kCols - 1) / kCols;
  if (n == 0) return;
  // A as uint8 (int8 codes + 128, their zero point too), zero-padded to whole groups of four.
  std::vector<uint8_t> row(static_cast<size_t>(kp), 0);
  std::memcpy(row.data(), a, static_cast<size_t>(k));
  int32_t a_sum = 0;
  for (int64_t i = 0; i < k; ++i) {
    if (a_signed) row[i] = static_cast<uint8_t>(row[i] ^ 0x80);
    a_sum += row[i];
  }
  const int32_t za = a_zero + (a_signed ? 128 : 0);
  std::vector<int32_t> sums(static_cast<size_t>(panels * kCols));
  auto fn = &Q8GemvPanelsScalar;
#if defined(__x86_64__)
  const std::string_view isa = Q8GemvIsa();
  if (isa == "avx512vnni") fn = &Q8GemvPanelsAvx512Vnni;
  if (isa == "avx2") fn = &Q8GemvPanelsAvx2;
#endif
  fn(row.data(), b.data(), kp, panels, sums.data());
  // sum (a - za)(b - zb) = sum ab - za sum b - zb sum a + K za zb, wrapping in uint32 as the
  // GEMM does.
  const int32_t* col_sums = b.col_sums();
  const int32_t* col_zero = b.col_zero();
  for (int64_t j = 0; j < n; ++j) {
    const uint32_t zb = static_cast<uint32_t>(col_zero[j]);
    const uint32_t v = static_cast<uint32_t>(sums[j]) - static_cast<uint32_t>(za) * static_cast<uint32_t>(col_sums[j]) -
                       zb * static_cast<uint32_t>(a_sum) + static_cast<uint32_t>(k) * static_cast<uint32_t>(za) * zb;
    acc[j] = static_cast<int32_t>(v);
  }
}

}  // namespace onyx::linalg
