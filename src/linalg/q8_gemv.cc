// q8_gemv.h: B's packing, the zero-point arithmetic around the panel sums, and the variant,
// which is the int8 GEMM's ISA (so ForceIsa / ForceQ8Isa / ONYX_LINALG_ISA test each one).
#include "linalg/q8_gemv.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "linalg/q8_gemm_kernel.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {

void Q8GemvPanelsScalar(const uint8_t* a, const int8_t* packed, int64_t kp, int64_t panels, int32_t* sums);
#if defined(__x86_64__)
void Q8GemvPanelsAvx2(const uint8_t* a, const int8_t* packed, int64_t kp, int64_t panels, int32_t* sums);
void Q8GemvPanelsAvx512Vnni(const uint8_t* a, const int8_t* packed, int64_t kp, int64_t panels, int32_t* sums);
#endif

namespace {
constexpr int64_t kCols = 16;  // columns per panel
// Panels per item of the parallel loop: the kernels run four panels side by side.
constexpr int64_t kPanelsPerItem = 4;
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

const char* Q8GemvIsa() { return SelectedQ8VectorIsa(); }

void Q8Gemv(const void* a, bool a_signed, int32_t a_zero, const PackedQ8Gemv& b, int32_t* acc, ThreadPool* pool) {
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
  const int32_t* col_sums = b.col_sums();
  const int32_t* col_zero = b.col_zero();
  // Cost of an item in cycles: its share of B streamed at about 8 bytes a cycle (the 1280 x 1000
  // product, 1.3 MB, took ~50 us on one core).
  const int64_t items = (panels + kPanelsPerItem - 1) / kPanelsPerItem;
  const double item_cost = static_cast<double>(kPanelsPerItem * kp * kCols) / 8.0;
  ThreadPool::For(pool, items, item_cost, [&](int64_t i0, int64_t i1) {
    const int64_t p0 = i0 * kPanelsPerItem, p1 = std::min(panels, i1 * kPanelsPerItem);
    fn(row.data(), b.data() + p0 * kp * kCols, kp, p1 - p0, sums.data() + p0 * kCols);
    // sum (a - za)(b - zb) = sum ab - za sum b - zb sum a + K za zb, wrapping in uint32 as the
    // GEMM does.
    for (int64_t j = p0 * kCols; j < std::min(n, p1 * kCols); ++j) {
      const uint32_t zb = static_cast<uint32_t>(col_zero[j]);
      const uint32_t v = static_cast<uint32_t>(sums[j]) - static_cast<uint32_t>(za) * static_cast<uint32_t>(col_sums[j]) -
                         zb * static_cast<uint32_t>(a_sum) + static_cast<uint32_t>(k) * static_cast<uint32_t>(za) * zb;
      acc[j] = static_cast<int32_t>(v);
    }
  });
}

}  // namespace onyx::linalg
