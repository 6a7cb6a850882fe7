// PackedQ8Nhwc's packing against its documented layout, computed here code by code:
// [ceil(M / 64)][taps][C / 4][64][4] codes (uint8 W stored - 128), zero past M and in the slack,
// and each filter's sum of stored codes; and where the pack lives (huge pages shared with the
// other packs, 64-byte aligned). Portable: runs on every CPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "linalg/q8_conv_nhwc.h"
#include "runtime/page_flags.h"

namespace onyx::linalg {
namespace {

struct PackCase {
  int64_t m, c, kh, kw;
  bool w_signed;
};

TEST(PackedQ8Nhwc, PacksEveryCodeWhereTheLayoutSays) {
  const std::vector<PackCase> cases = {{1, 4, 1, 1, true},    {64, 4, 3, 3, false}, {65, 8, 3, 3, true},
                                       {130, 16, 1, 1, false}, {32, 64, 5, 3, true}, {200, 36, 3, 3, false}};
  std::mt19937 rng(7);
  for (const PackCase& p : cases) {
    const int64_t taps = p.kh * p.kw, groups = p.c / 4, panel = PackedQ8Nhwc::kPanel;
    std::vector<uint8_t> w(static_cast<size_t>(p.m * p.c * taps));
    for (auto& v : w) v = static_cast<uint8_t>(rng());
    const int32_t zero = p.w_signed ? 0 : 128;
    const PackedQ8Nhwc packed(p.m, p.c, p.kh, p.kw, w.data(), p.w_signed, &zero, false);
    ASSERT_FALSE(packed.empty());
    const int64_t panels = (p.m + panel - 1) / panel;
    const int64_t size = panels * taps * groups * panel * 4;
    std::vector<int8_t> want(static_cast<size_t>(size), 0);
    std::vector<int32_t> sums(static_cast<size_t>(p.m), 0);
    for (int64_t o = 0; o < p.m; ++o)
      for (int64_t ch = 0; ch < p.c; ++ch)
        for (int64_t t = 0; t < taps; ++t) {
          const uint8_t v = w[static_cast<size_t>((o * p.c + ch) * taps + t)];
          const int8_t code = p.w_signed ? static_cast<int8_t>(v) : static_cast<int8_t>(static_cast<int>(v) - 128);
          want[static_cast<size_t>((((o / panel) * taps + t) * groups + ch / 4) * panel * 4 + (o % panel) * 4 + ch % 4)] =
              code;
          sums[static_cast<size_t>(o)] += code;
        }
    int64_t wrong = 0;
    for (int64_t i = 0; i < size; ++i) wrong += packed.data()[i] != want[static_cast<size_t>(i)];
    EXPECT_EQ(wrong, 0) << "M " << p.m << " C " << p.c << " taps " << taps;
    // The slack after the last panel (an AMX tile may read into it) holds zeros.
    for (int64_t i = size; i < size + 15 * panel * 4; ++i) ASSERT_EQ(packed.data()[i], 0) << i;
    for (int64_t o = 0; o < p.m; ++o) ASSERT_EQ(packed.sums()[o], sums[static_cast<size_t>(o)]) << o;
  }
}

// A Run after the process did other work finds the weights out of the TLB; on 4 KB pages (the
// pack came from malloc) that cost MobileNetV2 int8 about 8 % of its CPU time at 1 thread.
TEST(PackedQ8Nhwc, LiesOnHugePageAdvisedMemory) {
  if (!test::ThpAvailable()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  for (const PackCase& p : std::vector<PackCase>{{16, 8, 1, 1, true}, {160, 960, 1, 1, true}, {64, 32, 3, 3, false}}) {
    std::vector<uint8_t> w(static_cast<size_t>(p.m * p.c * p.kh * p.kw), 3);
    const int32_t zero = p.w_signed ? 0 : 128;
    const PackedQ8Nhwc packed(p.m, p.c, p.kh, p.kw, w.data(), p.w_signed, &zero, false);
    ASSERT_FALSE(packed.empty());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(packed.data()) % 64, 0u);
    EXPECT_TRUE(test::HugePageAdvised(packed.data())) << "M " << p.m << " C " << p.c << ": "
                                                      << test::VmFlagsOf(packed.data());
  }
}

}  // namespace
}  // namespace onyx::linalg
