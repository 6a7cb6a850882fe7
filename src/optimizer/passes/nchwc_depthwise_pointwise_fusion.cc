// NchwcDepthwisePointwiseFusion (all, CPU, after NchwcLayout): a blocked depthwise conv read only
// by a blocked pointwise conv,
//   t = com.onyx.NchwcConv(x, W_dw, B_dw) group = C, W_dw [C, 1, kh, kw], no Z
//   y = com.onyx.NchwcConv(t, W, B, Z?)   W [M, C, 1, 1], group 1, stride 1, dilation 1, no pads
// => y = com.onyx.NchwcDepthwisePointwiseConv(x, W_dw, B_dw, W, B, Z), the depthwise's window
// attributes kept and its activation as dw_activation / dw_activation_params. The kernel
// computes the depthwise output a band of rows at a time into a buffer that stays in cache and
// runs the pointwise on it there: the wide intermediate image of an inverted residual block
// (MobileNetV2: up to 96 x 112 x 112 floats) is never written to memory and read back.
// Only where x's map is at least kMinInputPlane pixels: below that x and t stay in L2 between the
// two convs anyway (MobileNetV2's 192-channel 28 x 28 blocks ran 2-3% slower fused; its
// 112 x 112 and 56 x 56 ones 7-23% faster).
//
// NchwcExpandDepthwisePointwiseFusion (all, CPU, after it): the expanding pointwise conv in front,
//   e = com.onyx.NchwcConv(x, W_exp, B_exp)          W_exp [C, C_in, 1, 1], as the pointwise above
//   y = com.onyx.NchwcDepthwisePointwiseConv(e, ...)  its only reader
// => y = com.onyx.NchwcDepthwisePointwiseConv(x, ..., W_exp, B_exp) (inputs 6 and 7), its
// activation as exp_activation / exp_activation_params: the kernel makes e a band of rows at a
// time as well, so the widest tensor of the block is never written to memory either.
#include <algorithm>
#include <string>
#include <vector>

#include "linalg/bf16_gemm.h"
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"

namespace onyx {
namespace {

using namespace fusion;

constexpr int64_t kMinInputPlane = 56 * 56;

bool IsPlainNchwcConv(const ir::Node* n) {
  if (n->op_type != "NchwcConv" || n->domain != kOnyxDomain || n->outputs.size() != 1 || n->inputs.size() < 2)
    return false;
  const ir::Attribute* plain = n->FindAttribute("plain_input");
  const ir::Attribute* bf16 = n->FindAttribute(linalg::kBf16Attribute);
  return (plain == nullptr || plain->i == 0) && (bf16 == nullptr || bf16->i == 0);
}

// A constant no feed can replace: the fused kernel packs it when the session starts.
const Tensor* PackableWeight(GraphEditor& editor, const std::string& value) {
  for (const ir::Graph* g = &editor.graph(); g != nullptr; g = g->parent)
    if (g->IsGraphInput(value)) return nullptr;
  const Tensor* w = editor.Constant(value);
  return w != nullptr && w->dtype() == DataType::kFloat && w->rank() == 4 ? w : nullptr;
}

bool AllEqual(const ir::Attribute* a, int64_t value) {
  if (a == nullptr) return true;
  for (int64_t v : a->ints)
    if (v != value) return false;
  return true;
}

// The depthwise: constant float W [C, 1, kh, kw] with group C > 1, no residual Z.
const Tensor* DepthwiseWeight(GraphEditor& editor, const ir::Node* n) {
  if (!IsPlainNchwcConv(n) || n->inputs.size() > 4 || (n->inputs.size() == 4 && !n->inputs[3].empty()))
    return nullptr;
  const Tensor* w = PackableWeight(editor, n->inputs[1]);
  if (w == nullptr || w->dim(1) != 1 || w->dim(0) < 2) return nullptr;
  const ir::Attribute* group = n->FindAttribute("group");
  return group != nullptr && group->i == w->dim(0) ? w : nullptr;
}

// A plain pointwise conv's constant float W [M, C, 1, 1]: one group, a 1x1 window with stride 1,
// no dilation and no padding; null for anything else.
const Tensor* PointwiseWeight(GraphEditor& editor, const ir::Node* n) {
  if (!IsPlainNchwcConv(n) || n->inputs.size() > 4) return nullptr;
  const Tensor* w = PackableWeight(editor, n->inputs[1]);
  if (w == nullptr || w->dim(2) != 1 || w->dim(3) != 1) return nullptr;
  const ir::Attribute* group = n->FindAttribute("group");
  // Any auto_pad gives a 1x1, stride 1 window no padding.
  const bool plain = (group == nullptr || group->i == 1) && AllEqual(n->FindAttribute("strides"), 1) &&
                     AllEqual(n->FindAttribute("dilations"), 1) && AllEqual(n->FindAttribute("pads"), 0) &&
                     AllEqual(n->FindAttribute("kernel_shape"), 1);
  return plain ? w : nullptr;
}

// The pointwise reading t as X (and nowhere else) with C = channels.
bool IsPointwiseOf(GraphEditor& editor, const ir::Node* n, const std::string& t, int64_t channels) {
  const Tensor* w = PointwiseWeight(editor, n);
  if (w == nullptr || n->inputs[0] != t || w->dim(1) != channels) return false;
  for (size_t i = 1; i < n->inputs.size(); ++i)
    if (n->inputs[i] == t) return false;
  return true;
}

void CopyActivation(const ir::Node& from, const std::string& prefix, ir::Node* to) {
  for (const auto& a : from.attributes)
    if (a.name == "activation" || a.name == "activation_params") {
      ir::Attribute c = a.Clone();
      c.name = prefix + a.name;
      to->attributes.push_back(std::move(c));
    }
}

bool LargeMap(GraphEditor& editor, const std::string& x) {
  const auto* d = editor.DimsOf(x);  // [N, C / B, H, W, B]
  return d != nullptr && d->size() == 5 && (*d)[2].known() && (*d)[3].known() &&
         (*d)[2].value * (*d)[3].value >= kMinInputPlane;
}

class NchwcDepthwisePointwiseFusion final : public Pass {
 public:
  std::string name() const override { return "NchwcDepthwisePointwiseFusion"; }
  OptLevel level() const override { return OptLevel::kAll; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!ctx.options.require_kernels || !CanRun(ctx, "NchwcDepthwisePointwiseConv", kOnyxDomain, 1)) return 0;
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    std::vector<const ir::Node*> removed;  // pointwise convs fused earlier in this sweep
    for (ir::Node* dw : editor.Nodes()) {
      if (std::find(removed.begin(), removed.end(), dw) != removed.end()) continue;
      const Tensor* w = DepthwiseWeight(editor, dw);
      if (w == nullptr) continue;
      const std::string& t = dw->outputs[0];
      ir::Node* pw = SoleReader(editor, t);
      if (pw == nullptr || !IsPointwiseOf(editor, pw, t, w->dim(0)) || !LargeMap(editor, dw->inputs[0])) continue;
      std::vector<std::string> inputs = {dw->inputs[0], dw->inputs[1], dw->inputs.size() > 2 ? dw->inputs[2] : ""};
      for (size_t i = 1; i < 4; ++i) inputs.push_back(i < pw->inputs.size() ? pw->inputs[i] : "");
      while (inputs.back().empty()) inputs.pop_back();
      const ir::Node dw_saved = *dw, pw_saved = *pw;
      const std::string y = pw->outputs[0];
      removed.push_back(pw);
      RemoveAll(editor, {dw, pw});
      ir::Node* fused = AddFusedNode(editor, "NchwcDepthwisePointwiseConv", kOnyxDomain, 1, inputs, {y});
      for (const auto& a : dw_saved.attributes)
        if (a.name != "activation" && a.name != "activation_params") fused->attributes.push_back(a.Clone());
      CopyActivation(dw_saved, "dw_", fused);
      CopyActivation(pw_saved, "", fused);
      ++rewrites;
    }
    return rewrites;
  }
};

class NchwcExpandDepthwisePointwiseFusion final : public Pass {
 public:
  std::string name() const override { return "NchwcExpandDepthwisePointwiseFusion"; }
  OptLevel level() const override { return OptLevel::kAll; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!ctx.options.require_kernels || !CanRun(ctx, "NchwcDepthwisePointwiseConv", kOnyxDomain, 1)) return 0;
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    std::vector<const ir::Node*> removed;  // expanding convs fused earlier in this sweep
    for (ir::Node* fused : editor.Nodes()) {
      if (std::find(removed.begin(), removed.end(), fused) != removed.end()) continue;
      if (fused->op_type != "NchwcDepthwisePointwiseConv" || fused->domain != kOnyxDomain ||
          fused->inputs.size() < 4 || fused->inputs.size() > 6 || fused->outputs.size() != 1)
        continue;
      const Tensor* dw_w = editor.Constant(fused->inputs[1]);
      ir::Node* expand = editor.Producer(fused->inputs[0]);
      if (dw_w == nullptr || expand == nullptr || SoleReader(editor, fused->inputs[0]) != fused) continue;
      const Tensor* w = PointwiseWeight(editor, expand);
      // No residual on the expand: the kernel adds none there.
      if (w == nullptr || w->dim(0) != dw_w->dim(0) || (expand->inputs.size() == 4 && !expand->inputs[3].empty()))
        continue;
      std::vector<std::string> inputs = fused->inputs;
      inputs[0] = expand->inputs[0];
      inputs.resize(6);
      inputs.push_back(expand->inputs[1]);
      inputs.push_back(expand->inputs.size() > 2 ? expand->inputs[2] : "");
      while (inputs.back().empty()) inputs.pop_back();
      const ir::Node fused_saved = *fused, expand_saved = *expand;
      removed.push_back(expand);
      RemoveAll(editor, {expand, fused});
      ir::Node* node = AddFusedNode(editor, "NchwcDepthwisePointwiseConv", kOnyxDomain, 1, inputs,
                                    fused_saved.outputs);
      for (const auto& a : fused_saved.attributes) node->attributes.push_back(a.Clone());
      CopyActivation(expand_saved, "exp_", node);
      ++rewrites;
    }
    return rewrites;
  }
};

// After NchwcLayout (900), which makes the blocked convs.
ONYX_REGISTER_PASS(NchwcDepthwisePointwiseFusion, 902);
ONYX_REGISTER_PASS(NchwcExpandDepthwisePointwiseFusion, 903);

}  // namespace
}  // namespace onyx
