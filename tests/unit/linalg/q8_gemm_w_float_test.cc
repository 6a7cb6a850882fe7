// Q8GemmW's and Q8ConvW's float output (Q8Output::kFloat with lo / hi: a dynamically quantized
// conv's Cast, Mul, Add and Relu / Clip from the registers), and the range of what it wrote
// (Q8Output::range, from 0, over the N columns only), bit for bit against the scalar
// reference: Q8GemmReference's int32 result finished row by row by Q8ToFloatScalar. Scale per
// row and per tensor, with and without bias (no bias must not add 0: -0.0 stays), Relu and Clip
// bounds, odd sizes, a 16-pixel last panel, W past L2, threads. Runs where the CPU has AVX-512 VNNI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "linalg/isa_variant_test.h"
#include "linalg/q8_conv_w.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_to_float.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

class Q8GemmWFloatTest : public Q8VnniTest {};

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Stage {
  bool per_row, bias;
  float lo, hi;
};

// The expected C: ref [M, N] int32, each row through the scalar float stage.
std::vector<float> Expected(const std::vector<int32_t>& ref, int64_t m, int64_t n, const std::vector<float>& scale,
                            const std::vector<float>& bias, const Stage& st) {
  std::vector<float> out(static_cast<size_t>(m * n));
  std::memcpy(out.data(), ref.data(), out.size() * 4);
  for (int64_t i = 0; i < m; ++i)
    Q8ToFloatScalar(out.data() + i * n, n, scale[st.per_row ? static_cast<size_t>(i) : 0],
                    st.bias ? &bias[static_cast<size_t>(i)] : nullptr, st.lo, st.hi);
  return out;
}

// Runs `call` with a kFloat output of leading dimension n + 3 and compares it bit for bit.
template <typename Call>
void Compare(const std::vector<int32_t>& ref, int64_t m, int64_t n, uint32_t seed, Call call) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> scale(static_cast<size_t>(m)), bias(static_cast<size_t>(m));
  for (auto& s : scale) s = 1e-3f * (1.0f + u(rng));
  for (auto& b : bias) b = u(rng);
  for (const Stage& st : {Stage{true, true, -kInf, kInf}, Stage{false, false, -kInf, kInf},
                          Stage{true, false, 0.0f, kInf}, Stage{false, true, 0.0f, 6.0f}}) {
    const std::vector<float> expect = Expected(ref, m, n, scale, bias, st);
    const int64_t ldc = n + 3;
    std::vector<float> c(static_cast<size_t>(m * ldc), 12345.0f);
    Q8Output o;
    o.kind = Q8Output::kFloat;
    o.c = c.data();
    o.ldc = ldc;
    o.scale = scale.data();
    o.scale_per_column = st.per_row;
    o.bias = st.bias ? bias.data() : nullptr;
    o.lo = st.lo, o.hi = st.hi;
    float range[2] = {0.0f, 0.0f};
    o.range = range;
    call(o);
    float lo = 0.0f, hi = 0.0f;
    for (float v : expect) lo = std::min(lo, v), hi = std::max(hi, v);
    EXPECT_EQ(range[0], lo) << "the range's low end";
    EXPECT_EQ(range[1], hi) << "the range's high end";
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < ldc; ++j) {
        const float have = c[static_cast<size_t>(i * ldc + j)];
        if (j >= n) {
          ASSERT_EQ(have, 12345.0f) << "wrote past N at " << i << ", " << j;
          continue;
        }
        const float want = expect[static_cast<size_t>(i * n + j)];
        ASSERT_EQ(std::memcmp(&have, &want, 4), 0) << have << " vs " << want << " at " << i << ", " << j
                                                     << " (per_row " << st.per_row << ", bias " << st.bias
                                                     << ", lo " << st.lo << ", hi " << st.hi << ")";
      }
  }
}

void CheckGemm(int64_t m, int64_t n, int64_t k, bool w_signed, uint32_t seed, ThreadPool* pool = nullptr) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> w(static_cast<size_t>(m * k)), x(static_cast<size_t>(k * n));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  std::vector<int32_t> w_zp(static_cast<size_t>(m));
  for (auto& z : w_zp) z = w_signed ? 0 : byte(rng);  // symmetric int8 (the common case) and uint8
  const int32_t x_zp = 117;
  std::vector<int32_t> ref(static_cast<size_t>(m * n));
  Q8GemmReference(m, n, k, w.data(), w_signed, k, w_zp.data(), true, false, x.data(), false, n, &x_zp, false,
                  ref.data(), n);
  const PackedQ8W packed(m, k, w.data(), w_signed, w_zp.data(), true);
  Compare(ref, m, n, seed, [&](const Q8Output& o) { Q8GemmW(packed, n, x.data(), false, n, x_zp, o, pool); });
}

TEST_F(Q8GemmWFloatTest, PointwiseMatchesScalarStage) {
  uint32_t seed = 1;
  for (bool ws : {true, false}) {
    CheckGemm(1, 1, 1, ws, seed++);
    CheckGemm(7, 33, 27, ws, seed++);
    CheckGemm(17, 80, 32, ws, seed++);  // a last panel of 16 pixels
    CheckGemm(24, 196, 96, ws, seed++);
  }
}

TEST_F(Q8GemmWFloatTest, ThreadsAndLargeW) {
  ThreadPool pool(2);
  CheckGemm(40, 70, 163, true, 11, &pool);
  CheckGemm(160, 49, 96, true, 12, &pool);      // rows split, pixel panels packed once
  CheckGemm(260, 70, 3201, true, 13);           // W past L2
  CheckGemm(263, 33, 3203, false, 14, &pool);
}

TEST_F(Q8GemmWFloatTest, ConvMatchesScalarStage) {
  // 3x3, stride 2, pad 1 (MobileNetV2's first conv, smaller): the implicit im2col by hand.
  const int64_t m = 13, c = 3, ih = 17, iw = 19, oh = 9, ow = 10, k = c * 9, n = oh * ow;
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> w(static_cast<size_t>(m * k)), x(static_cast<size_t>(c * ih * iw));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  const int32_t x_zp = 99, w_zp = 0;
  std::vector<uint8_t> col(static_cast<size_t>(k * n));
  for (int64_t r = 0; r < k; ++r)
    for (int64_t q = 0; q < n; ++q) {
      const int64_t y = q / ow * 2 - 1 + r / 3 % 3, xx = q % ow * 2 - 1 + r % 3;
      const bool inside = y >= 0 && y < ih && xx >= 0 && xx < iw;
      col[static_cast<size_t>(r * n + q)] =
          inside ? x[static_cast<size_t>((r / 9 * ih + y) * iw + xx)] : static_cast<uint8_t>(x_zp);
    }
  std::vector<int32_t> ref(static_cast<size_t>(m * n));
  Q8GemmReference(m, n, k, w.data(), true, k, &w_zp, false, false, col.data(), false, n, &x_zp, false, ref.data(), n);
  const PackedQ8W packed(m, k, w.data(), true, &w_zp, false);
  Q8ConvShape s;
  s.channels = c, s.ih = ih, s.iw = iw, s.oh = oh, s.ow = ow, s.kh = s.kw = 3, s.sy = s.sx = 2, s.top = s.left = 1;
  ThreadPool pool(2);
  for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool})
    Compare(ref, m, n, 22, [&](const Q8Output& o) { Q8ConvW(packed, s, x.data(), false, x_zp, o, p); });
}

// The bounds belong to Q8GemmW's float output: Q8Gemm refuses them rather than ignore them.
TEST_F(Q8GemmWFloatTest, Q8GemmRefusesBounds) {
  const int8_t b[4] = {1, 2, 3, 4};
  const PackedQ8B packed(false, 4, 1, b, true, 1, nullptr, false);
  const uint8_t a[4] = {1, 2, 3, 4};
  float c = 0.0f, scale = 1.0f;
  Q8Output o;
  o.kind = Q8Output::kFloat;
  o.c = &c;
  o.ldc = 1;
  o.scale = &scale;
  o.lo = 0.0f;
  EXPECT_THROW(Q8Gemm(1, a, false, 4, nullptr, false, packed, o, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace onyx::linalg
