// Q8Lookup (linalg/q8_lut.h): every variant against the plain table read, on every code and
// on lengths around the vector widths (the tails are masked or scalar).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "linalg/q8_lut.h"
#include "linalg/gemm.h"
#include "linalg/isa_variant_test.h"

namespace onyx::linalg {
namespace {

using LookupFn = void (*)(const uint8_t*, const uint8_t*, int64_t, uint8_t*);

// Every code in order, then random codes; sentinels after y catch writes past n.
void CheckLookup(LookupFn fn) {
  std::mt19937 rng(3);
  std::vector<uint8_t> table(256);
  for (auto& v : table) v = static_cast<uint8_t>(rng());
  for (int64_t n : {0, 1, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 200, 256, 1000}) {
    std::vector<uint8_t> x(static_cast<size_t>(n)), y(static_cast<size_t>(n) + 64, 0xA5);
    for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<uint8_t>(i < 256 ? i : rng());
    fn(table.data(), x.data(), n, y.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[static_cast<size_t>(i)], table[x[static_cast<size_t>(i)]]) << "n " << n << " at " << i;
    for (size_t i = static_cast<size_t>(n); i < y.size(); ++i) ASSERT_EQ(y[i], 0xA5) << "n " << n << " wrote past the end";
  }
}

class Q8LookupVariant : public LinalgIsaVariant {};

TEST_P(Q8LookupVariant, MatchesTable) { CheckLookup(&Q8Lookup); }

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8LookupVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

TEST(Q8Lookup, ScalarReadsTheTable) { CheckLookup(&Q8LookupScalar); }

#if defined(__x86_64__)
TEST(Q8Lookup, EachX86VariantMatchesTable) {
  const auto isas = SupportedSgemmIsas();
  auto has = [&](const char* isa) { return std::find(isas.begin(), isas.end(), isa) != isas.end(); };
  if (has("avx2")) CheckLookup(&Q8LookupAvx2);
  if (has("avx512")) CheckLookup(&Q8LookupAvx512);
  if (has("avx512") && Q8LookupVbmiSupported()) CheckLookup(&Q8LookupAvx512Vbmi);
}
#endif

}  // namespace
}  // namespace onyx::linalg
