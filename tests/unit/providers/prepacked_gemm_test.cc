// MatMul and Gemm with constant weights take the pre-packed SGEMM path; check it against the
// plain reference GEMM.
#include <gtest/gtest.h>

#include <random>

#include "linalg/gemm.h"
#include "model_builder.h"
#include "onyx/session.h"

namespace onyx {
namespace {

Tensor Random(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

void ExpectNear(const float* expected, const float* got, int64_t n) {
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(got[i], expected[i], 1e-4f + 1e-4f * std::fabs(expected[i])) << i;
}

TEST(PrepackedMatMul, BatchedActivationsTimesConstantWeights) {
  const int64_t batch = 3, m = 37, k = 70, n = 45;
  const Tensor w = Random({k, n}, 1);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {batch, m, k}).Output("y", DataType::kFloat, {batch, m, n});
  b.Initializer("w", w);
  b.Node("MatMul", {"x", "w"}, {"y"});
  const std::string bytes = b.Bytes();
  Session s(bytes.data(), bytes.size());
  const Tensor x = Random({batch, m, k}, 2);
  const Tensor y = s.Run({{"x", x}})[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{batch, m, n}));
  std::vector<float> expected(batch * m * n);
  linalg::SgemmReference(false, false, batch * m, n, k, 1.0f, x.data<float>(), k, w.data<float>(), n, 0.0f,
                         expected.data(), n);
  ExpectNear(expected.data(), y.data<float>(), batch * m * n);
}

TEST(PrepackedGemm, TransposedConstantWeightsWithBiasAndAlpha) {
  const int64_t m = 5, k = 33, n = 17;
  const Tensor w = Random({n, k}, 3), bias = Random({n}, 4);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {m, k}).Output("y", DataType::kFloat, {m, n});
  b.Initializer("w", w).Initializer("bias", bias);
  auto& node = b.Node("Gemm", {"x", "w", "bias"}, {"y"});
  node.attributes.push_back({"transB", ir::AttrType::kInt, "", 0.0f, 1});
  node.attributes.push_back({"alpha", ir::AttrType::kFloat, "", 0.5f});
  const std::string bytes = b.Bytes();
  Session s(bytes.data(), bytes.size());
  const Tensor x = Random({m, k}, 5);
  const Tensor y = s.Run({{"x", x}})[0].tensor();
  std::vector<float> expected(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) expected[i * n + j] = bias.data<float>()[j];
  linalg::SgemmReference(false, true, m, n, k, 0.5f, x.data<float>(), k, w.data<float>(), k, 1.0f, expected.data(), n);
  ExpectNear(expected.data(), y.data<float>(), m * n);
}

}  // namespace
}  // namespace onyx
