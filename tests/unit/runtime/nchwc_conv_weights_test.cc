// NchwcConv's weights: a Winograd-eligible 3x3 layer whose output map is statically small
// (at most 49 pixels, with C * M >= 2^17) runs direct and never builds Winograd weights, so W is
// handed back once packed; with a symbolic map it may take either engine per Run and keeps W.
// Outputs are checked against a double-precision convolution either way.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"  // ModelBuilder::Type with symbolic dims (GCC 12)
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model_builder.h"
#include "onnx/model_loader.h"
#include "onyx/session.h"
#include "optimizer/pass_manager.h"
#include "providers/provider.h"
#include "runtime/graph_plan.h"

namespace onyx {
namespace {

constexpr int64_t kIn = 256, kOut = 512;  // C * M = 2^17: the small-plane rule's least

// x [1, 256, h, w] -> Conv 1x1 (Wa, 256) -> Conv 3x3 pad 1 (W, 512) -> Conv 1x1 (Wb, 16) -> y;
// h, w < 0 are symbolic. Three convs: the layout pass's least region.
constexpr int64_t kLast = 16;

std::string Model(int64_t h, int64_t w) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, kIn, h, w});
  b.Initializer("Wa", test::PatternTensor({kIn, kIn, 1, 1}, 5));
  b.Initializer("W", test::PatternTensor({kOut, kIn, 3, 3}, 7));
  b.Initializer("Wb", test::PatternTensor({kLast, kOut, 1, 1}, 9));
  b.Node("Conv", {"x", "Wa"}, {"a"});
  b.Node("Conv", {"a", "W"}, {"c"}).attributes = {test::IntsAttr("pads", {1, 1, 1, 1})};
  b.Node("Conv", {"c", "Wb"}, {"y"});
  b.Output("y", DataType::kFloat, {1, kLast, h, w});
  return b.Bytes();
}

// A stride-1 convolution in double, with the kernel's size k and pad (k - 1) / 2.
std::vector<double> ReferenceConv(const std::vector<double>& x, int64_t c, int64_t h, int64_t w, const Tensor& wt) {
  const int64_t m = wt.dim(0), k = wt.dim(2), pad = (k - 1) / 2;
  const float* wp = wt.data<float>();
  std::vector<double> y(m * h * w, 0.0);
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t ky = 0; ky < k; ++ky)
        for (int64_t kx = 0; kx < k; ++kx) {
          const double wv = wp[((o * c + i) * k + ky) * k + kx];
          for (int64_t oy = 0; oy < h; ++oy) {
            const int64_t iy = oy + ky - pad;
            if (iy < 0 || iy >= h) continue;
            for (int64_t ox = 0; ox < w; ++ox) {
              const int64_t ix = ox + kx - pad;
              if (ix >= 0 && ix < w) y[(o * h + oy) * w + ox] += wv * x[(i * h + iy) * w + ix];
            }
          }
        }
  return y;
}

std::vector<std::string> ReleasedAfterOptimizing(const std::string& bytes) {
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  OptimizerOptions options;
  options.level = OptLevel::kAll;
  options.providers = {"CPU"};
  options.require_kernels = true;  // as a session optimizes: the layout pass runs only then
  OptimizeModel(*model, options);
  bool nchwc = false;
  for (const auto& node : model->graph->nodes) nchwc = nchwc || node->op_type == "NchwcConv";
  EXPECT_TRUE(nchwc) << "the layout pass no longer makes an NchwcConv here";
  auto cpu = MakeCpuProvider();
  GraphPlan::BuildContext ctx;
  ctx.providers = {cpu.get()};
  std::vector<std::string> released;
  ctx.release_initializer = [&](const std::string& name) { released.push_back(name); };
  auto plan = GraphPlan::Build(*model->graph, ctx);
  return released;
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void ExpectConvOutput(Session& session, int64_t h, int64_t w) {
  const Tensor x = test::PatternTensor({1, kIn, h, w}, 11);
  const auto out = session.Run({{"x", x}});
  const Tensor& y = out[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{1, kLast, h, w}));
  std::vector<double> v(x.data<float>(), x.data<float>() + x.size());
  v = ReferenceConv(v, kIn, h, w, test::PatternTensor({kIn, kIn, 1, 1}, 5));
  v = ReferenceConv(v, kIn, h, w, test::PatternTensor({kOut, kIn, 3, 3}, 7));
  v = ReferenceConv(v, kOut, h, w, test::PatternTensor({kLast, kOut, 1, 1}, 9));
  for (int64_t i = 0; i < y.size(); ++i)
    EXPECT_NEAR(y.data<float>()[i], v[i], 1e-3 * (1.0 + std::abs(v[i]))) << "at " << i;
}

TEST(NchwcConvWeights, StaticSmallMapRunsDirectAndReleasesW) {
  EXPECT_TRUE(Has(ReleasedAfterOptimizing(Model(7, 7)), "W"));
  const std::string bytes = Model(7, 7);
  Session session(bytes.data(), bytes.size(), SessionOptions{});
  ExpectConvOutput(session, 7, 7);
}

TEST(NchwcConvWeights, StaticLargeMapTakesWinogradAndReleasesW) {
  EXPECT_TRUE(Has(ReleasedAfterOptimizing(Model(8, 8)), "W"));
  const std::string bytes = Model(8, 8);
  Session session(bytes.data(), bytes.size(), SessionOptions{});
  ExpectConvOutput(session, 8, 8);
}

TEST(NchwcConvWeights, SymbolicMapKeepsWForEitherEngine) {
  EXPECT_FALSE(Has(ReleasedAfterOptimizing(Model(-1, -1)), "W"));
  const std::string bytes = Model(-1, -1);
  Session session(bytes.data(), bytes.size(), SessionOptions{});
  ExpectConvOutput(session, 7, 7);  // direct, built from W on this Run
  ExpectConvOutput(session, 8, 8);  // Winograd
}

}  // namespace
}  // namespace onyx
