// The blocked 2-D transpose of every vector-math ISA variant against the plain index formula,
// bit for bit (NaN payloads and int32 values included), on edge shapes and leading dimensions,
// plus the attention-head permutations [0,2,1,3] and [0,2,3,1].
#include "linalg/transpose.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "linalg/vector_math.h"
#include "linalg/vector_test_util.h"

namespace onyx::linalg {
namespace {

using testing::VectorIsaGuard;

class TransposeIsa : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    guard_ = std::make_unique<VectorIsaGuard>(GetParam());
    ASSERT_TRUE(guard_->ok()) << GetParam();
  }
  void TearDown() override { guard_.reset(); }
  std::unique_ptr<VectorIsaGuard> guard_;
};

TEST_P(TransposeIsa, TwoDimensional) {
  std::mt19937 rng(1);
  std::vector<size_t> sizes;
  for (size_t s = 1; s <= 40; ++s) sizes.push_back(s);
  for (size_t s : {63, 64, 65, 127, 129, 300}) sizes.push_back(s);
  for (size_t rows : sizes) {
    for (size_t cols : sizes) {
      if (rows * cols > 40000 && (rows % 7 != 0)) continue;  // keep the big ones few
      const size_t ld_in = cols + (rows % 3), ld_out = rows + (cols % 2);
      std::vector<uint32_t> in(rows * ld_in), out(cols * ld_out, 0xdeadbeefu);
      for (uint32_t& v : in) v = static_cast<uint32_t>(rng());  // any bit pattern, NaNs included
      Transpose2D32(in.data(), ld_in, out.data(), ld_out, rows, cols);
      for (size_t j = 0; j < cols; ++j) {
        for (size_t i = 0; i < rows; ++i)
          ASSERT_EQ(out[j * ld_out + i], in[i * ld_in + j]) << GetParam() << " " << rows << "x" << cols;
        for (size_t i = rows; i < ld_out; ++i) ASSERT_EQ(out[j * ld_out + i], 0xdeadbeefu) << "padding written";
      }
    }
  }
}

TEST_P(TransposeIsa, AttentionHeadPermutations) {
  std::mt19937 rng(2);
  const size_t shapes[][4] = {{1, 128, 12, 64}, {2, 7, 3, 5}, {3, 17, 4, 16}, {1, 1, 1, 1}, {2, 33, 2, 9}};
  for (const auto& d : shapes) {
    const size_t n = d[0] * d[1] * d[2] * d[3];
    std::vector<float> in(n), out(n);
    for (float& v : in) v = std::uniform_real_distribution<float>(-1, 1)(rng);
    Transpose0213(in.data(), out.data(), d[0], d[1], d[2], d[3]);
    for (size_t a = 0; a < d[0]; ++a)
      for (size_t b = 0; b < d[1]; ++b)
        for (size_t c = 0; c < d[2]; ++c)
          for (size_t e = 0; e < d[3]; ++e)
            ASSERT_EQ(out[((a * d[2] + c) * d[1] + b) * d[3] + e], in[((a * d[1] + b) * d[2] + c) * d[3] + e]);
    Transpose0231(in.data(), out.data(), d[0], d[1], d[2], d[3]);
    for (size_t a = 0; a < d[0]; ++a)
      for (size_t b = 0; b < d[1]; ++b)
        for (size_t c = 0; c < d[2]; ++c)
          for (size_t e = 0; e < d[3]; ++e)
            ASSERT_EQ(out[((a * d[2] + c) * d[3] + e) * d[1] + b], in[((a * d[1] + b) * d[2] + c) * d[3] + e]);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, TransposeIsa, ::testing::ValuesIn(SupportedVectorIsas()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
