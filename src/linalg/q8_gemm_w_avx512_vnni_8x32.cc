// The weight-stationary int8 GEMM (q8_gemm.h's Q8GemmW) on AVX-512 VNNI: tiles of 8 output
// channels (rows of C) by 32 pixels (columns). vpdpbusd multiplies 4 uint8 codes of X (a vector
// of 16 pixels) by 4 int8 codes of one W row (broadcast), exactly, into int32 lanes.
//
// Codes as in q8_gemm.cc: X stored as uint8 (int8 X + 128), W as int8 (uint8 W - 128), with
// zx' = zx + 128 for int8 X and zw' = zw - 128 for uint8 W:
//   acc = sum w'x' - zw' (sum_k x' - K zx') - zx' sum_k w'
// X is packed a 32-pixel panel at a time ([K / 4][32][4], its pixel sums taken by vpdpbusd with
// ones while it is in L1) and every 8-row W panel passes it; the tile's rows are finished in
// registers (zero points, bias, scale, clamp, round half to even, zero point; or to float) and
// stored as contiguous runs of the NCHW output.
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "base/int_math.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_gemm_w_driver.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {

struct Q8PackedWAccess {
  static const int8_t* Data(const PackedQ8W& p) { return reinterpret_cast<const int8_t*>(p.data_.data()); }
  static const int32_t* RowSums(const PackedQ8W& p) { return p.row_sums_.data(); }
  static const int32_t* RowZero(const PackedQ8W& p) { return p.row_zero_.data(); }
};

namespace {

constexpr int kMr = 8, kNr = 32, kGroup = 4;
// Packed W bytes past which it no longer stays in L2 between X panels, and the X panels' bytes
// that do (Zen 4 and recent Intel cores: 1-2 MB of L2).
constexpr int64_t kLargeW = int64_t{768} << 10, kResidentX = int64_t{512} << 10;

struct MatrixSource {
  const uint8_t* x;
  bool x_signed;
  int64_t ldx, k;
};

// Columns [j0, j0 + cols) of X into panel [kg][32][4] (stored codes; zeros past K and cols).
void PackXPanel(const void* source, int64_t j0, int cols, uint8_t* panel) {
  const auto& src = *static_cast<const MatrixSource*>(source);
  const uint8_t* x = src.x;
  const bool x_signed = src.x_signed;
  const int64_t ldx = src.ldx, k = src.k;
  const int64_t whole = cols == kNr ? k / kGroup : 0, kg = CeilDiv(k, int64_t{kGroup});
  const __m256i flip = _mm256_set1_epi8(x_signed ? static_cast<char>(0x80) : 0);
  for (int64_t q = 0; q < whole; ++q) {
    const uint8_t* r = x + 4 * q * ldx + j0;
    const __m256i r0 = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r)), flip);
    const __m256i r1 = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + ldx)), flip);
    const __m256i r2 = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + 2 * ldx)), flip);
    const __m256i r3 = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + 3 * ldx)), flip);
    Q8WInterleave4(r0, r1, r2, r3, panel + q * kNr * kGroup);
  }
  if (whole == kg) return;
  const uint8_t f = x_signed ? 0x80 : 0;
  std::memset(panel + whole * kNr * kGroup, 0, static_cast<size_t>((kg - whole) * kNr * kGroup));
  for (int64_t p = whole * kGroup; p < k; ++p) {
    const uint8_t* r = x + p * ldx + j0;
    uint8_t* o = panel + (p / kGroup) * kNr * kGroup + p % kGroup;
    for (int c = 0; c < cols; ++c) o[c * kGroup] = r[c] ^ f;
  }
}

// The panel's pixel code sums (16 lanes each half).
void PanelSums(const uint8_t* panel, int64_t kg, __m512i* s0, __m512i* s1) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  for (int64_t q = 0; q < kg; ++q) {
    a = _mm512_dpbusd_epi32(a, _mm512_load_si512(panel + q * 128), ones);
    b = _mm512_dpbusd_epi32(b, _mm512_load_si512(panel + q * 128 + 64), ones);
  }
  *s0 = a;
  *s1 = b;
}

// acc[8][32] = the W panel's 8 rows x the X panel's 32 pixels over kg steps of 4 codes. The
// accumulators are locals stored once at the end: kept in a struct the tile's result was read
// from, GCC copied all 16 registers around on every step. kVecs = 1: the panel's first 16 pixels
// only (a last panel of at most 16 pixels, as 14x14 and 20x20 maps end: half the
// multiplies); acc's other half is then left as it was, outside the columns finish stores.
// The accumulators start at init[r] (the row's constant terms), which the finish then skips.
template <int kVecs>
void MultiplyTile(int64_t kg, const int8_t* w, const uint8_t* xp, const int32_t* init, int32_t* acc) {
  __m512i c[kMr][kVecs];
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r)
    for (int v = 0; v < kVecs; ++v) c[r][v] = _mm512_set1_epi32(init[r]);
  for (int64_t q = 0; q < kg; ++q, w += kMr * kGroup, xp += kNr * kGroup) {
    __m512i x[kVecs];
    for (int v = 0; v < kVecs; ++v) x[v] = _mm512_load_si512(xp + 64 * v);
#pragma GCC unroll 8
    for (int r = 0; r < kMr; ++r) {
      int32_t quad;
      std::memcpy(&quad, w + r * kGroup, sizeof(quad));
      const __m512i wv = _mm512_set1_epi32(quad);
      for (int v = 0; v < kVecs; ++v) c[r][v] = _mm512_dpbusd_epi32(c[r][v], x[v], wv);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r)
    for (int v = 0; v < kVecs; ++v) _mm512_store_si512(acc + r * kNr + 16 * v, c[r][v]);
}

void Multiply(int64_t kg, const int8_t* w, const uint8_t* xp, int cols, const int32_t* init, int32_t* acc) {
  if (cols <= 16) MultiplyTile<1>(kg, w, xp, init, acc);
  else MultiplyTile<2>(kg, w, xp, init, acc);
}

}  // namespace

void Q8GemmW(const PackedQ8W& w, int64_t n, const void* x, bool x_signed, int64_t ldx, int32_t x_zero,
             const Q8Output& out, ThreadPool* pool) {
  const MatrixSource source{static_cast<const uint8_t*>(x), x_signed, ldx, w.k()};
  Q8GemmWDriver(w, n, &PackXPanel, &source, x_zero + (x_signed ? 128 : 0), out, pool);
}

void Q8GemmWRows(const PackedQ8W& w, int64_t row_begin, int64_t row_end, int64_t n, const void* x, bool x_signed,
                 int64_t ldx, int32_t x_zero, const Q8Output& out, ThreadPool* pool) {
  if (row_begin < 0 || row_end > w.m()) throw std::invalid_argument("Q8GemmWRows: rows past W's");
  if (row_end <= row_begin) return;
  if (row_begin % kMr != 0) throw std::invalid_argument("Q8GemmWRows: rows must start at a multiple of 8");
  const MatrixSource source{static_cast<const uint8_t*>(x), x_signed, ldx, w.k()};
  Q8GemmWDriver(w, n, &PackXPanel, &source, x_zero + (x_signed ? 128 : 0), out, pool, row_begin / kMr,
                CeilDiv(row_end, int64_t{kMr}));
}

void Q8GemmWDriver(const PackedQ8W& w, int64_t n, Q8WPanelFn pack, const void* source, int32_t zx,
                   const Q8Output& out, ThreadPool* pool, int64_t rp_begin, int64_t rp_end) {
  const int64_t m = w.m(), k = w.k();
  if (out.transposed || (out.range != nullptr && out.kind != Q8Output::kFloat))
    throw std::invalid_argument("Q8GemmW: unsupported output");
  if (m <= 0 || n <= 0) return;  // an unpacked W is [0, 0]: nothing to write
  const int64_t kg = CeilDiv(k, int64_t{kGroup});
  if (rp_end < 0) rp_end = CeilDiv(m, int64_t{kMr});
  // Row panels of this call; rp0 the first (the tiles' row indices stay W's).
  const int64_t col_panels = CeilDiv(n, int64_t{kNr}), row_panels = rp_end - rp_begin, rp0 = rp_begin;
  if (row_panels <= 0) return;
  // Row chunks: enough tasks for the threads when there are few pixel panels. But a W no taller
  // than deep (a CNN's narrowing 1x1 convs, K >= M) keeps whole pixel panels per task as long as
  // they share out evenly enough (as many as threads, or 2+ each): its packed X outweighs W, and
  // the row split's shared panels (packed up front, then read by every thread) cost more than
  // each thread reading all of W. MobileNetV2 int8, 2 threads: 384->64 at 14x14 35 -> 22 us,
  // 960->160 at 7x7 48 -> 38, all its nodes 2429 -> 2234 us. Widening 1x1s keep the row split:
  // split by pixels, their output left the depthwise conv reading it (split by channels) 24 -> 29 us.
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  int64_t chunks = 1;
  const bool whole_panels = threads > 1 && k >= m && (col_panels % threads == 0 || col_panels >= 2 * threads);
  while (!whole_panels && chunks < row_panels && col_panels * chunks < 4 * threads) chunks *= 2;
  chunks = std::min(chunks, row_panels);
  const int64_t per_chunk = CeilDiv(row_panels, chunks);
  const int8_t* wdata = Q8PackedWAccess::Data(w);
  const int32_t* row_sums = Q8PackedWAccess::RowSums(w);
  const int32_t* row_zero = Q8PackedWAccess::RowZero(w);
  const bool quantized = out.kind == Q8Output::kQuantized, to_codes = out.kind == Q8Output::kFloatCodes;
  const bool to_float = out.kind == Q8Output::kFloat || to_codes;
  if (to_codes && (out.zero_point < 0 || out.zero_point > 255))
    throw std::invalid_argument("Q8GemmW: kFloatCodes' zero point must be within 0..255");
  // As q8_quantize_avx512.cc's QuantizeByReciprocal: exact where neither the remainder nor the
  // reciprocal leaves the normal range.
  const bool by_reciprocal = out.code_scale >= 0x1p-60f && out.code_scale <= 0x1p60f;
  // The pixel sums only meet W's zero points: symmetric int8 weights (all zero) skip them.
  const bool need_sums = std::any_of(row_zero, row_zero + m, [](int32_t z) { return z != 0; });
  const float lo = (out.out_signed ? -128.0f : 0.0f) - static_cast<float>(out.zero_point);
  const float hi = (out.out_signed ? 127.0f : 255.0f) - static_cast<float>(out.zero_point);
  const __m512i kz = _mm512_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(k) * static_cast<uint32_t>(zx)));
  // Each row's constant terms, where its accumulators start (wrapping as the int32 sums do):
  // - zx' sum_k w', plus the int32 bias when requantizing. Rows past M: 0.
  thread_local std::vector<int32_t> row_init;
  row_init.assign(static_cast<size_t>(CeilDiv(m, int64_t{kMr}) * kMr), 0);
  for (int64_t i = 0; i < m; ++i) {
    uint32_t v = 0u - static_cast<uint32_t>(zx) * static_cast<uint32_t>(row_sums[i]);
    if (quantized && out.bias_int != nullptr) v += static_cast<uint32_t>(out.bias_int[i]);
    row_init[static_cast<size_t>(i)] = static_cast<int32_t>(v);
  }
  const int32_t* inits = row_init.data();  // the workers see this thread's vector through the pointer
  // Rows [rp * 8, +8) x columns [j0, j0 + cols) from the tile's acc; xs0/xs1: the columns'
  // sum_k x' - K zx'.
  // kFloat with out.range: each task keeps the running min / max of what it writes (from 0, NaN
  // skipped: min_ps / max_ps return the accumulator for a NaN value) and merges them at its end.
  std::mutex range_mutex;
  auto merge_range = [&](__m512 rlo, __m512 rhi) {
    if (out.range == nullptr) return;
    const float l = _mm512_reduce_min_ps(rlo), h = _mm512_reduce_max_ps(rhi);
    const std::lock_guard<std::mutex> lock(range_mutex);
    out.range[0] = std::min(out.range[0], l);
    out.range[1] = std::max(out.range[1], h);
  };
  // Instantiated apart for kFloat (float_out: std::true_type), so the int32 and requantized
  // tiles keep the code they had without it (1-2 % slower on QLinearConv's pointwise convs).
  auto finish = [&](auto float_out, int64_t rp, int64_t j0, int cols, const int32_t* acc, __m512i xs0, __m512i xs1,
                    __m512& rlo, __m512& rhi) {
    const __mmask16 m0 = static_cast<__mmask16>(cols >= 16 ? 0xFFFF : (1u << cols) - 1);
    const __mmask16 m1 = static_cast<__mmask16>(cols >= 32 ? 0xFFFF : cols <= 16 ? 0 : (1u << (cols - 16)) - 1);
    const int rows = static_cast<int>(std::min<int64_t>(kMr, m - rp * kMr));
    // Row r's sums (acc started at row_init: - zx' sum_k w', plus the bias when requantizing).
    auto row_sums_of = [&](int r, __m512i& v0, __m512i& v1) {
      const int64_t i = rp * kMr + r;
      v0 = _mm512_load_si512(acc + r * kNr);
      v1 = _mm512_load_si512(acc + r * kNr + 16);
      if (row_zero[i] != 0) {  // symmetric int8 weights (the common case) skip the multiplies
        const __m512i zw = _mm512_set1_epi32(row_zero[i]);
        v0 = _mm512_sub_epi32(v0, _mm512_mullo_epi32(zw, xs0));
        v1 = _mm512_sub_epi32(v1, _mm512_mullo_epi32(zw, xs1));
      }
    };
    if constexpr (!decltype(float_out)::value) {
      if (quantized) {
        // Two rows at a time: scaled, clamped in float first (as ORT does), rounded half to even
        // (the default rounding mode), then narrowed by packs (exact: within [-255, 255], then
        // with the zero point within the output type) and one vpermd that puts each row's 32
        // codes together. With few input channels the epilogue is most of a conv's time: this
        // and row_init made 16->96 channels at 112x112 1.3x faster than a vpmovdb per vector.
        const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
        const __m512i zp = _mm512_set1_epi16(static_cast<int16_t>(out.zero_point));
        const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        const __mmask32 mask = static_cast<__mmask32>(cols >= 32 ? 0xFFFFFFFFu : (1u << cols) - 1);
        auto scaled = [&](int64_t i, __m512i v) {
          const __m512 sc = _mm512_set1_ps(out.scale[out.scale_per_column ? i : 0]);
          const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), sc);
          return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(f, vlo), vhi));
        };
        for (int r = 0; r < rows; r += 2) {
          const int64_t i = rp * kMr + r;
          __m512i a0, a1, b0 = _mm512_setzero_si512(), b1 = _mm512_setzero_si512();
          row_sums_of(r, a0, a1);
          a0 = scaled(i, a0), a1 = scaled(i, a1);
          if (r + 1 < rows) {
            row_sums_of(r + 1, b0, b1);
            b0 = scaled(i + 1, b0), b1 = scaled(i + 1, b1);
          }
          // Per 128-bit lane: a0, a1, b0, b1's four codes each (dwords 4L..4L+3).
          const __m512i pa = _mm512_add_epi16(_mm512_packs_epi32(a0, a1), zp);
          const __m512i pb = _mm512_add_epi16(_mm512_packs_epi32(b0, b1), zp);
          const __m512i codes = _mm512_permutexvar_epi32(
              order, out.out_signed ? _mm512_packs_epi16(pa, pb) : _mm512_packus_epi16(pa, pb));
          auto* c = static_cast<uint8_t*>(out.c) + i * out.ldc + j0;
          _mm256_mask_storeu_epi8(c, mask, _mm512_castsi512_si256(codes));
          if (r + 1 < rows) _mm256_mask_storeu_epi8(c + out.ldc, mask, _mm512_extracti64x4_epi64(codes, 1));
        }
        return;
      }
    }
    for (int r = 0; r < rows; ++r) {
      const int64_t i = rp * kMr + r;
      __m512i v0, v1;
      row_sums_of(r, v0, v1);
      if constexpr (decltype(float_out)::value) {
        // q8_to_float.h's value: the *_round_ forms are never contracted into an FMA, so the
        // product and the sum round once each, as the unfused graph's Mul and Add; max(lo, v)
        // and min(hi, v) return v when it is NaN, as Clip does.
        const __m512 sc = _mm512_set1_ps(out.scale[out.scale_per_column ? i : 0]);
        const __m512 vb = _mm512_set1_ps(out.bias != nullptr ? out.bias[i] : 0.0f);
        const __m512 flo = _mm512_set1_ps(out.lo), fhi = _mm512_set1_ps(out.hi);
        auto convert = [&](__m512i v) {
          __m512 f = _mm512_mul_round_ps(_mm512_cvtepi32_ps(v), sc, _MM_FROUND_CUR_DIRECTION);
          if (out.bias != nullptr) f = _mm512_add_round_ps(f, vb, _MM_FROUND_CUR_DIRECTION);
          return _mm512_min_ps(fhi, _mm512_max_ps(flo, f));
        };
        const __m512 f0 = convert(v0), f1 = convert(v1);
        if (to_codes) {
          // Q8QuantizeU8's operations (q8_quantize_avx512.cc): the quotient correctly rounded
          // (by the reciprocal and one fma correction where the scale allows, else vdivps), max /
          // min return their second operand for a NaN (so it becomes the lowest code, 0), rounding
          // half to even.
          const __m512 cs = _mm512_set1_ps(out.code_scale), rc = _mm512_set1_ps(1.0f / out.code_scale);
          const __m512 clo = _mm512_set1_ps(0.0f - static_cast<float>(out.zero_point));
          const __m512 chi = _mm512_set1_ps(255.0f - static_cast<float>(out.zero_point));
          const __m512i zp = _mm512_set1_epi32(out.zero_point);
          auto code = [&](__m512 f) {
            __m512 q;
            if (by_reciprocal) {
              const __m512 q0 = _mm512_mul_ps(f, rc);
              q = _mm512_fmadd_ps(_mm512_fnmadd_ps(q0, cs, f), rc, q0);
              q = _mm512_mask_mov_ps(q, _mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q), q0);  // q0 infinite, or f NaN
            } else {
              q = _mm512_div_ps(f, cs);
            }
            q = _mm512_min_ps(_mm512_max_ps(q, clo), chi);
            return _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(q), zp));
          };
          auto* c = static_cast<uint8_t*>(out.c) + i * out.ldc + j0;
          _mm_mask_storeu_epi8(c, m0, code(f0));
          _mm_mask_storeu_epi8(c + 16, m1, code(f1));
          continue;
        }
        auto* c = static_cast<float*>(out.c) + i * out.ldc + j0;
        _mm512_mask_storeu_ps(c, m0, f0);
        _mm512_mask_storeu_ps(c + 16, m1, f1);
        if (out.range != nullptr) {
          rlo = _mm512_mask_min_ps(rlo, m0, f0, rlo);
          rhi = _mm512_mask_max_ps(rhi, m0, f0, rhi);
          rlo = _mm512_mask_min_ps(rlo, m1, f1, rlo);
          rhi = _mm512_mask_max_ps(rhi, m1, f1, rhi);
        }
        continue;
      }
      auto* c = static_cast<int32_t*>(out.c) + i * out.ldc + j0;  // int32 out (quantized returned above)
      _mm512_mask_storeu_epi32(c, m0, v0);
      _mm512_mask_storeu_epi32(c + 16, m1, v1);
    }
  };
  const int64_t panel_bytes = std::max<int64_t>(1, kg) * kNr * kGroup;
  if ((row_panels * kg * kMr * kGroup > kLargeW || (threads > 1 && chunks > 1)) && col_panels * panel_bytes <= kResidentX) {
    // W larger than L2 and few pixels (the last stages of a CNN): every X panel packed first, then
    // each W panel passes all of them, so W streams from memory once instead of once a panel.
    // Also when threads split W's rows for want of pixel panels: each row chunk would pack its
    // pixel panels again (at 2 threads, up to 4 times as often as at 1).
    thread_local AlignedFloats all_panels;
    thread_local std::vector<__m512i> all_sums;
    const auto floats = static_cast<size_t>(col_panels * panel_bytes / 4);
    if (all_panels.size() < floats) all_panels = AlignedFloats(floats);
    all_sums.resize(static_cast<size_t>(2 * col_panels));
    auto* panels = reinterpret_cast<uint8_t*>(all_panels.data());
    __m512i* sums = all_sums.data();
    ThreadPool::For(pool, col_panels, 4.0 * static_cast<double>(panel_bytes), [&](int64_t c0, int64_t c1) {
      for (int64_t cp = c0; cp < c1; ++cp) {
        uint8_t* panel = panels + cp * panel_bytes;
        pack(source, cp * kNr, static_cast<int>(std::min<int64_t>(kNr, n - cp * kNr)), panel);
        sums[2 * cp] = sums[2 * cp + 1] = _mm512_setzero_si512();
        if (!need_sums) continue;
        PanelSums(panel, kg, &sums[2 * cp], &sums[2 * cp + 1]);
        sums[2 * cp] = _mm512_sub_epi32(sums[2 * cp], kz);
        sums[2 * cp + 1] = _mm512_sub_epi32(sums[2 * cp + 1], kz);
      }
    });
    const double row_cost = 2.0 * kMr * static_cast<double>(kg * kGroup) * static_cast<double>(col_panels * kNr);
    ThreadPool::For(pool, row_panels, row_cost, [&](int64_t r0, int64_t r1) {
      alignas(64) int32_t acc[kMr * kNr] = {};  // zeroed: a 16-pixel tile leaves the upper half unwritten
      __m512 rlo = _mm512_setzero_ps(), rhi = _mm512_setzero_ps();
      for (int64_t rp = rp0 + r0; rp < rp0 + r1; ++rp)
        for (int64_t cp = 0; cp < col_panels; ++cp) {
          const int cols = static_cast<int>(std::min<int64_t>(kNr, n - cp * kNr));
          Multiply(kg, wdata + rp * kg * kMr * kGroup, panels + cp * panel_bytes, cols, inits + rp * kMr, acc);
          if (to_float) finish(std::true_type{}, rp, cp * kNr, cols, acc, sums[2 * cp], sums[2 * cp + 1], rlo, rhi);
          else finish(std::false_type{}, rp, cp * kNr, cols, acc, sums[2 * cp], sums[2 * cp + 1], rlo, rhi);
        }
      merge_range(rlo, rhi);
    });
    return;
  }
  const double cost = 2.0 * static_cast<double>(per_chunk * kMr) * static_cast<double>(kg * kGroup) * kNr;
  ThreadPool::For(pool, col_panels * chunks, cost, [&](int64_t t0, int64_t t1) {
    // The X panel: per-thread, grown on demand and kept for later calls (as the SGEMM's
    // Workspace; a fresh 100+ KB block each call came from mmap, page faults included).
    thread_local AlignedFloats panel_buffer;
    const auto panel_floats = static_cast<size_t>(panel_bytes / 4);
    if (panel_buffer.size() < panel_floats) panel_buffer = AlignedFloats(panel_floats);
    auto* panel = reinterpret_cast<uint8_t*>(panel_buffer.data());
    alignas(64) int32_t acc[kMr * kNr] = {};  // zeroed: a 16-pixel tile leaves the upper half unwritten
    __m512i xs0 = _mm512_setzero_si512(), xs1 = _mm512_setzero_si512();
    __m512 rlo = _mm512_setzero_ps(), rhi = _mm512_setzero_ps();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t cp = t / chunks, chunk = t % chunks;
      const int64_t j0 = cp * kNr;
      const int cols = static_cast<int>(std::min<int64_t>(kNr, n - j0));
      if (t == t0 || chunk == 0) {
        pack(source, j0, cols, panel);
        if (need_sums) {
          PanelSums(panel, kg, &xs0, &xs1);
          xs0 = _mm512_sub_epi32(xs0, kz);  // sum_k x' - K zx', per pixel
          xs1 = _mm512_sub_epi32(xs1, kz);
        }
      }
      const int64_t rp1 = rp0 + std::min(row_panels, (chunk + 1) * per_chunk);
      for (int64_t rp = rp0 + chunk * per_chunk; rp < rp1; ++rp) {
        Multiply(kg, wdata + rp * kg * kMr * kGroup, panel, cols, inits + rp * kMr, acc);
        if (to_float) finish(std::true_type{}, rp, j0, cols, acc, xs0, xs1, rlo, rhi);
        else finish(std::false_type{}, rp, j0, cols, acc, xs0, xs1, rlo, rhi);
      }
    }
    merge_range(rlo, rhi);
  });
}

}  // namespace onyx::linalg
#endif  // __x86_64__
