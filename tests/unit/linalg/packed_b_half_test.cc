// PackedB from float16 bits (f32_packed_b_half.cc) is bit for bit the pack of the widened float
// matrix, on every ISA this CPU runs: products with either pack agree exactly, for B [K, N] and
// [N, K], K over several blocks, N not a multiple of the panel width, subnormals, infinities and
// NaNs among the values.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/float_types.h"
#include "linalg/f16_widen.h"
#include "linalg/gemm.h"

namespace onyx::linalg {
namespace {

std::vector<uint16_t> HalfValues(int64_t count) {
  std::vector<uint16_t> bits(static_cast<size_t>(count));
  uint32_t s = 12345;
  for (auto& b : bits) {
    s = s * 1664525u + 1013904223u;
    b = FloatToHalfBits(static_cast<float>(static_cast<int32_t>(s >> 8) % 2001 - 1000) / 512.0f);
  }
  bits[0] = 0x0001;  // the least subnormal
  bits[1] = 0x7C00;  // +inf
  bits[2] = 0xFBFF;  // -65504
  bits[3] = 0x7E01;  // a NaN
  return bits;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(PackedBHalf, MatchesThePackOfTheWidenedMatrixOnEveryIsa) {
  const int64_t m = 5, k = 700, n = 45;
  const std::vector<uint16_t> half = HalfValues(k * n);
  std::vector<float> wide(half.size());
  WidenHalfScalar(half.data(), wide.data(), static_cast<int64_t>(half.size()));
  std::vector<float> a(static_cast<size_t>(m * k));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 8.0f;
  for (const std::string& isa : SupportedSgemmIsas()) {
    ASSERT_TRUE(ForceIsa(isa));
    for (bool trans_b : {false, true}) {
      const int64_t ldb = trans_b ? k : n;  // the same values read as [K, N] or as [N, K]
      const PackedB from_float(trans_b, k, n, wide.data(), ldb);
      const PackedB from_half(trans_b, k, n, half.data(), ldb);
      ASSERT_EQ(from_half.bytes(), from_float.bytes());
      EXPECT_STREQ(from_half.kernel_name(), from_float.kernel_name());
      std::vector<float> want(static_cast<size_t>(m * n)), got(want.size());
      SgemmPackedB(false, m, n, k, 1.0f, a.data(), k, from_float, 0.0f, want.data(), n, nullptr);
      SgemmPackedB(false, m, n, k, 1.0f, a.data(), k, from_half, 0.0f, got.data(), n, nullptr);
      int wrong = 0;
      for (size_t i = 0; i < want.size(); ++i)
        if (Bits(got[i]) != Bits(want[i]) && wrong++ < 5)
          ADD_FAILURE() << isa << (trans_b ? " trans_b" : "") << " [" << i << "]: " << got[i] << " vs " << want[i];
      EXPECT_EQ(wrong, 0) << isa << (trans_b ? " trans_b" : "");
    }
  }
  ForceIsa("auto");
}

}  // namespace
}  // namespace onyx::linalg
