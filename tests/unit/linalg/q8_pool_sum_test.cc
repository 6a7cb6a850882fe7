// Q8PlaneSums (QLinearGlobalAveragePool's per-channel sums) for every ISA variant against a plain
// loop: plane sizes around the vector widths (1, 31-33, 49 = MobileNetV2's 7 x 7, 63-65, 127-129,
// 784), random codes and the extreme ones (all 255 / all -128 / all 127), planes not aligned.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "isa_variant_test.h"
#include "linalg/q8_pool_sum.h"

namespace onyx::linalg {
namespace {

using Q8PlaneSumsVariant = LinalgIsaVariant;

template <typename T>
std::vector<int32_t> Reference(const std::vector<T>& x, int64_t planes, int64_t image) {
  std::vector<int32_t> s(static_cast<size_t>(planes), 0);
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t p = 0; p < image; ++p) s[c] += x[c * image + p];
  return s;
}

TEST_P(Q8PlaneSumsVariant, MatchesPlainLoop) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int64_t image : {1, 31, 32, 33, 49, 63, 64, 65, 127, 128, 129, 784})
    for (int fill = 0; fill < 3; ++fill) {  // random, highest codes, lowest codes
      const int64_t planes = 5;
      // One code of slack in front so the planes start unaligned.
      std::vector<uint8_t> u(static_cast<size_t>(planes * image + 1));
      for (auto& v : u) v = fill == 0 ? static_cast<uint8_t>(byte(rng)) : (fill == 1 ? 255 : 0);
      std::vector<int8_t> s(u.size());
      for (size_t i = 0; i < u.size(); ++i) s[i] = fill == 0 ? static_cast<int8_t>(u[i]) : (fill == 1 ? 127 : -128);
      const std::vector<uint8_t> u_planes(u.begin() + 1, u.end());
      const std::vector<int8_t> s_planes(s.begin() + 1, s.end());
      std::vector<int32_t> got(static_cast<size_t>(planes), -1);
      Q8PlaneSumsU8(u.data() + 1, planes, image, got.data());
      EXPECT_EQ(got, Reference(u_planes, planes, image)) << "uint8 image " << image << " fill " << fill;
      Q8PlaneSumsS8(s.data() + 1, planes, image, got.data());
      EXPECT_EQ(got, Reference(s_planes, planes, image)) << "int8 image " << image << " fill " << fill;
    }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8PlaneSumsVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace onyx::linalg
