// The QDQ fusions (src/optimizer/passes/qdq_*.cc): each rule fires on a small QDQ group and the
// integer graph computes what the DQ -> float op -> Q graph computes (power-of-two scales keep
// every float step exact, so the comparison is exact), and each condition ONNX Runtime puts on a
// group, when it does not hold, leaves the graph as it is.
#include "optimizer/fusion_test_util.h"
#include "optimizer/passes/qdq_selectors.h"

namespace onyx {
namespace {

using namespace test;

const std::vector<std::string> kQdqPasses = {"QdqPropagation",      "QdqBiasQuantization", "QdqClipReluElimination",
                                             "QdqS8ToU8",           "QdqConvMatMulFusion", "QdqOpFusion",
                                             "QdqDropFusion"};

Tensor U8(const Shape& shape, uint32_t seed, int lo = 0, int hi = 255) {
  Tensor t(DataType::kUInt8, shape);
  uint32_t s = seed * 2654435761u + 7u;
  for (int64_t i = 0; i < t.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<uint8_t>()[i] = static_cast<uint8_t>(lo + static_cast<int>((s >> 8) % static_cast<uint32_t>(hi - lo + 1)));
  }
  return t;
}

Tensor I8(const Shape& shape, uint32_t seed, int lo = -8, int hi = 8) {
  Tensor t(DataType::kInt8, shape);
  uint32_t s = seed * 2654435761u + 11u;
  for (int64_t i = 0; i < t.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<int8_t>()[i] = static_cast<int8_t>(lo + static_cast<int>((s >> 8) % static_cast<uint32_t>(hi - lo + 1)));
  }
  return t;
}

Tensor ZeroPoint(DataType t, int v) {
  if (t == DataType::kInt8) return Tensor::Scalar<int8_t>(DataType::kInt8, static_cast<int8_t>(v));
  if (t == DataType::kInt16) return Tensor::Scalar<int16_t>(DataType::kInt16, static_cast<int16_t>(v));
  return Tensor::Scalar<uint8_t>(DataType::kUInt8, static_cast<uint8_t>(v));
}

// A model builder with named quantization parameters ("<p>_s", "<p>_z") and DQ / Q helpers.
struct Qdq {
  ModelBuilder b{17};
  Qdq& Params(const std::string& p, float scale, DataType type, int zp) {
    b.Initializer(p + "_s", Scalar(scale)).Initializer(p + "_z", ZeroPoint(type, zp));
    return *this;
  }
  ir::Node& DQ(const std::string& in, const std::string& p, const std::string& out) {
    return b.Node("DequantizeLinear", {in, p + "_s", p + "_z"}, {out});
  }
  ir::Node& Q(const std::string& in, const std::string& p, const std::string& out) {
    return b.Node("QuantizeLinear", {in, p + "_s", p + "_z"}, {out});
  }
};

struct ConvOptions {
  DataType x_type = DataType::kUInt8, y_type = DataType::kUInt8;
  bool bias = true;
  float bias_scale = 1.0f / 128;  // x_scale * w_scale
  bool per_channel = false;
  int64_t w_axis = 0;
  bool conv_is_output = false;    // the float Conv result is a graph output too
  bool extra_reader = false;      // the float Conv result is read by another node too
  bool x_scale_is_input = false;  // x's scale is a graph input, not a constant
  bool dq_x_is_output = false;    // the DQ of x is a graph output too (a shared DQ)
  bool float_bias = false;        // the bias is a float initializer, not a DQ
};

// x(u8) -> DQ -> Conv(DQ(w int8), DQ(b int32)) -> Q -> y
std::string QdqConv(const ConvOptions& o) {
  Qdq m;
  m.b.Input("x", o.x_type, {1, 4, 5, 5}).Output("y", o.y_type, {1, 3, 5, 5});
  m.Params("x", 1.0f / 16, o.x_type, o.x_type == DataType::kUInt8 ? 128 : 0).Params("y", 1.0f / 4, o.y_type, 3);
  if (o.x_scale_is_input) m.b.Input("xs_in", DataType::kFloat, {});
  m.b.Initializer("w", I8({3, 4, 3, 3}, 1));
  if (o.per_channel) {
    m.b.Initializer("w_s", Tensor::FromVector<float>(DataType::kFloat, {3}, {0.125f, 0.25f, 0.125f}));
    m.b.Initializer("w_z", Tensor::FromVector<int8_t>(DataType::kInt8, {3}, {0, 0, 0}));
  } else {
    m.Params("w", 1.0f / 8, DataType::kInt8, 0);
  }
  m.b.Node("DequantizeLinear", {"x", o.x_scale_is_input ? "xs_in" : "x_s", "x_z"}, {"xd"});
  m.DQ("w", "w", "wd").attributes.push_back(IntAttr("axis", o.w_axis));
  std::vector<std::string> conv_in = {"xd", "wd"};
  if (o.float_bias) {
    m.b.Initializer("bf", Tensor::FromVector<float>(DataType::kFloat, {3}, {0.3f, -0.05f, 0.0f}));
    conv_in.push_back("bf");
  } else if (o.bias) {
    m.b.Initializer("b", Tensor::FromVector<int32_t>(DataType::kInt32, {3}, {40, -7, 0}));
    std::vector<float> bs(3, o.bias_scale);
    if (o.per_channel) bs = {o.bias_scale, 2 * o.bias_scale, o.bias_scale};
    m.b.Initializer("b_s", Tensor::FromVector<float>(DataType::kFloat, {3}, bs));
    m.b.Initializer("b_z", Tensor::FromVector<int32_t>(DataType::kInt32, {3}, {0, 0, 0}));
    m.DQ("b", "b", "bd").attributes.push_back(IntAttr("axis", 0));
    conv_in.push_back("bd");
  }
  m.b.Node("Conv", conv_in, {"c"}).attributes.push_back(IntsAttr("pads", {1, 1, 1, 1}));
  m.Q("c", "y", "y");
  if (o.conv_is_output) m.b.Output("c", DataType::kFloat, {1, 3, 5, 5});
  if (o.extra_reader) {
    m.b.Node("Relu", {"c"}, {"r"});
    m.b.Output("r", DataType::kFloat, {1, 3, 5, 5});
  }
  if (o.dq_x_is_output) m.b.Output("xd", DataType::kFloat, {1, 4, 5, 5});
  return m.b.Bytes();
}

TEST(QdqFusion, ConvBecomesQLinearConvPerTensorAndPerChannel) {
  for (bool per_channel : {false, true}) {
    for (bool bias : {false, true}) {
      ConvOptions o;
      o.per_channel = per_channel;
      o.bias = bias;
      const std::string bytes = QdqConv(o);
      auto run = RunPasses(bytes, kQdqPasses);
      EXPECT_EQ(OpCount(run.ops_after, "QLinearConv"), 1) << per_channel << bias;
      EXPECT_EQ(OpCount(run.ops_after, "Conv"), 0);
      EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 0);
      EXPECT_EQ(OpCount(run.ops_after, "QuantizeLinear"), 0);
      auto conv = FindNode(run.optimized_bytes, "QLinearConv");
      ASSERT_NE(conv, nullptr);
      EXPECT_EQ(conv->inputs.size(), bias ? 9u : 8u);
      EXPECT_EQ(conv->outputs[0], "y");
      ASSERT_NE(Attr(*conv, "pads"), nullptr);
      ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"x", U8({1, 4, 5, 5}, 3)}});
    }
  }
}

TEST(QdqFusion, AFloatBiasIsQuantizedAsOnnxRuntimeDoesWhenTheResultGoesToAQ) {
  ConvOptions o;
  o.float_bias = true;
  for (bool per_channel : {false, true}) {
    o.per_channel = per_channel;
    const std::string bytes = QdqConv(o);
    auto run = RunPasses(bytes, kQdqPasses);
    auto conv = FindNode(run.optimized_bytes, "QLinearConv");
    ASSERT_NE(conv, nullptr) << per_channel;
    ASSERT_EQ(conv->inputs.size(), 9u);
    // bias / (x_scale * w_scale) = 0.3 * 128 = 38.4 -> 38, -6.4 -> -6, 0 (channel 1 at twice the scale: -3.2 -> -3)
    auto loaded = LoadModelFromBytes(run.optimized_bytes.data(), run.optimized_bytes.size());
    const Tensor& b = loaded->graph->initializers.at(conv->inputs[8]);
    ASSERT_EQ(b.dtype(), DataType::kInt32);
    EXPECT_EQ(b.data<int32_t>()[0], 38);
    EXPECT_EQ(b.data<int32_t>()[1], per_channel ? -3 : -6);
  }
  // The float result is read elsewhere too: no Q-only path, the bias stays float.
  o.per_channel = false;
  o.extra_reader = true;
  auto run = RunPasses(QdqConv(o), kQdqPasses);
  EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 2);  // x and w only
}

TEST(QdqFusion, ConvFusionIsRecordedInTheProvenance) {
  auto run = RunPasses(QdqConv({}), kQdqPasses);
  bool created = false, removed = false;
  for (const auto& [name, p] : run.report.provenance) {
    if (p.op == "QLinearConv" && p.created_by == "QdqConvMatMulFusion") created = true;
    if (p.op == "Conv" && p.removed_by == "QdqConvMatMulFusion") removed = true;
  }
  EXPECT_TRUE(created);
  EXPECT_TRUE(removed);
}

TEST(QdqFusion, ConvGroupsOutsideTheRulesStayAsTheyAre) {
  std::vector<std::pair<std::string, ConvOptions>> cases;
  ConvOptions o;
  o.bias_scale = 1.0f / 64;  // not x_scale * w_scale
  cases.push_back({"bias scale", o});
  o = {};
  o.y_type = DataType::kInt8;  // output type differs from the input's
  cases.push_back({"output type", o});
  o = {};
  o.conv_is_output = true;
  cases.push_back({"conv result is a graph output", o});
  o = {};
  o.extra_reader = true;
  cases.push_back({"conv result read elsewhere", o});
  o = {};
  o.x_scale_is_input = true;
  cases.push_back({"non-constant scale", o});
  o = {};
  o.per_channel = true;
  o.w_axis = 1;
  cases.push_back({"per-channel weights on axis 1", o});
  if (!qdq::kInt8ActivationsAllowed) {  // ORT keeps int8 activation convs float on x86-64
    o = {};
    o.x_type = o.y_type = DataType::kInt8;
    cases.push_back({"int8 activations", o});
  }
  for (const auto& [what, options] : cases) {
    auto run = RunPasses(QdqConv(options), kQdqPasses);
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1) << what;
    EXPECT_EQ(OpCount(run.ops_after, "QLinearConv"), 0) << what;
  }
}

TEST(QdqFusion, ASharedDequantizeStaysForItsOtherReaders) {
  ConvOptions o;
  o.dq_x_is_output = true;
  const std::string bytes = QdqConv(o);
  auto run = RunPasses(bytes, kQdqPasses);
  EXPECT_EQ(OpCount(run.ops_after, "QLinearConv"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 1);  // x's, for the graph output
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"x", U8({1, 4, 5, 5}, 4)}});
}

TEST(QdqFusion, Int16GroupsStayAsTheyAre) {
  Qdq m;
  m.b.Input("x", DataType::kInt16, {2, 4}).Output("y", DataType::kInt16, {2, 4});
  m.Params("x", 0.5f, DataType::kInt16, 0).Params("y", 0.5f, DataType::kInt16, 0);
  m.DQ("x", "x", "xd");
  m.b.Node("Add", {"xd", "xd"}, {"s"});
  m.Q("s", "y", "y");
  auto run = RunPasses(m.b.Bytes(), kQdqPasses);
  EXPECT_EQ(OpCount(run.ops_after, "Add"), 1);
}

TEST(QdqFusion, SubgraphsFuseTheirOwnGroupsAndKeepOuterDequantizesTheyRead) {
  // Main graph: x -> DQ -> xd -> Add(xd, xd) -> Q -> y. An If reads xd from its else branch
  // (Q(xd)); its then branch has a group of its own over outer-scope values: DQ(x) -> Mul -> Q.
  Qdq m;
  m.b.Input("x", DataType::kUInt8, {2, 3}).Input("cond", DataType::kBool, {});
  m.Params("p", 1.0f / 8, DataType::kUInt8, 100).Params("q", 1.0f / 4, DataType::kUInt8, 128);
  m.DQ("x", "p", "xd");
  m.b.Node("Add", {"xd", "xd"}, {"s"});
  m.Q("s", "q", "y");
  auto branch = [](const std::string& name, bool group) {
    auto g = std::make_shared<ir::Graph>();
    g->name = name;
    auto add = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
      auto node = std::make_unique<ir::Node>();
      node->op_type = op;
      node->name = name + "_" + op;
      node->inputs = std::move(in);
      node->outputs = {out};
      g->AddNode(std::move(node));
    };
    if (group) {
      add("DequantizeLinear", {"x", "p_s", "p_z"}, "bd");
      add("Mul", {"bd", "bd"}, "bm");
      add("QuantizeLinear", {"bm", "q_s", "q_z"}, name + "_out");
    } else {
      add("QuantizeLinear", {"xd", "q_s", "q_z"}, name + "_out");
    }
    g->outputs.push_back({name + "_out", ModelBuilder::Type(DataType::kUInt8, {2, 3}), ""});
    ir::Attribute a{group ? "then_branch" : "else_branch", ir::AttrType::kGraph};
    a.g = g;
    return a;
  };
  m.b.Node("If", {"cond"}, {"picked"}).attributes = {branch("then", true), branch("else", false)};
  m.b.Output("y", DataType::kUInt8, {2, 3}).Output("picked", DataType::kUInt8, {2, 3});
  const std::string bytes = m.b.Bytes();
  auto run = RunPasses(bytes, kQdqPasses);
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.QLinearAdd"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.QLinearMul"), 1);  // inside the then branch
  EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 1);           // xd, read by the else branch
  EXPECT_EQ(OpCount(run.ops_after, "QuantizeLinear"), 1);             // the else branch's
  for (bool cond : {true, false})
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes,
                                  {{"x", U8({2, 3}, 14)}, {"cond", Tensor::Scalar<bool>(DataType::kBool, cond)}});
}

// a(u8) -> DQ -> MatMul(DQ(w int8)) -> [Q -> y | y float]
std::string QdqMatMul(bool quantized_output, bool extra_reader = false) {
  Qdq m;
  m.b.Input("a", DataType::kUInt8, {3, 8});
  m.Params("a", 1.0f / 16, DataType::kUInt8, 100).Params("w", 1.0f / 8, DataType::kInt8, 0);
  m.Params("y", 1.0f / 2, DataType::kUInt8, 120);
  m.b.Initializer("w", I8({8, 5}, 2));
  m.DQ("a", "a", "ad");
  m.DQ("w", "w", "wd");
  m.b.Node("MatMul", {"ad", "wd"}, {quantized_output ? "mm" : "y"});
  if (quantized_output) {
    m.Q("mm", "y", "y");
    m.b.Output("y", DataType::kUInt8, {3, 5});
  } else {
    m.b.Output("y", DataType::kFloat, {3, 5});
  }
  if (extra_reader) {
    m.b.Node("Relu", {"mm"}, {"r"});
    m.b.Output("r", DataType::kFloat, {3, 5});
  }
  return m.b.Bytes();
}

TEST(QdqFusion, MatMulBecomesQLinearMatMulOrMatMulIntegerToFloat) {
  std::string bytes = QdqMatMul(true);
  auto run = RunPasses(bytes, kQdqPasses);
  EXPECT_EQ(OpCount(run.ops_after, "QLinearMatMul"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 0);
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"a", U8({3, 8}, 5)}});

  bytes = QdqMatMul(false);
  run = RunPasses(bytes, kQdqPasses);
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.MatMulIntegerToFloat"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 0);
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"a", U8({3, 8}, 6)}});

  // A Q among other readers of the product: neither form (as ORT).
  run = RunPasses(QdqMatMul(true, true), kQdqPasses);
  EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
}

// a(u8) -> DQ -> Gemm(DQ(B int8, transB), DQ(C int32)) [-> Q]
std::string QdqGemm(bool quantized_output, float beta) {
  Qdq m;
  m.b.Input("a", DataType::kUInt8, {2, 6});
  m.Params("a", 1.0f / 16, DataType::kUInt8, 128).Params("w", 1.0f / 8, DataType::kInt8, 0);
  m.Params("y", 1.0f / 4, DataType::kUInt8, 128);
  m.b.Initializer("w", I8({4, 6}, 3));
  m.b.Initializer("c", Tensor::FromVector<int32_t>(DataType::kInt32, {4}, {100, -50, 3, 0}));
  m.b.Initializer("c_s", Scalar(1.0f / 128)).Initializer("c_z", Tensor::Scalar<int32_t>(DataType::kInt32, 0));
  m.DQ("a", "a", "ad");
  m.DQ("w", "w", "wd");
  m.DQ("c", "c", "cd");
  auto& gemm = m.b.Node("Gemm", {"ad", "wd", "cd"}, {quantized_output ? "g" : "y"});
  gemm.attributes.push_back(IntAttr("transB", 1));
  gemm.attributes.push_back(FloatAttr("beta", beta));
  if (quantized_output) {
    m.Q("g", "y", "y");
    m.b.Output("y", DataType::kUInt8, {2, 4});
  } else {
    m.b.Output("y", DataType::kFloat, {2, 4});
  }
  return m.b.Bytes();
}

TEST(QdqFusion, GemmBecomesQGemmWithOrWithoutOutputQuantization) {
  for (bool quantized : {true, false}) {
    const std::string bytes = QdqGemm(quantized, 1.0f);
    auto run = RunPasses(bytes, kQdqPasses);
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.QGemm"), 1) << quantized;
    EXPECT_EQ(OpCount(run.ops_after, "Gemm"), 0);
    auto qgemm = FindNode(run.optimized_bytes, "QGemm", "com.microsoft");
    ASSERT_NE(qgemm, nullptr);
    EXPECT_EQ(qgemm->inputs.size(), quantized ? 9u : 7u);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"a", U8({2, 6}, 7)}});
  }
  // beta != 1 with a bias: left float (ORT's condition).
  auto run = RunPasses(QdqGemm(true, 0.5f), kQdqPasses);
  EXPECT_EQ(OpCount(run.ops_after, "Gemm"), 1);
}

// a, b (u8) -> DQ, DQ -> op -> Q -> y, with b's type `b_type`.
std::string QdqBinary(const std::string& op, DataType b_type) {
  Qdq m;
  m.b.Input("a", DataType::kUInt8, {2, 3, 4}).Input("b", b_type, {3, 4});
  m.b.Output("y", DataType::kUInt8, {2, 3, 4});
  m.Params("a", 1.0f / 16, DataType::kUInt8, 128).Params("b", 1.0f / 8, b_type, b_type == DataType::kUInt8 ? 100 : 0);
  m.Params("y", op == "Mul" ? 1.0f : 1.0f / 4, DataType::kUInt8, 128);
  m.DQ("a", "a", "ad");
  m.DQ("b", "b", "bd");
  m.b.Node(op, {"ad", "bd"}, {"s"});
  m.Q("s", "y", "y");
  return m.b.Bytes();
}

TEST(QdqFusion, AddAndMulBecomeQLinearOpsWhenAllTypesMatch) {
  for (const std::string op : {"Add", "Mul"}) {
    const std::string bytes = QdqBinary(op, DataType::kUInt8);
    auto run = RunPasses(bytes, kQdqPasses);
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.QLinear" + op), 1);
    EXPECT_EQ(OpCount(run.ops_after, op), 0);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"a", U8({2, 3, 4}, 8)}, {"b", U8({3, 4}, 9)}});
    run = RunPasses(QdqBinary(op, DataType::kInt8), kQdqPasses);  // mixed types: left alone
    EXPECT_EQ(OpCount(run.ops_after, op), 1) << op;
  }
}

TEST(QdqFusion, ConcatPoolsAndActivationsBecomeQLinearOps) {
  Qdq m;
  m.b.Input("a", DataType::kUInt8, {1, 2, 4, 4}).Input("b", DataType::kUInt8, {1, 3, 4, 4});
  m.Params("a", 1.0f / 16, DataType::kUInt8, 128).Params("b", 1.0f / 8, DataType::kUInt8, 120);
  m.Params("c", 1.0f / 8, DataType::kUInt8, 128).Params("p", 1.0f / 8, DataType::kUInt8, 128);
  m.Params("s", 1.0f / 256, DataType::kUInt8, 0).Params("g", 1.0f / 16, DataType::kUInt8, 128);
  m.b.Output("sm", DataType::kUInt8, {1, 5, 2, 2}).Output("gp", DataType::kUInt8, {1, 5, 1, 1});
  m.DQ("a", "a", "ad");
  m.DQ("b", "b", "bd");
  m.b.Node("Concat", {"ad", "bd"}, {"cat"}).attributes.push_back(IntAttr("axis", 1));
  m.Q("cat", "c", "cq");
  m.DQ("cq", "c", "cd");
  auto& pool = m.b.Node("AveragePool", {"cd"}, {"pool"});
  pool.attributes.push_back(IntsAttr("kernel_shape", {2, 2}));
  pool.attributes.push_back(IntsAttr("strides", {2, 2}));
  m.Q("pool", "p", "pq");
  m.DQ("pq", "p", "pd");
  m.b.Node("Softmax", {"pd"}, {"soft"}).attributes.push_back(IntAttr("axis", 1));
  m.Q("soft", "s", "sm");
  m.DQ("pq", "p", "pd2");
  m.b.Node("GlobalAveragePool", {"pd2"}, {"gap"});
  m.Q("gap", "g", "gp");
  const std::string bytes = m.b.Bytes();
  auto run = RunPasses(bytes, kQdqPasses);
  for (const char* op : {"QLinearConcat", "QLinearAveragePool", "QLinearSoftmax", "QLinearGlobalAveragePool"})
    EXPECT_EQ(OpCount(run.ops_after, std::string("com.microsoft.") + op), 1) << op;
  EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "QuantizeLinear"), 0);
  auto softmax = FindNode(run.optimized_bytes, "QLinearSoftmax", "com.microsoft");
  ASSERT_NE(softmax, nullptr);
  ASSERT_NE(Attr(*softmax, "opset"), nullptr);
  EXPECT_EQ(Attr(*softmax, "opset")->i, 17);
  EXPECT_EQ(Attr(*softmax, "axis")->i, 1);
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes,
                                {{"a", U8({1, 2, 4, 4}, 10)}, {"b", U8({1, 3, 4, 4}, 11)}});
}

// Where(c, DQ(a), DQ(b)) -> Q -> y, b of type b_type.
std::string QdqWhere(DataType b_type) {
  Qdq m;
  m.b.Input("c", DataType::kBool, {2, 1, 4}).Input("a", DataType::kUInt8, {2, 3, 4}).Input("b", b_type, {3, 4});
  m.Params("a", 1.0f / 16, DataType::kUInt8, 128).Params("b", 1.0f / 8, b_type, 3);
  m.Params("y", 1.0f / 8, DataType::kUInt8, 120);
  m.b.Output("y", DataType::kUInt8, {2, 3, 4});
  m.DQ("a", "a", "ad");
  m.DQ("b", "b", "bd");
  m.b.Node("Where", {"c", "ad", "bd"}, {"w"});
  m.Q("w", "y", "y");
  return m.b.Bytes();
}

TEST(QdqFusion, WhereBecomesQLinearWhereWhenAllTypesMatch) {
  const std::string bytes = QdqWhere(DataType::kUInt8);
  auto run = RunPasses(bytes, kQdqPasses);
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.QLinearWhere"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "Where"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 0);
  Tensor c(DataType::kBool, {2, 1, 4});
  for (int64_t i = 0; i < c.size(); ++i) c.data<bool>()[i] = (i * 5) % 3 == 0;
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes,
                                {{"c", c}, {"a", U8({2, 3, 4}, 12)}, {"b", U8({3, 4}, 13)}});
  run = RunPasses(QdqWhere(DataType::kInt8), kQdqPasses);  // mixed types: left alone
  EXPECT_EQ(OpCount(run.ops_after, "Where"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.QLinearWhere"), 0);
}

// x(u8) -> DQ(p) -> op -> Q(q) -> y
std::string QdqDataMovement(const std::string& op, float q_scale, int q_zp, const std::string& mode = "nearest") {
  Qdq m;
  m.b.Input("x", DataType::kUInt8, {1, 2, 4, 4});
  m.Params("p", 0.5f, DataType::kUInt8, 7).Params("q", q_scale, DataType::kUInt8, q_zp);
  m.DQ("x", "p", "xd");
  std::vector<int64_t> out_dims = {1, 2, 4, 4};
  if (op == "Reshape") {
    m.b.Initializer("shape", Int64s({1, 32}));
    m.b.Node("Reshape", {"xd", "shape"}, {"t"});
    out_dims = {1, 32};
  } else if (op == "MaxPool") {
    auto& pool = m.b.Node("MaxPool", {"xd"}, {"t"});
    pool.attributes.push_back(IntsAttr("kernel_shape", {2, 2}));
    pool.attributes.push_back(IntsAttr("strides", {2, 2}));
    out_dims = {1, 2, 2, 2};
  } else if (op == "Resize") {
    m.b.Initializer("scales", Tensor::FromVector<float>(DataType::kFloat, {4}, {1, 1, 2, 2}));
    m.b.Node("Resize", {"xd", "", "scales"}, {"t"}).attributes.push_back(StringAttr("mode", mode));
    out_dims = {1, 2, 8, 8};
  } else {
    m.b.Node(op, {"xd"}, {"t"}).attributes.push_back(IntsAttr("perm", {0, 1, 3, 2}));
  }
  m.Q("t", "q", "y");
  m.b.Output("y", DataType::kUInt8, out_dims);
  return m.b.Bytes();
}

TEST(QdqFusion, DataMovementRunsOnTheIntegersWhenDqAndQAgree) {
  for (const std::string op : {"Reshape", "Transpose", "MaxPool", "Resize"}) {
    const std::string bytes = QdqDataMovement(op, 0.5f, 7);
    auto run = RunPasses(bytes, kQdqPasses);
    EXPECT_EQ(OpCount(run.ops_after, op), 1) << op;
    EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 0) << op;
    EXPECT_EQ(OpCount(run.ops_after, "QuantizeLinear"), 0) << op;
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"x", U8({1, 2, 4, 4}, 12)}});
  }
  // Different parameters, a negative scale for MaxPool, a linear Resize: left as they are.
  for (const auto& bytes : {QdqDataMovement("Reshape", 0.25f, 7), QdqDataMovement("Reshape", 0.5f, 8),
                            QdqDataMovement("MaxPool", -0.5f, 7), QdqDataMovement("Resize", 0.5f, 7, "linear")}) {
    auto run = RunPasses(bytes, kQdqPasses);
    EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 1);
    EXPECT_EQ(OpCount(run.ops_after, "QuantizeLinear"), 1);
  }
}

// x(u8) -> DQ -> MatMul(DQ(w)) -> Relu or Clip(lo, hi) -> Q(zero point zp) -> y
std::string QdqMatMulActivation(const std::string& act, int zp, float lo = 0, float hi = 0) {
  Qdq m;
  m.b.Input("a", DataType::kUInt8, {3, 8}).Output("y", DataType::kUInt8, {3, 5});
  m.Params("a", 1.0f / 16, DataType::kUInt8, 100).Params("w", 1.0f / 8, DataType::kInt8, 0);
  m.Params("y", 1.0f / 2, DataType::kUInt8, zp);
  m.b.Initializer("w", I8({8, 5}, 2)).Initializer("lo", Scalar(lo)).Initializer("hi", Scalar(hi));
  m.DQ("a", "a", "ad");
  m.DQ("w", "w", "wd");
  m.b.Node("MatMul", {"ad", "wd"}, {"mm"});
  if (act == "Relu") m.b.Node("Relu", {"mm"}, {"r"});
  else m.b.Node("Clip", {"mm", "lo", "hi"}, {"r"});
  m.Q("r", "y", "y");
  return m.b.Bytes();
}

TEST(QdqFusion, ReluAndClipTheQuantizeMakesRedundantGoAndTheGroupFuses) {
  // Relu before a Q whose zero point is the lowest code; Clip wider than the Q's range
  // [0.5 (0 - 10), 0.5 (255 - 10)] = [-5, 122.5].
  for (const auto& bytes : {QdqMatMulActivation("Relu", 0), QdqMatMulActivation("Clip", 10, -6.0f, 200.0f)}) {
    auto run = RunPasses(bytes, kQdqPasses);
    EXPECT_EQ(OpCount(run.ops_after, "Relu") + OpCount(run.ops_after, "Clip"), 0);
    EXPECT_EQ(OpCount(run.ops_after, "QLinearMatMul"), 1);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"a", U8({3, 8}, 15)}});
  }
  // A Relu before a zero point of 10 and a Clip narrower than the range change values: kept
  // (the MatMul, read by no Q then, becomes MatMulIntegerToFloat, as in ORT).
  for (const auto& bytes : {QdqMatMulActivation("Relu", 10), QdqMatMulActivation("Clip", 10, -4.0f, 200.0f),
                            QdqMatMulActivation("Clip", 10, -6.0f, 100.0f)}) {
    auto run = RunPasses(bytes, kQdqPasses);
    EXPECT_EQ(OpCount(run.ops_after, "Relu") + OpCount(run.ops_after, "Clip"), 1);
    EXPECT_EQ(OpCount(run.ops_after, "QLinearMatMul"), 0);
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.MatMulIntegerToFloat"), 1);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"a", U8({3, 8}, 18)}});
  }
}

TEST(QdqFusion, SplitRunsOnTheIntegersWhenEveryOutputIsRequantizedAlike) {
  auto model = [](float second_scale) {
    Qdq m;
    m.b.Input("x", DataType::kUInt8, {2, 6}).Output("y0", DataType::kUInt8, {2, 3}).Output("y1", DataType::kUInt8, {2, 3});
    m.Params("p", 0.5f, DataType::kUInt8, 7).Params("q", second_scale, DataType::kUInt8, 7);
    m.DQ("x", "p", "xd");
    m.b.Node("Split", {"xd"}, {"s0", "s1"}).attributes.push_back(IntAttr("axis", 1));
    m.Q("s0", "p", "y0");
    m.Q("s1", "q", "y1");
    return m.b.Bytes();
  };
  const std::string bytes = model(0.5f);
  auto run = RunPasses(bytes, kQdqPasses);
  EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"Split", 1}}));
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"x", U8({2, 6}, 16)}});
  run = RunPasses(model(0.25f), kQdqPasses);  // one output requantized differently
  EXPECT_EQ(OpCount(run.ops_after, "QuantizeLinear"), 2);
}

TEST(QdqFusion, ArgMaxReadsTheIntegersUnderAPositiveScale) {
  auto model = [](float scale) {
    Qdq m;
    m.b.Input("x", DataType::kUInt8, {2, 6}).Output("y", DataType::kInt64, {2, 1});
    m.Params("p", scale, DataType::kUInt8, 7);
    m.DQ("x", "p", "xd");
    m.b.Node("ArgMax", {"xd"}, {"y"}).attributes.push_back(IntAttr("axis", 1));
    return m.b.Bytes();
  };
  const std::string bytes = model(0.5f);
  auto run = RunPasses(bytes, kQdqPasses);
  EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"ArgMax", 1}}));
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"x", U8({2, 6}, 17)}});
  run = RunPasses(model(-0.5f), kQdqPasses);  // a negative scale reverses the order: kept
  EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 1);
}

TEST(QdqFusion, QdqPairsAreCarriedForwardOnlyAlongSingleReaderEdges) {
  // x -> DQ -> Transpose -> Relu -> y, with the DQ also read by a Neg (`shared`) or the Transpose
  // result a graph output too (`transposed_is_output`).
  auto model = [](bool shared, bool transposed_is_output) {
    Qdq m;
    m.b.Input("x", DataType::kUInt8, {2, 3}).Output("y", DataType::kFloat, {3, 2});
    m.Params("p", 0.5f, DataType::kUInt8, 7);
    m.DQ("x", "p", "xd");
    m.b.Node("Transpose", {"xd"}, {"t"}).attributes.push_back(IntsAttr("perm", {1, 0}));
    m.b.Node("Relu", {"t"}, {"y"});
    if (shared) {
      m.b.Node("Neg", {"xd"}, {"n"});
      m.b.Output("n", DataType::kFloat, {2, 3});
    }
    if (transposed_is_output) m.b.Output("t", DataType::kFloat, {3, 2});
    return m.b.Bytes();
  };
  const std::string bytes = model(false, false);
  auto run = RunPasses(bytes, kQdqPasses);
  // Transpose then runs on the integers; the pair's DQ feeds the Relu.
  EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "QuantizeLinear"), 0);
  auto dq = FindNode(run.optimized_bytes, "DequantizeLinear");
  ASSERT_NE(dq, nullptr);
  EXPECT_NE(dq->inputs[0], "x");  // it reads the integer Transpose's result
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"x", U8({2, 3}, 19)}});
  for (const auto& [shared, out] : std::vector<std::pair<bool, bool>>{{true, false}, {false, true}}) {
    run = RunPasses(model(shared, out), {"QdqPropagation"});
    EXPECT_EQ(OpCount(run.ops_after, "QuantizeLinear"), 0) << shared << out;
  }
}

// x(u8) -> DQ(p) -> Q(q) -> y [and the Q's output read by a Relu-free DQ too]
TEST(QdqFusion, DequantizeQuantizeRoundTripsGoOnlyWhenTheyChangeNothing) {
  auto model = [](float q_scale, bool q_output_also_read) {
    Qdq m;
    m.b.Input("x", DataType::kUInt8, {6}).Output("y", DataType::kUInt8, {6});
    m.Params("p", 0.5f, DataType::kUInt8, 7).Params("q", q_scale, DataType::kUInt8, 7);
    m.DQ("x", "p", "xd");
    m.Q("xd", "q", "y");
    if (q_output_also_read) {
      m.DQ("y", "q", "yd");
      m.b.Output("yd", DataType::kFloat, {6});
    }
    return m.b.Bytes();
  };
  auto run = RunPasses(model(0.5f, false), {"QdqDropFusion"});
  EXPECT_EQ(OpCount(run.ops_after, "DequantizeLinear") + OpCount(run.ops_after, "QuantizeLinear"), 0);
  ExpectSameOutputsWhenRunnable(model(0.5f, false), run.optimized_bytes, {{"x", U8({6}, 13)}});
  run = RunPasses(model(0.25f, false), {"QdqDropFusion"});
  EXPECT_EQ(OpCount(run.ops_after, "QuantizeLinear"), 1);
  // The Q's output is a graph output that nodes read too: kept (as ORT).
  run = RunPasses(model(0.5f, true), {"QdqDropFusion"});
  EXPECT_EQ(OpCount(run.ops_after, "QuantizeLinear"), 1);
}

TEST(QdqFusion, Int8ActivationPairsTakeOnnxRuntimesUint8Detour) {
  if (qdq::kInt8ActivationsAllowed) GTEST_SKIP() << "int8 activations fuse directly on this CPU (as ORT on ARM)";
  // x(f32) -> Q(int8) -> DQ -> Relu -> y, and the same with the DQ read twice.
  auto model = [](bool shared) {
    Qdq m;
    m.b.Input("x", DataType::kFloat, {6}).Output("y", DataType::kFloat, {6});
    m.Params("p", 0.5f, DataType::kInt8, -3);
    m.Q("x", "p", "xq");
    m.DQ("xq", "p", "xd");
    m.b.Node("Relu", {"xd"}, {"y"});
    if (shared) {
      m.b.Node("Neg", {"xd"}, {"n"});
      m.b.Output("n", DataType::kFloat, {6});
    }
    return m.b.Bytes();
  };
  const std::string bytes = model(false);
  auto run = RunPasses(bytes, {"QdqS8ToU8"});
  auto q = FindNode(run.optimized_bytes, "QuantizeLinear");
  ASSERT_NE(q, nullptr);
  auto loaded = LoadModelFromBytes(run.optimized_bytes.data(), run.optimized_bytes.size());
  ASSERT_TRUE(loaded->graph->initializers.count(q->inputs[2]));
  const Tensor& zp = loaded->graph->initializers.at(q->inputs[2]);
  ASSERT_EQ(zp.dtype(), DataType::kUInt8);
  EXPECT_EQ(zp.data<uint8_t>()[0], 125);
  Tensor x(DataType::kFloat, {6});
  for (int i = 0; i < 6; ++i) x.data<float>()[i] = -70.0f + 25.3f * static_cast<float>(i);
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"x", x}});
  run = RunPasses(model(true), {"QdqS8ToU8"});
  EXPECT_EQ(run.report.passes.empty() ? 0 : run.report.passes[0].rewrites, 0);
}

// x(f32) -> DynamicQuantizeLinear -> MatMulInteger(w int8) -> Cast -> Mul(x_scale * w_scale) [+ bias]
std::string DynamicMatMul(bool bias, bool scale_read_elsewhere, bool acc_is_output = false) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat, {3, 8}).Output("y", DataType::kFloat, {3, 5});
  b.Initializer("w", I8({8, 5}, 4)).Initializer("w_s", Scalar(0.05f));
  b.Initializer("w_z", Tensor::Scalar<int8_t>(DataType::kInt8, 0)).Initializer("bias", RandomTensor({5}, 5));
  b.Node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
  b.Node("Mul", {"xs", "w_s"}, {"scale"});
  b.Node("MatMulInteger", {"xq", "w", "xz", "w_z"}, {"acc"});
  b.Node("Cast", {"acc"}, {"accf"}).attributes.push_back(IntAttr("to", 1));
  b.Node("Mul", {"accf", "scale"}, {bias ? "mm" : "y"});
  if (bias) b.Node("Add", {"mm", "bias"}, {"y"});
  if (scale_read_elsewhere) b.Output("xs", DataType::kFloat, {});
  if (acc_is_output) b.Output("acc", DataType::kInt32, {3, 5});
  return b.Bytes();
}

TEST(QdqFusion, DynamicQuantizedMatMulBecomesOneOp) {
  for (bool bias : {false, true}) {
    const std::string bytes = DynamicMatMul(bias, false);
    auto run = RunPasses(bytes, {"QdqDynamicMatMulFusion"});
    EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"com.microsoft.DynamicQuantizeMatMul", 1}})) << bias;
    auto fused = FindNode(run.optimized_bytes, "DynamicQuantizeMatMul", "com.microsoft");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->inputs.size(), bias ? 5u : 4u);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"x", RandomTensor({3, 8}, 6)}});
  }
  // The DynamicQuantizeLinear's scale is read elsewhere: MatMulIntegerToFloat, the DQL stays.
  const std::string bytes = DynamicMatMul(true, true);
  auto run = RunPasses(bytes, {"QdqDynamicMatMulFusion"});
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.MatMulIntegerToFloat"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "DynamicQuantizeLinear"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "MatMulInteger"), 0);
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"x", RandomTensor({3, 8}, 7)}});
  // The integer product is a graph output too: left as it is.
  run = RunPasses(DynamicMatMul(false, false, true), {"QdqDynamicMatMulFusion"});
  EXPECT_EQ(OpCount(run.ops_after, "MatMulInteger"), 1);
}

}  // namespace
}  // namespace onyx
