// Q8GemmW's and Q8ConvW's codes output (Q8Output::kFloatCodes: a dynamically quantized conv's
// float stage, then DynamicQuantizeLinear's uint8 codes of it, from the registers) against the
// same GEMM's kFloat output quantized by Q8QuantizeU8: byte for byte, so a code link's second
// pass equals quantizing the float output. Ties (scale 0.5, code scale 1: exact halves rounded to
// even), saturation at both ends, zero points 0 / 128 / 255, a zero code scale (an all-zero
// range), a NaN stage value (a NaN scale), odd sizes, a 16-pixel last panel, W past L2, threads.
// Runs where the CPU has AVX-512 VNNI.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "linalg/isa_variant_test.h"
#include "linalg/q8_conv_w.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_quantize.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

class Q8GemmWCodesTest : public Q8VnniTest {};

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Case {
  float scale_base;  // the per-row scales are scale_base * (1 + small), or exactly it when exact
  bool exact, bias;
  float lo, hi;
  float code_scale;
  int32_t zero_point;
};

// Runs `call` once with kFloat and once with kFloatCodes (leading dimension n + 5) and compares
// the codes with Q8QuantizeU8 of the floats.
template <typename Call>
void Compare(int64_t m, int64_t n, uint32_t seed, Call call) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Case& cs : {Case{1e-3f, false, true, -kInf, kInf, 0.02f, 128}, Case{0.5f, true, false, -kInf, kInf, 1.0f, 0},
                         Case{0.5f, true, true, -kInf, kInf, 1.0f, 128}, Case{1e-3f, false, true, 0.0f, 6.0f, 0.01f, 0},
                         Case{1e-3f, false, false, -kInf, kInf, 1e-4f, 255}, Case{1e-3f, false, true, -kInf, kInf, 0.0f, 0},
                         Case{nan, true, true, -kInf, kInf, 0.05f, 17}}) {
    std::vector<float> scale(static_cast<size_t>(m)), bias(static_cast<size_t>(m));
    for (auto& s : scale) s = cs.exact ? cs.scale_base : cs.scale_base * (1.0f + 0.5f * u(rng));
    for (auto& b : bias) b = cs.exact ? std::round(4.0f * u(rng)) : u(rng);
    Q8Output o;
    o.kind = Q8Output::kFloat;
    o.scale = scale.data();
    o.scale_per_column = true;
    o.bias = cs.bias ? bias.data() : nullptr;
    o.lo = cs.lo, o.hi = cs.hi;
    std::vector<float> f(static_cast<size_t>(m * n));
    o.c = f.data();
    o.ldc = n;
    call(o);
    const int64_t ldc = n + 5;
    std::vector<uint8_t> codes(static_cast<size_t>(m * ldc), 0xA5);
    o.kind = Q8Output::kFloatCodes;
    o.c = codes.data();
    o.ldc = ldc;
    o.code_scale = cs.code_scale;
    o.zero_point = cs.zero_point;
    call(o);
    std::vector<uint8_t> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) {
      Q8QuantizeU8(f.data() + i * n, n, cs.code_scale, static_cast<uint8_t>(cs.zero_point), want.data());
      for (int64_t j = 0; j < ldc; ++j) {
        const uint8_t have = codes[static_cast<size_t>(i * ldc + j)];
        if (j >= n) {
          ASSERT_EQ(have, 0xA5) << "wrote past N at " << i << ", " << j;
          continue;
        }
        ASSERT_EQ(have, want[static_cast<size_t>(j)])
            << "at " << i << ", " << j << ": float " << f[static_cast<size_t>(i * n + j)] << ", code scale "
            << cs.code_scale << ", zero point " << cs.zero_point;
      }
    }
  }
}

void CheckGemm(int64_t m, int64_t n, int64_t k, bool w_signed, uint32_t seed, ThreadPool* pool = nullptr) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> w(static_cast<size_t>(m * k)), x(static_cast<size_t>(k * n));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng) / 8);  // small sums: many codes inside 0..255
  std::vector<int32_t> w_zp(static_cast<size_t>(m));
  for (auto& z : w_zp) z = w_signed ? 0 : byte(rng);
  const int32_t x_zp = 9;
  const PackedQ8W packed(m, k, w.data(), w_signed, w_zp.data(), true);
  Compare(m, n, seed, [&](const Q8Output& o) { Q8GemmW(packed, n, x.data(), false, n, x_zp, o, pool); });
}

TEST_F(Q8GemmWCodesTest, GemmCodesEqualQuantizedFloat) {
  uint32_t seed = 1;
  for (bool ws : {true, false}) {
    CheckGemm(1, 1, 1, ws, seed++);
    CheckGemm(7, 33, 27, ws, seed++);
    CheckGemm(17, 80, 32, ws, seed++);  // a last panel of 16 pixels
    CheckGemm(24, 196, 16, ws, seed++);
  }
}

TEST_F(Q8GemmWCodesTest, ThreadsAndLargeW) {
  ThreadPool pool(2);
  CheckGemm(40, 70, 163, true, 11, &pool);
  CheckGemm(160, 49, 96, true, 12, &pool);  // rows split, pixel panels packed once
  CheckGemm(260, 70, 3201, true, 13);       // W past L2
}

TEST_F(Q8GemmWCodesTest, ConvCodesEqualQuantizedFloat) {
  const int64_t m = 13, c = 3, ih = 17, iw = 19, oh = 9, ow = 10;
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> w(static_cast<size_t>(m * c * 9)), x(static_cast<size_t>(c * ih * iw));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  const int32_t x_zp = 99, w_zp = 0;
  const PackedQ8W packed(m, c * 9, w.data(), true, &w_zp, false);
  Q8ConvShape s;
  s.channels = c, s.ih = ih, s.iw = iw, s.oh = oh, s.ow = ow, s.kh = s.kw = 3, s.sy = s.sx = 2, s.top = s.left = 1;
  ThreadPool pool(2);
  for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool})
    Compare(m, oh * ow, 22, [&](const Q8Output& o) { Q8ConvW(packed, s, x.data(), false, x_zp, o, p); });
}

// The codes are uint8: a zero point outside 0..255 is refused, and Q8Gemm refuses the kind.
TEST_F(Q8GemmWCodesTest, RefusesBadZeroPointAndQ8Gemm) {
  const int8_t wv[4] = {1, 2, 3, 4};
  const PackedQ8W packed(1, 4, wv, true, nullptr, false);
  const uint8_t x[4] = {1, 2, 3, 4};
  uint8_t c = 0;
  float scale = 1.0f;
  Q8Output o;
  o.kind = Q8Output::kFloatCodes;
  o.c = &c;
  o.ldc = 1;
  o.scale = &scale;
  o.zero_point = 256;
  EXPECT_THROW(Q8GemmW(packed, 1, x, false, 1, 0, o, nullptr), std::invalid_argument);
  o.zero_point = 0;
  const PackedQ8B packed_b(false, 4, 1, wv, true, 1, nullptr, false);
  EXPECT_THROW(Q8Gemm(1, x, false, 4, nullptr, false, packed_b, o, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace onyx::linalg
