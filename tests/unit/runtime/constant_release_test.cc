// GraphPlan::BuildContext::release_initializer: a constant is handed back as soon as its last
// reader has a kernel, when no kernel reads it at run time (MatMul packs a constant B), and is
// kept when some reader still reads it (Add) or the graph returns it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "model_builder.h"
#include "onnx/model_loader.h"
#include "onyx/session.h"
#include "providers/provider.h"
#include "runtime/graph_plan.h"

namespace onyx {
namespace {

// x [8, 8] -> MatMul W1 -> MatMul W2 -> Add W2 -> MatMul W3 -> y, and W4 returned as it is.
std::string Model() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {8, 8});
  b.Initializer("W1", test::FloatTensor({8, 8}, -1.0f, 0.03f));
  b.Initializer("W2", test::FloatTensor({8, 8}, 0.5f, -0.01f));
  b.Initializer("W3", test::FloatTensor({8, 8}, 0.2f, 0.02f));
  b.Initializer("W4", test::FloatTensor({8}, 1.0f, 1.0f));
  b.Node("MatMul", {"x", "W1"}, {"a"});
  b.Node("MatMul", {"a", "W2"}, {"c"});
  b.Node("Add", {"c", "W2"}, {"d"});
  b.Node("MatMul", {"d", "W3"}, {"y"});
  b.Node("Identity", {"W4"}, {"w4"});
  b.Output("y", DataType::kFloat, {8, 8}).Output("W4", DataType::kFloat, {8}).Output("w4", DataType::kFloat, {8});
  return b.Bytes();
}

TEST(ConstantRelease, PackedConstantsGoAsTheirLastReaderIsBuilt) {
  const std::string bytes = Model();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  auto cpu = MakeCpuProvider();
  GraphPlan::BuildContext ctx;
  ctx.providers = {cpu.get()};
  std::vector<std::string> released;
  ctx.release_initializer = [&](const std::string& name) { released.push_back(name); };
  auto plan = GraphPlan::Build(*model->graph, ctx);
  // In node order; W2 (Add reads it) and W4 (a graph output) stay.
  EXPECT_EQ(released, (std::vector<std::string>{"W1", "W3"}));
}

TEST(ConstantRelease, ASessionThatDropsThemEarlyComputesTheSame) {
  const std::string bytes = Model();
  Session session(bytes.data(), bytes.size(), SessionOptions{});
  const Tensor x = test::FloatTensor({8, 8}, 0.1f, 0.01f);
  const auto out = session.Run({{"x", x}});
  // The reference, in double from the model's own initializers.
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  auto weight = [&](const char* name) { return model->graph->FindInitializer(name)->data<float>(); };
  auto matmul = [](const std::vector<double>& a, const float* w) {
    std::vector<double> r(64, 0.0);
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j)
        for (int k = 0; k < 8; ++k) r[i * 8 + j] += a[i * 8 + k] * w[k * 8 + j];
    return r;
  };
  std::vector<double> v(x.data<float>(), x.data<float>() + 64);
  v = matmul(matmul(v, weight("W1")), weight("W2"));
  for (int i = 0; i < 64; ++i) v[i] += weight("W2")[i];
  v = matmul(v, weight("W3"));
  const Tensor& y = out[0].tensor();
  for (int i = 0; i < 64; ++i) EXPECT_NEAR(y.data<float>()[i], v[i], 1e-4 * (1.0 + std::abs(v[i]))) << i;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(out[1].tensor().data<float>()[i], 1.0f + i);
    EXPECT_EQ(out[2].tensor().data<float>()[i], 1.0f + i);
  }
}

}  // namespace
}  // namespace onyx
