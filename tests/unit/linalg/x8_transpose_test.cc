// Transpose2D8 for every ISA variant against a plain element loop: shapes below, at and past the
// 16-row x 64-column blocks and the 64 x 64 cache tiles, ragged on both sides, leading dims
// wider than the rows, and output bytes outside the transposed rectangle left untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "linalg/isa_variant_test.h"
#include "linalg/x8_transpose.h"

namespace onyx::linalg {
namespace {

class X8TransposeVariant : public LinalgIsaVariant {};

TEST_P(X8TransposeVariant, MatchesElementLoop) {
  struct Case {
    size_t rows, cols, pad_in, pad_out;
  };
  const Case cases[] = {{1, 1, 0, 0},    {16, 64, 0, 0},  {16, 32, 0, 0},  {64, 3136, 0, 0}, {3136, 64, 0, 0},
                        {17, 65, 3, 5},  {15, 63, 0, 1},  {33, 129, 7, 0}, {130, 70, 1, 2},  {5, 200, 0, 0},
                        {200, 5, 2, 0},  {48, 96, 16, 16}, {2048, 49, 0, 0}};
  std::mt19937 rng(7);
  for (const Case& c : cases) {
    const size_t ld_in = c.cols + c.pad_in, ld_out = c.rows + c.pad_out;
    std::vector<uint8_t> in(c.rows * ld_in);
    for (auto& v : in) v = static_cast<uint8_t>(rng());
    std::vector<uint8_t> out(c.cols * ld_out, 0xA5), expect(out);
    for (size_t i = 0; i < c.rows; ++i)
      for (size_t j = 0; j < c.cols; ++j) expect[j * ld_out + i] = in[i * ld_in + j];
    Transpose2D8(in.data(), ld_in, out.data(), ld_out, c.rows, c.cols);
    ASSERT_EQ(out, expect) << GetParam() << " rows " << c.rows << " cols " << c.cols << " ld_in " << ld_in
                           << " ld_out " << ld_out;
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, X8TransposeVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
