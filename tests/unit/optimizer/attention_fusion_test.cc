// AttentionFusion and GptAttentionFusion on small blocks built the way torch.onnx exports
// Hugging Face BERT / ViT / GPT-2 eager attention: node counts, the fused node's attributes and
// packed weights (against the blocks' own Q/K/V matrices), patterns left alone, and the
// outputs of the fused model against the original once Onyx has a com.microsoft.Attention
// kernel (skipped before).

// GCC 12 reports a -Wrestrict false positive in std::string concatenation inlined from
// ModelBuilder::Type when inputs have symbolic dims.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "base/float_types.h"
#include "optimizer/pass_test_util.h"
#include "providers/cpu/kernels/linalg/deferred_half_widening.h"
#include "providers/kernel.h"
#include "runtime/page_flags.h"

namespace onyx {
namespace {

using test::IntsAttr;
using test::IntAttr;

using test::ModelBuilder;
using test::OpCount;

constexpr int64_t kHidden = 8;
constexpr int64_t kHeads = 2;
constexpr int64_t kHeadSize = 4;
constexpr float kFloatMin = -3.4028234663852886e38f;

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
}
Tensor IntScalar(int64_t v) { return Tensor::Scalar<int64_t>(DataType::kInt64, v); }
Tensor FloatScalar(float v) { return Tensor::Scalar<float>(DataType::kFloat, v); }

// Deterministic weights in [-0.5, 0.5).
Tensor Random(const Shape& shape, uint32_t seed) {
  Tensor t(DataType::kFloat, shape);
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < t.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return t;
}

// A scalar as torch.onnx writes it: a Constant node.
std::string Const(ModelBuilder& b, const std::string& name, Tensor value) {
  ir::Attribute a{"value", ir::AttrType::kTensor};
  a.t = std::move(value);
  b.Node("Constant", {}, {name}).attributes.push_back(a);
  return name;
}

// x.size(i) as a 1-element tensor: Shape -> Gather -> Unsqueeze.
std::string DynDim(ModelBuilder& b, const std::string& x, int64_t i, const std::string& p) {
  const std::string tag = p + "_" + x + "_" + std::to_string(i);
  b.Node("Shape", {x}, {tag + "_shape"});
  b.Node("Gather", {tag + "_shape", Const(b, tag + "_idx", IntScalar(i))}, {tag + "_dim"})
      .attributes.push_back(IntAttr("axis", 0));
  b.Node("Unsqueeze", {tag + "_dim", Const(b, tag + "_axes", Ints({0}))}, {tag + "_u"});
  return tag + "_u";
}

std::string SplitHeads(ModelBuilder& b, const std::string& x, const std::vector<int64_t>& perm, const std::string& p,
                       int64_t head_size = kHeadSize) {
  b.Node("Concat",
         {DynDim(b, x, 0, p), DynDim(b, x, 1, p), Const(b, p + "_" + x + "_n", Ints({kHeads})),
          Const(b, p + "_" + x + "_d", Ints({head_size}))},
         {p + "_" + x + "_split_shape"})
      .attributes.push_back(IntAttr("axis", 0));
  b.Node("Reshape", {x, p + "_" + x + "_split_shape"}, {p + "_" + x + "_heads"});
  b.Node("Transpose", {p + "_" + x + "_heads"}, {p + "_" + x + "_t"}).attributes.push_back(IntsAttr("perm", perm));
  return p + "_" + x + "_t";
}

std::string MergeHeads(ModelBuilder& b, const std::string& ctx, const std::string& p, const std::string& out,
                       int64_t hidden = kHidden) {
  b.Node("Transpose", {ctx}, {p + "_ctx_t"}).attributes.push_back(IntsAttr("perm", {0, 2, 1, 3}));
  b.Node("Concat",
         {DynDim(b, p + "_ctx_t", 0, p), DynDim(b, p + "_ctx_t", 1, p), Const(b, p + "_hidden", Ints({hidden}))},
         {p + "_merge_shape"})
      .attributes.push_back(IntAttr("axis", 0));
  b.Node("Reshape", {p + "_ctx_t", p + "_merge_shape"}, {out});
  return out;
}

// nn.Linear: MatMul(x, W^T) + Add(bias, mm).
std::string Linear(ModelBuilder& b, const std::string& x, const std::string& p, uint32_t seed, int64_t hidden = kHidden) {
  b.Initializer(p + "_w", Random({hidden, hidden}, seed)).Initializer(p + "_b", Random({hidden}, seed + 1));
  b.Node("MatMul", {x, p + "_w"}, {p + "_mm"});
  b.Node("Add", {p + "_b", p + "_mm"}, {p + "_proj"});
  return p + "_proj";
}

// The extended mask (1 - mask[:, None, None, :].float()) * fill.
std::string ExtendedMask(ModelBuilder& b, const std::string& mask, float fill) {
  b.Node("Unsqueeze", {mask, Const(b, "ext_axes1", Ints({1}))}, {"ext_u1"});
  b.Node("Unsqueeze", {"ext_u1", Const(b, "ext_axes2", Ints({2}))}, {"ext_u2"});
  b.Node("Cast", {"ext_u2"}, {"ext_f"}).attributes.push_back(IntAttr("to", 1));
  b.Node("Sub", {Const(b, "ext_one", FloatScalar(1.0f)), "ext_f"}, {"ext_inv"});
  b.Node("Mul", {"ext_inv", Const(b, "ext_fill", FloatScalar(fill))}, {"ext_mask"});
  return "ext_mask";
}

struct BertOptions {
  std::string mask;      // extended mask value, empty for none (ViT)
  float divisor = 2.0f;  // sqrt(head_size)
  std::vector<int64_t> k_perm = {0, 2, 3, 1};
  bool probs_as_output = false;
  int64_t head_size = kHeadSize;  // hidden = kHeads * head_size
};

// One BERT/ViT self-attention block reading `x`; returns the merged context.
std::string BertAttention(ModelBuilder& b, const std::string& x, const std::string& p, const std::string& out,
                          const BertOptions& o = {}) {
  const int64_t hidden = kHeads * o.head_size;
  const std::string q = SplitHeads(b, Linear(b, x, p + "_q", 10, hidden), {0, 2, 1, 3}, p, o.head_size);
  const std::string k = SplitHeads(b, Linear(b, x, p + "_k", 20, hidden), o.k_perm, p, o.head_size);
  const std::string v = SplitHeads(b, Linear(b, x, p + "_v", 30, hidden), {0, 2, 1, 3}, p, o.head_size);
  b.Node("MatMul", {q, k}, {p + "_scores"});
  b.Node("Div", {p + "_scores", Const(b, p + "_sqrt_d", FloatScalar(o.divisor))}, {p + "_scaled"});
  std::string scores = p + "_scaled";
  if (!o.mask.empty()) {
    b.Node("Add", {scores, o.mask}, {p + "_masked"});
    scores = p + "_masked";
  }
  b.Node("Softmax", {scores}, {p + "_probs"}).attributes.push_back(IntAttr("axis", -1));
  b.Node("MatMul", {p + "_probs", v}, {p + "_ctx"});
  return MergeHeads(b, p + "_ctx", p, out, hidden);
}

ModelBuilder BertModel(const BertOptions& o = {}, int layers = 1, bool with_mask = true) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, -1, kHeads * o.head_size});
  if (with_mask) b.Input("mask", DataType::kInt64, {-1, -1});
  BertOptions opts = o;
  if (with_mask) opts.mask = ExtendedMask(b, "mask", kFloatMin);
  std::string h = "x";
  for (int i = 0; i < layers; ++i) {
    const std::string p = "l" + std::to_string(i);
    const bool last = i == layers - 1;
    BertAttention(b, h, p, last ? "y" : p + "_out", opts);
    h = p + "_out";
  }
  b.Output("y", DataType::kFloat, {-1, -1, kHeads * o.head_size});
  if (o.probs_as_output) b.Output("l0_probs", DataType::kFloat, {-1, kHeads, -1, -1});
  return b;
}

NamedValues BertFeeds(bool with_mask = true) {
  NamedValues feeds = {{"x", Random({2, 5, kHidden}, 7)}};
  if (with_mask)
    feeds.emplace_back("mask", Tensor::FromVector<int64_t>(DataType::kInt64, {2, 5}, {1, 1, 1, 1, 1, 1, 1, 1, 0, 0}));
  return feeds;
}

test::PassRun RunFusion(const std::string& bytes, const std::string& pass, bool require_kernels = false) {
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  OptimizerOptions options;
  options.only_passes = {pass};
  options.require_kernels = require_kernels;
  test::PassRun run;
  run.report = OptimizeModel(*model, options);
  run.ops_after = CountOps(*model->graph);
  run.optimized_bytes = SerializeModel(*model);
  return run;
}

bool HaveAttentionKernel() { return KernelRegistry::Global().Find("CPU", "com.microsoft", "Attention", 1) != nullptr; }

// The fused model computes what the original does (once Onyx can run Attention).
void ExpectSameOutputsOnceRunnable(const std::string& original, const std::string& optimized,
                                   const NamedValues& feeds) {
  if (!HaveAttentionKernel()) GTEST_SKIP() << "no CPU com.microsoft.Attention kernel yet; structure checked only";
  test::ExpectSameOutputs(original, optimized, feeds);
}

struct Fused {
  std::shared_ptr<ir::Model> model;
  const ir::Node* node = nullptr;
};

// The graph's (last) com.microsoft Attention node, or null.
const ir::Node* AttentionNode(const ir::Graph& graph) {
  const ir::Node* attention = nullptr;
  for (const auto& n : graph.nodes)
    if (n->op_type == "Attention" && n->domain == "com.microsoft") attention = n.get();
  return attention;
}

Fused FindAttention(const std::string& bytes) {
  Fused f;
  f.model = LoadModelFromBytes(bytes.data(), bytes.size());
  f.node = AttentionNode(*f.model->graph);
  return f;
}

const Tensor& Initializer(const Fused& f, size_t input) {
  return f.model->graph->initializers.at(f.node->inputs.at(input));
}

TEST(AttentionFusion, FusesABertBlockWithItsPaddingMask) {
  ModelBuilder b = BertModel();
  const std::string bytes = b.Bytes();
  auto run = RunFusion(bytes, "AttentionFusion");
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), 1);
  for (const char* op : {"Softmax", "MatMul", "Add", "Div", "Transpose", "Reshape", "Sub", "Mul", "Unsqueeze", "Shape"})
    EXPECT_EQ(OpCount(run.ops_after, op), 0) << op;
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 1);  // mask -> int32

  Fused f = FindAttention(run.optimized_bytes);
  ASSERT_NE(f.node, nullptr);
  EXPECT_EQ(f.node->FindAttribute("num_heads")->i, kHeads);
  EXPECT_EQ(f.node->FindAttribute("scale"), nullptr);  // Div by sqrt(head_size): the default
  EXPECT_EQ(f.node->FindAttribute("unidirectional"), nullptr);
  ASSERT_NE(f.node->FindAttribute("mask_filter_value"), nullptr);
  EXPECT_EQ(f.node->FindAttribute("mask_filter_value")->f, kFloatMin);
  EXPECT_EQ(f.node->inputs[0], "x");
  // Packed weights: row r = Wq[r] | Wk[r] | Wv[r]; bias = bq | bk | bv.
  const Tensor& w = Initializer(f, 1);
  const Tensor& bias = Initializer(f, 2);
  ASSERT_EQ(w.shape(), (Shape{kHidden, 3 * kHidden}));
  ASSERT_EQ(bias.shape(), (Shape{3 * kHidden}));
  const uint32_t seeds[] = {10, 20, 30};
  for (int part = 0; part < 3; ++part) {
    const Tensor wp = Random({kHidden, kHidden}, seeds[part]), bp = Random({kHidden}, seeds[part] + 1);
    for (int64_t r = 0; r < kHidden; ++r)
      for (int64_t c = 0; c < kHidden; ++c)
        EXPECT_EQ(w.data<float>()[r * 3 * kHidden + part * kHidden + c], wp.data<float>()[r * kHidden + c]);
    for (int64_t c = 0; c < kHidden; ++c) EXPECT_EQ(bias.data<float>()[part * kHidden + c], bp.data<float>()[c]);
  }
  // mask_index is the mask cast to int32.
  auto cast_it = std::find_if(f.model->graph->nodes.begin(), f.model->graph->nodes.end(),
                              [](const auto& n) { return n->op_type == "Cast"; });
  ASSERT_NE(cast_it, f.model->graph->nodes.end());
  EXPECT_EQ((*cast_it)->inputs[0], "mask");
  EXPECT_EQ((*cast_it)->FindAttribute("to")->i, 6);
  EXPECT_EQ(f.node->inputs.at(3), (*cast_it)->outputs[0]);
  EXPECT_EQ(f.model->opset_imports.count("com.microsoft"), 1u);
  ExpectSameOutputsOnceRunnable(bytes, run.optimized_bytes, BertFeeds());
}

#if defined(__linux__)
// The packed Q|K|V weight lives only until the Attention kernel packs it, so it goes on small
// pages (a fresh huge page costs a VM a host fault for all 2 MB).
TEST(AttentionFusion, PacksQkvWeightsOntoSmallPages) {
  BertOptions o;
  o.head_size = 256;  // hidden 512: a 3 MB Q|K|V weight, a mapping of its own
  ModelBuilder b = BertModel(o);
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  OptimizerOptions options;
  options.only_passes = {"AttentionFusion"};
  OptimizeModel(*model, options);
  const ir::Node* attention = AttentionNode(*model->graph);
  ASSERT_NE(attention, nullptr);
  const Tensor* w = model->graph->FindInitializer(attention->inputs.at(1));
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->shape(), (Shape{512, 3 * 512}));
  const std::string flags = test::VmFlagsOf(w->raw_data());
  ASSERT_FALSE(flags.empty());
  EXPECT_NE(flags.find(" nh"), std::string::npos) << flags;  // MADV_NOHUGEPAGE
}
#endif

// A float16 model's Q, K and V weights whose float values are not written yet (HalfBodyToFloat's
// DeferWidening) are joined as float16 and deferred again: the join writes no float copy, and
// its values, once written, are the widened Q | K | V rows.
TEST(AttentionFusion, JoinsDeferredFloat16WeightsWithoutWritingThem) {
  const std::string bytes = BertModel().Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  std::map<std::string, Tensor> halves;
  for (auto& [name, t] : model->graph->initializers) {
    const std::string tail = name.size() > 4 ? name.substr(name.size() - 4) : "";
    if (tail != "_q_w" && tail != "_k_w" && tail != "_v_w") continue;
    Tensor h(DataType::kFloat16, t.shape());
    auto* bits = static_cast<uint16_t*>(h.raw_data());
    for (int64_t i = 0; i < t.size(); ++i) bits[i] = FloatToHalfBits(t.data<float>()[i]);
    halves[tail] = h;
    t = DeferWidening(h);
  }
  ASSERT_EQ(halves.size(), 3u);
  const int64_t written = HalfWeightFloatCopyBytes();
  OptimizerOptions options;
  options.only_passes = {"AttentionFusion"};
  OptimizeModel(*model, options);
  EXPECT_EQ(HalfWeightFloatCopyBytes(), written);
  const ir::Node* attention = AttentionNode(*model->graph);
  ASSERT_NE(attention, nullptr);
  const Tensor* w = model->graph->FindInitializer(attention->inputs.at(1));
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->shape(), (Shape{kHidden, 3 * kHidden}));
  EXPECT_EQ(IsDeferredWidening(*w), CanDeferWidening());  // elsewhere the weights were float copies
  MaterializeDeferredWidening(*w);
  for (int64_t r = 0; r < kHidden; ++r)
    for (int i = 0; i < 3; ++i)
      for (int64_t c = 0; c < kHidden; ++c) {
        const auto* bits = static_cast<const uint16_t*>(halves[i == 0 ? "_q_w" : i == 1 ? "_k_w" : "_v_w"].raw_data());
        ASSERT_EQ(w->data<float>()[r * 3 * kHidden + i * kHidden + c], HalfBitsToFloat(bits[r * kHidden + c]))
            << r << " " << i << " " << c;
      }
}

TEST(AttentionFusion, FusesEveryLayerAndDropsTheSharedMaskChain) {
  ModelBuilder b = BertModel({}, 3);
  const std::string bytes = b.Bytes();
  auto run = RunFusion(bytes, "AttentionFusion");
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), 3);
  EXPECT_EQ(OpCount(run.ops_after, "Softmax"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 1);  // one int32 mask for every layer
  EXPECT_EQ(OpCount(run.ops_after, "Mul"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Unsqueeze"), 0);
  ExpectSameOutputsOnceRunnable(bytes, run.optimized_bytes, BertFeeds());
}

TEST(AttentionFusion, FusesAMasklessVitBlockAndKeepsAnUnusualScale) {
  BertOptions o;
  o.divisor = 3.0f;  // not sqrt(head_size): becomes `scale`
  ModelBuilder b = BertModel(o, 1, false);
  const std::string bytes = b.Bytes();
  auto run = RunFusion(bytes, "AttentionFusion");
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "Softmax"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 0);
  Fused f = FindAttention(run.optimized_bytes);
  ASSERT_NE(f.node, nullptr);
  EXPECT_EQ(f.node->inputs.size(), 3u);
  ASSERT_NE(f.node->FindAttribute("scale"), nullptr);
  EXPECT_FLOAT_EQ(f.node->FindAttribute("scale")->f, 1.0f / 3.0f);
  EXPECT_EQ(f.node->FindAttribute("mask_filter_value"), nullptr);
  ExpectSameOutputsOnceRunnable(bytes, run.optimized_bytes, BertFeeds(false));
}

TEST(AttentionFusion, LeavesUnusualPatternsAlone) {
  {
    BertOptions o;
    o.probs_as_output = true;  // an intermediate is a graph output
    auto run = RunFusion(BertModel(o).Bytes(), "AttentionFusion");
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), 0);
    EXPECT_EQ(OpCount(run.ops_after, "Softmax"), 1);
  }
  {
    BertOptions o;
    o.k_perm = {0, 2, 1, 3};  // K not transposed: not Q.K^T
    auto run = RunFusion(BertModel(o).Bytes(), "AttentionFusion");
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), 0);
  }
  {
    // A positive "mask" constant is not a padding mask.
    ModelBuilder b;
    b.Input("x", DataType::kFloat, {-1, -1, kHidden}).Input("mask", DataType::kInt64, {-1, -1});
    BertOptions o;
    o.mask = ExtendedMask(b, "mask", 5.0f);
    BertAttention(b, "x", "l0", "y", o);
    b.Output("y", DataType::kFloat, {-1, -1, kHidden});
    auto run = RunFusion(b.Bytes(), "AttentionFusion");
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), 0);
  }
  {
    // Q's projection read elsewhere too: fusing would compute it twice.
    ModelBuilder b = BertModel();
    b.Output("l0_q_proj", DataType::kFloat, {-1, -1, kHidden});
    auto run = RunFusion(b.Bytes(), "AttentionFusion");
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), 0);
  }
  {
    // A mask of another batch size than the input cannot be a 2-D mask_index.
    ModelBuilder b;
    b.Input("x", DataType::kFloat, {2, 5, kHidden}).Input("mask", DataType::kInt64, {1, 5});
    BertOptions o;
    o.mask = ExtendedMask(b, "mask", kFloatMin);
    BertAttention(b, "x", "l0", "y", o);
    b.Output("y", DataType::kFloat, {2, 5, kHidden});
    auto run = RunFusion(b.Bytes(), "AttentionFusion");
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), 0);
  }
}

TEST(AttentionFusion, SessionsFuseOnlyWithAnAttentionKernel) {
  auto run = RunFusion(BertModel().Bytes(), "AttentionFusion", /*require_kernels=*/true);
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), HaveAttentionKernel() ? 1 : 0);
}

// GPT-2: fused QKV projection, Split, causal Where over a slice of the tril `bias` buffer.
enum class GptProjection { kMatMulAdd, kConv1D };

ModelBuilder GptModel(GptProjection proj, bool tril = true, int64_t buffer = 16) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, -1, kHidden});
  b.Initializer("c_attn_w", Random({kHidden, 3 * kHidden}, 40)).Initializer("c_attn_b", Random({3 * kHidden}, 41));
  if (proj == GptProjection::kMatMulAdd) {
    b.Node("MatMul", {"x", "c_attn_w"}, {"qkv_mm"});
    b.Node("Add", {"qkv_mm", "c_attn_b"}, {"qkv"});
  } else {
    b.Node("Concat", {DynDim(b, "x", 0, "c"), DynDim(b, "x", 1, "c"), Const(b, "nf", Ints({3 * kHidden}))},
           {"size_out"})
        .attributes.push_back(IntAttr("axis", 0));
    b.Node("Reshape", {"x", Const(b, "flat", Ints({-1, kHidden}))}, {"x2"});
    b.Node("Gemm", {"x2", "c_attn_w", "c_attn_b"}, {"g"});
    b.Node("Reshape", {"g", "size_out"}, {"qkv"});
  }
  b.Node("Split", {"qkv", Const(b, "split", Ints({kHidden, kHidden, kHidden}))}, {"q", "k", "v"})
      .attributes.push_back(IntAttr("axis", 2));
  const std::string q = SplitHeads(b, "q", {0, 2, 1, 3}, "a");
  const std::string k = SplitHeads(b, "k", {0, 2, 3, 1}, "a");
  const std::string v = SplitHeads(b, "v", {0, 2, 1, 3}, "a");
  b.Node("MatMul", {q, k}, {"aw"});
  b.Node("Div", {"aw", Const(b, "sqrt_d", FloatScalar(2.0f))}, {"aw_s"});
  // causal_mask = bias[:, :, k_len - q_len : k_len, :k_len]
  Tensor causal(DataType::kBool, {1, 1, buffer, buffer});
  for (int64_t i = 0; i < buffer; ++i)
    for (int64_t j = 0; j < buffer; ++j) causal.data<bool>()[i * buffer + j] = tril ? j <= i : true;
  b.Initializer("causal", causal);
  b.Node("Shape", {q}, {"q_shape"});
  b.Node("Gather", {"q_shape", Const(b, "two", IntScalar(2))}, {"ql"}).attributes.push_back(IntAttr("axis", 0));
  b.Node("Shape", {k}, {"k_shape"});
  b.Node("Gather", {"k_shape", Const(b, "three", IntScalar(3))}, {"kl"}).attributes.push_back(IntAttr("axis", 0));
  b.Node("Sub", {"kl", "ql"}, {"st0"});
  b.Node("Unsqueeze", {"st0", Const(b, "z0", Ints({0}))}, {"st"});
  b.Node("Unsqueeze", {"kl", Const(b, "z1", Ints({0}))}, {"en"});
  b.Node("Slice", {"causal", "st", "en", Const(b, "ax2", Ints({2})), Const(b, "one_step", Ints({1}))}, {"cm1"});
  b.Node("Slice", {"cm1", Const(b, "zero", Ints({0})), "en", Const(b, "ax3", Ints({3})), "one_step"}, {"cm"});
  b.Node("Where", {"cm", "aw_s", Const(b, "fmin", FloatScalar(kFloatMin))}, {"aw_m"});
  b.Node("Softmax", {"aw_m"}, {"p"}).attributes.push_back(IntAttr("axis", -1));
  b.Node("MatMul", {"p", v}, {"o"});
  MergeHeads(b, "o", "a", "y");
  b.Output("y", DataType::kFloat, {-1, -1, kHidden});
  return b;
}

TEST(GptAttentionFusion, FusesGpt2AttentionAsUnidirectional) {
  for (GptProjection proj : {GptProjection::kMatMulAdd, GptProjection::kConv1D}) {
    const std::string bytes = GptModel(proj).Bytes();
    auto run = RunFusion(bytes, "GptAttentionFusion");
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), 1);
    for (const char* op : {"Softmax", "MatMul", "Gemm", "Split", "Where", "Slice", "Reshape", "Shape"})
      EXPECT_EQ(OpCount(run.ops_after, op), 0) << op;
    Fused f = FindAttention(run.optimized_bytes);
    ASSERT_NE(f.node, nullptr);
    EXPECT_EQ(f.node->inputs.size(), 3u);
    EXPECT_EQ(f.node->inputs[0], "x");
    EXPECT_EQ(f.node->FindAttribute("unidirectional")->i, 1);
    EXPECT_EQ(f.node->FindAttribute("num_heads")->i, kHeads);
    EXPECT_EQ(f.node->FindAttribute("scale"), nullptr);
    // The projection's own weights, already packed.
    const Tensor& w = Initializer(f, 1);
    const Tensor expected = Random({kHidden, 3 * kHidden}, 40);
    ASSERT_EQ(w.shape(), expected.shape());
    for (int64_t i = 0; i < w.size(); ++i) EXPECT_EQ(w.data<float>()[i], expected.data<float>()[i]);
    ExpectSameOutputsOnceRunnable(bytes, run.optimized_bytes, BertFeeds(false));
  }
}

TEST(GptAttentionFusion, LeavesANonCausalWhereAlone) {
  auto run = RunFusion(GptModel(GptProjection::kMatMulAdd, /*tril=*/false).Bytes(), "GptAttentionFusion");
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Attention"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Softmax"), 1);
  // Separate-projection fusion does not take fused projections either.
  auto other = RunFusion(GptModel(GptProjection::kMatMulAdd).Bytes(), "AttentionFusion");
  EXPECT_EQ(OpCount(other.ops_after, "com.microsoft.Attention"), 0);
}

}  // namespace
}  // namespace onyx
