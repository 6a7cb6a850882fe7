// ConvInputAffineFusion: Add(Mul(x, s), t) with one-element constants folded into the unpadded
// Conv that reads it. Outputs are checked against the unfused model run by Onyx.
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

struct AffineCase {
  bool scale_first = false;  // Mul(s, x) instead of Mul(x, s)
  bool shift_first = false;  // Add(t, m) instead of Add(m, t)
  std::vector<int64_t> pads = {0, 0, 0, 0};
  std::string auto_pad;      // set instead of pads when not empty
  int64_t group = 1;
  bool bias = true;
  Shape scale_shape = {};    // {} scalar, {1} or a per-channel {1, 4, 1, 1}
  bool affine_read_twice = false;
};

// x [1,4,5,7] -> Mul(s) -> Add(t) -> Conv(W [6, 4/group, kh, kw]) -> y
std::string AffineConvModel(const AffineCase& c, Shape* out_shape) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 4, 5, 7});
  Tensor s = RandomTensor(c.scale_shape, 3, 0.5f, 1.5f), t = RandomTensor({}, 4);
  b.Initializer("s", s).Initializer("t", t);
  b.Node("Mul", c.scale_first ? std::vector<std::string>{"s", "x"} : std::vector<std::string>{"x", "s"}, {"m"});
  b.Node("Add", c.shift_first ? std::vector<std::string>{"t", "m"} : std::vector<std::string>{"m", "t"}, {"a"});
  const int64_t k = c.group == 1 ? 1 : 3;
  b.Initializer("W", RandomTensor({c.group == 1 ? 6 : 4, 4 / c.group, k, k}, 1));
  std::vector<std::string> inputs = {"a", "W"};
  if (c.bias) {
    b.Initializer("B", RandomTensor({c.group == 1 ? 6 : 4}, 2));
    inputs.push_back("B");
  }
  auto& conv = b.Node("Conv", inputs, {"y"});
  if (c.auto_pad.empty())
    conv.attributes.push_back(IntsAttr("pads", c.pads));
  else
    conv.attributes.push_back(StringAttr("auto_pad", c.auto_pad));
  if (c.group != 1) conv.attributes.push_back(IntAttr("group", c.group));
  const bool padded = c.auto_pad == "SAME_UPPER" || c.pads[0] > 0;
  *out_shape = {1, c.group == 1 ? 6 : 4, padded || k == 1 ? 5 : 3, padded || k == 1 ? 7 : 5};
  b.Output("y", DataType::kFloat, *out_shape);
  if (c.affine_read_twice) b.Output("a", DataType::kFloat, {1, 4, 5, 7});
  return b.Bytes();
}

const NamedValues kFeeds = {{"x", RandomTensor({1, 4, 5, 7}, 7, -3.0f, 3.0f)}};

TEST(ConvInputAffineFusion, FoldsScalarAffineIntoUnpaddedConvs) {
  std::vector<AffineCase> cases(6);
  cases[1].scale_first = cases[1].shift_first = true;
  cases[2].bias = false;
  cases[3].auto_pad = "VALID";
  cases[4].group = 4;  // depthwise 3x3 without padding
  cases[5].scale_shape = {1};
  for (size_t i = 0; i < cases.size(); ++i) {
    Shape out;
    const std::string bytes = AffineConvModel(cases[i], &out);
    auto run = RunFusion(bytes, "ConvInputAffineFusion", OptLevel::kExtended);
    EXPECT_EQ(OpCount(run.ops_after, "Mul"), 0) << "case " << i;
    EXPECT_EQ(OpCount(run.ops_after, "Add"), 0) << "case " << i;
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1) << "case " << i;
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
  }
}

TEST(ConvInputAffineFusion, KeepsPaddedConvsPerChannelFactorsAndSharedValues) {
  std::vector<AffineCase> cases(4);
  cases[0].pads = {1, 1, 1, 1};
  cases[0].group = 4;                 // padded borders would see t instead of 0
  cases[1].auto_pad = "SAME_UPPER";
  cases[1].group = 4;
  cases[2].scale_shape = {1, 4, 1, 1};  // per input channel: not one factor per weight
  cases[3].affine_read_twice = true;   // the affine value is also a graph output
  for (size_t i = 0; i < cases.size(); ++i) {
    Shape out;
    const std::string bytes = AffineConvModel(cases[i], &out);
    auto run = RunFusion(bytes, "ConvInputAffineFusion", OptLevel::kExtended);
    EXPECT_EQ(OpCount(run.ops_after, "Mul"), 1) << "case " << i;
    EXPECT_EQ(OpCount(run.ops_after, "Add"), 1) << "case " << i;
  }
}

}  // namespace
}  // namespace onyx
