// NchwcLayout (level "all", CPU): regions of 2-D float convolutions that feed each other run in
// the channel-blocked layout, with one reorder at each end instead of one around every conv.
// Chains of 1-D convolutions (W [M, C, k]) form regions too, of convs only (the other members
// below are matched on 2-D images).
//
// Conv, com.microsoft.FusedConv and com.onyx.FusedConv nodes become com.onyx.NchwcConv when
// their weights are constant and the blocked kernels support their grouping. Two such nodes
// belong to one region when one reads the other's output as X or as the residual Z (a residual
// Add already folded into FusedConv by ConvActivationFusion). A region of at least
// kMinRegionConvs convs is rewritten: each outside value it reads as X or Z gets one
// ReorderToNchwc (shared by every reader of the pass), and each of its values read outside the
// region (other nodes, graph outputs, subgraphs) gets one ReorderFromNchwc back to its name.
//
// Other nodes join the region of a member whose output they read (or that reads theirs), so the
// layout does not break around them:
//   MaxPool / AveragePool (2-D, no Indices)    -> com.onyx.NchwcMaxPool / NchwcAveragePool
//   GlobalAveragePool / GlobalMaxPool          -> com.onyx.NchwcGlobalAveragePool / ...MaxPool
//   Mul / Add of two [N, C, H, W] tensors (broadcast over N, H, W) -> the same op, blocked
//   Mul of [N, C, H, W] by [N, C, 1, 1] (a squeeze-excitation gate) -> com.onyx.NchwcScaleChannels
//   Concat on the channels, every input's C a multiple of the block -> the same op, axis 1
//   Resize, nearest, by constant scales [1, 1, h, w] -> the same op, scales [1, 1, h, w, 1];
//     by whole h, w under a rule that maps output pixel o to o / scale -> com.onyx.NchwcUpsample
//   Relu, Sigmoid, Tanh, HardSigmoid, HardSwish, LeakyRelu, Clip (constant bounds), and
//   Add / Sub / Mul / Div of an image and a constant scalar (a non-zero divisor)
//                                              -> the same op (an unfused HardSwish or affine)
// Such a node joins only while every blocked input it reads is a member's output or a
// [N, C, 1, 1] tensor: reordering a whole image in for it would cost what it saves. Regions
// still need kMinRegionConvs convs over images (the 1x1 convs of a squeeze-excitation gate, on one
// pixel, do not count).
//
// Padded channels (past C in the last block) are zero on the way in and finite on the way out,
// and no member mixes them into real channels: convs compute them from zero weights and bias
// (the next conv's weights are zero there, and Z adds lane by lane), pools and elementwise ops
// work lane by lane on finite values, and a blocked Concat has no padded channels.
//
// The block is linalg::ConvBlockSize() of the CPU the pass runs on, so the pass runs only as
// sessions optimize (OptimizerOptions::require_kernels): a model saved offline would be tied to
// one ISA.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "linalg/conv.h"
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"

namespace onyx {
namespace {

using namespace fusion;

// A lone conv gains nothing: its kernel blocks and unblocks inside, as the reorders would. Two
// convs save one reorder pair at best, which separate reorder nodes over cold memory do not
// repay (measured: PP-OCR det's depthwise + pointwise pairs ran 10% slower, YOLO's pairs broke
// even), so regions start at three.
constexpr size_t kMinRegionConvs = 3;

// FusedConv activations with the parameter counts NchwcConv accepts.
const std::map<std::string, size_t> kActivationParams = {
    {"Relu", 0},      {"Tanh", 0}, {"Sigmoid", 0}, {"Silu", 0},
    {"HardSwish", 0}, {"LeakyRelu", 1}, {"Clip", 2}, {"HardSigmoid", 2},
};

// What a region member is.
enum class MemberKind { kConv, kPool, kGlobalPool, kElementwise, kScale, kConcat, kResize, kLaneWise };

struct MemberFacts {
  MemberKind kind = MemberKind::kConv;
  int64_t out_channels = 0;
  // Fewer input channels than a block and no grouping: fed from outside the region, X stays
  // plain (NchwcConv plain_input) instead of being padded to a block of mostly zeros.
  bool narrow_input = false;
  bool gate_first = false;  // a squeeze-excitation Mul(gate, image)
  size_t image_input = 0;   // kLaneWise: the one blocked input
};

bool IsConvAnchor(const ir::Node* n) {
  if (n->op_type == "Conv") return n->domain.empty();
  return n->op_type == "FusedConv" && (n->domain == kMsDomain || n->domain == kOnyxDomain);
}

// Whether the blocked kernels run this conv (see NchwcConv and the engines' Supports): plain
// groups, depthwise with one output per channel, or groups of whole blocks.
bool BlockedGroupingSupported(int64_t channels, int64_t out_channels, int64_t group, int64_t block) {
  if (group == 1) return true;
  if (group == channels && out_channels == channels) return true;
  return (channels / group) % block == 0 && (out_channels / group) % block == 0;
}

std::optional<MemberFacts> MatchConv(GraphEditor& editor, const ir::Node* n, int64_t block) {
  if (!IsConvAnchor(n) || n->outputs.size() != 1 || n->inputs.size() < 2 || n->inputs[0].empty()) return std::nullopt;
  const size_t max_inputs = n->op_type == "Conv" ? 3 : 4;
  if (n->inputs.size() > max_inputs) return std::nullopt;
  const Tensor* w = editor.Constant(n->inputs[1]);
  // 2-D, or 1-D (rank-3 W): a 1-D region holds only convs, as the other members need images.
  if (w == nullptr || w->dtype() != DataType::kFloat || (w->rank() != 4 && w->rank() != 3)) return std::nullopt;
  // NchwcConv packs W when the session starts: no feed may replace it, whatever the fold options.
  for (const ir::Graph* g = &editor.graph(); g != nullptr; g = g->parent)
    if (g->IsGraphInput(n->inputs[1])) return std::nullopt;
  const DataType xt = ElemType(editor, n->inputs[0]);
  if (xt != DataType::kFloat && xt != DataType::kUndefined) return std::nullopt;
  const ir::Attribute* g = n->FindAttribute("group");
  const int64_t group = g != nullptr ? g->i : 1;
  const int64_t out_channels = w->dim(0), channels = w->dim(1) * group;
  if (group < 1 || out_channels < 1 || channels < 1 || out_channels % group != 0) return std::nullopt;
  if (!BlockedGroupingSupported(channels, out_channels, group, block)) return std::nullopt;
  // X must be [N, C, spatial...] of W's rank with C matching the weights when known.
  const auto* xd = editor.DimsOf(n->inputs[0]);
  if (xd != nullptr && (xd->size() != w->rank() || ((*xd)[1].known() && (*xd)[1].value != channels)))
    return std::nullopt;
  if (const ir::Attribute* k = n->FindAttribute("kernel_shape")) {
    if (k->ints != std::vector<int64_t>(w->shape().begin() + 2, w->shape().end())) return std::nullopt;
  }
  if (n->inputs.size() > 2 && !n->inputs[2].empty()) {
    const auto* bd = editor.DimsOf(n->inputs[2]);
    if (bd == nullptr || bd->size() != 1 || !DimIs((*bd)[0], out_channels)) return std::nullopt;
  }
  if (const ir::Attribute* act = n->FindAttribute("activation")) {
    auto it = kActivationParams.find(act->s);
    if (it == kActivationParams.end()) return std::nullopt;
    const ir::Attribute* params = n->FindAttribute("activation_params");
    if ((params != nullptr ? params->floats.size() : 0) != it->second) return std::nullopt;
  }
  if (n->inputs.size() > 3 && !n->inputs[3].empty()) {
    // Z must have exactly the output's shape (it is blocked alongside Y).
    const auto* zd = editor.DimsOf(n->inputs[3]);
    const auto* yd = editor.DimsOf(n->outputs[0]);
    if (zd == nullptr || yd == nullptr || !SameDims(*zd, *yd) || ElemType(editor, n->inputs[3]) != DataType::kFloat)
      return std::nullopt;
  }
  return MemberFacts{MemberKind::kConv, out_channels, group == 1 && channels < block};
}

// Known [N, C, H, W] dims of a float value, else null.
const std::vector<Dim>* FloatImageDims(GraphEditor& editor, const std::string& value) {
  if (value.empty() || ElemType(editor, value) != DataType::kFloat) return nullptr;
  const auto* d = editor.DimsOf(value);
  if (d == nullptr || d->size() != 4 || !(*d)[1].known()) return nullptr;
  return d;
}

bool IsChannelScale(const std::vector<Dim>& d, const std::vector<Dim>& image) {
  return SameDims({d[0], d[1]}, {image[0], image[1]}) && DimIs(d[2], 1) && DimIs(d[3], 1);
}

// Ops that map each element to a finite value of itself alone (given finite constants).
const std::set<std::string> kLaneWiseUnary = {"Relu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu", "Clip"};

// A float constant of one element whose shape broadcasts against [N, Cb, H, W, B].
bool IsScalarConstant(GraphEditor& editor, const std::string& value) {
  const Tensor* t = editor.Constant(value);
  if (t == nullptr || t->dtype() != DataType::kFloat || t->size() != 1 || t->rank() > 4) return false;
  return std::isfinite(t->data<float>()[0]);
}

// A node that may join a region (see the top of the file), with its output's channels.
std::optional<MemberFacts> MatchOther(GraphEditor& editor, const ir::Node* n, int64_t block) {
  if (!n->domain.empty() || n->outputs.empty() || n->outputs[0].empty()) return std::nullopt;
  for (size_t i = 1; i < n->outputs.size(); ++i)
    if (!n->outputs[i].empty()) return std::nullopt;  // MaxPool's Indices
  const auto* yd = FloatImageDims(editor, n->outputs[0]);
  if (yd == nullptr) return std::nullopt;
  const int64_t channels = (*yd)[1].value;
  const std::string& op = n->op_type;
  if (op == "MaxPool" || op == "AveragePool") {
    const ir::Attribute* k = n->FindAttribute("kernel_shape");
    if (n->inputs.size() != 1 || k == nullptr || k->ints.size() != 2 || !FloatImageDims(editor, n->inputs[0]))
      return std::nullopt;
    return MemberFacts{MemberKind::kPool, channels, false};
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    if (n->inputs.size() != 1 || !FloatImageDims(editor, n->inputs[0])) return std::nullopt;
    return MemberFacts{MemberKind::kGlobalPool, channels, false};
  }
  if (kLaneWiseUnary.count(op)) {
    if (n->inputs.empty() || !FloatImageDims(editor, n->inputs[0])) return std::nullopt;
    for (size_t i = 1; i < n->inputs.size(); ++i)
      if (!n->inputs[i].empty() && !IsScalarConstant(editor, n->inputs[i])) return std::nullopt;  // Clip's bounds
    return MemberFacts{MemberKind::kLaneWise, channels, false};
  }
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && n->inputs.size() == 2) {
    for (size_t i = 0; i < 2; ++i) {
      const std::string& c = n->inputs[1 - i];
      if (!FloatImageDims(editor, n->inputs[i]) || !IsScalarConstant(editor, c)) continue;
      if (op == "Div" && (i != 0 || editor.Constant(c)->data<float>()[0] == 0.0f)) continue;
      MemberFacts f{MemberKind::kLaneWise, channels, false};
      f.image_input = i;
      return f;
    }
  }
  if (op == "Mul" || op == "Add") {
    if (n->inputs.size() != 2) return std::nullopt;
    // Any broadcasting over N, H and W works on the blocked tensors alike; C must match.
    int scales = 0;
    bool gate_first = false;
    for (size_t i = 0; i < 2; ++i) {
      const auto* d = FloatImageDims(editor, n->inputs[i]);
      if (d == nullptr || (*d)[1].value != channels) return std::nullopt;
      if (op == "Mul" && !SameDims(*d, *yd) && IsChannelScale(*d, *yd)) {
        ++scales;
        gate_first = i == 0;
      }
    }
    // NchwcScaleChannels takes an image of the gate's batch (the output's H, W are the image's).
    if (scales == 1 && !SameDims({(*FloatImageDims(editor, n->inputs[gate_first ? 1 : 0]))[0]}, {(*yd)[0]}))
      scales = 0;
    if (scales > 1) scales = 0;
    return MemberFacts{scales == 1 ? MemberKind::kScale : MemberKind::kElementwise, channels, false, gate_first};
  }
  if (op == "Concat") {
    const ir::Attribute* axis = n->FindAttribute("axis");
    if (axis == nullptr || (axis->i != 1 && axis->i != -3) || n->inputs.empty()) return std::nullopt;
    for (const std::string& in : n->inputs) {
      const auto* d = FloatImageDims(editor, in);
      if (d == nullptr || (*d)[1].value % block != 0) return std::nullopt;
    }
    return MemberFacts{MemberKind::kConcat, channels, false};
  }
  if (op == "Resize" && n->opset >= 11) {
    // Nearest copies whole pixels; a trailing block axis of scale 1 maps each lane to itself
    // under every coordinate transformation but tf_crop_and_resize's.
    const ir::Attribute* mode = n->FindAttribute("mode");
    const ir::Attribute* coords = n->FindAttribute("coordinate_transformation_mode");
    if ((mode != nullptr && mode->s != "nearest") || (coords != nullptr && coords->s == "tf_crop_and_resize") ||
        n->FindAttribute("axes") != nullptr || n->inputs.size() < 3 || (n->inputs.size() > 3 && !n->inputs[3].empty()) ||
        !FloatImageDims(editor, n->inputs[0]))
      return std::nullopt;
    const Tensor* scales = editor.Constant(n->inputs[2]);
    if (scales == nullptr || scales->dtype() != DataType::kFloat || scales->size() != 4 ||
        scales->data<float>()[0] != 1.0f || scales->data<float>()[1] != 1.0f)
      return std::nullopt;
    return MemberFacts{MemberKind::kResize, channels, false};
  }
  return std::nullopt;
}

// Whether a nearest Resize (already accepted as a member) by scales h, w maps every output pixel
// o to input pixel o / scale along both axes, exactly: whole scales (up to 64), and
// half_pixel / pytorch_half_pixel with either round_prefer rule (the source coordinate
// q + (r + 0.5) / s - 0.5 never reaches a half), or asymmetric (q + r / s) with floor, or with
// round_prefer_floor up to scale 2.
bool IsWholeUpsample(const ir::Node& n, float h, float w) {
  auto whole = [](float s) { return s >= 1.0f && s <= 64.0f && s == static_cast<float>(static_cast<int>(s)); };
  if (!whole(h) || !whole(w)) return false;
  auto text = [&](const char* name, const char* fallback) {
    const ir::Attribute* a = n.FindAttribute(name);
    return a != nullptr ? a->s : std::string(fallback);
  };
  const ir::Attribute* antialias = n.FindAttribute("antialias");
  if (antialias != nullptr && antialias->i != 0) return false;
  const std::string coords = text("coordinate_transformation_mode", "half_pixel");
  const std::string rounding = text("nearest_mode", "round_prefer_floor");
  if (coords == "half_pixel" || coords == "pytorch_half_pixel")
    return rounding == "round_prefer_floor" || rounding == "round_prefer_ceil";
  if (coords == "asymmetric") return rounding == "floor" || (rounding == "round_prefer_floor" && h <= 2 && w <= 2);
  return false;
}

// Blocked inputs: a conv's X (0) and Z (3), a pool's X, every input of the others.
bool IsBlockedInput(const MemberFacts& f, size_t index) {
  const MemberKind kind = f.kind;
  if (kind == MemberKind::kLaneWise) return index == f.image_input;
  if (kind == MemberKind::kConv) return index == 0 || index == 3;
  if (kind == MemberKind::kPool || kind == MemberKind::kGlobalPool || kind == MemberKind::kResize) return index == 0;
  return true;
}

// The com.onyx op a member becomes (elementwise ops and Concat stay themselves).
std::string BlockedOp(const ir::Node* n, MemberKind kind) {
  if (kind == MemberKind::kConv) return "NchwcConv";
  if (kind == MemberKind::kPool || kind == MemberKind::kGlobalPool) return "Nchwc" + n->op_type;
  if (kind == MemberKind::kScale) return "NchwcScaleChannels";
  return n->op_type;
}

class NchwcLayout final : public Pass {
 public:
  std::string name() const override { return "NchwcLayout"; }
  OptLevel level() const override { return OptLevel::kAll; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!ctx.options.require_kernels) return 0;
    for (const char* op : {"NchwcConv", "ReorderToNchwc", "ReorderFromNchwc"})
      if (!CanRun(ctx, op, kOnyxDomain, 1)) return 0;
    GraphEditor& editor = ctx.editor;
    const int64_t block = linalg::ConvBlockSize();
    bool pools = true;
    for (const char* op :
         {"NchwcMaxPool", "NchwcAveragePool", "NchwcGlobalAveragePool", "NchwcGlobalMaxPool", "NchwcScaleChannels"})
      pools = pools && CanRun(ctx, op, kOnyxDomain, 1);

    // Candidates, in topological order, and the regions they form.
    std::vector<ir::Node*> order;
    std::unordered_map<ir::Node*, MemberFacts> facts;
    NodeSets regions;
    for (ir::Node* n : editor.Nodes()) {
      auto f = MatchConv(editor, n, block);
      if (!f) f = MatchOther(editor, n, block);
      const bool onyx_op = f && (f->kind == MemberKind::kPool || f->kind == MemberKind::kGlobalPool ||
                                 f->kind == MemberKind::kScale);
      if (!f || (onyx_op && !pools)) continue;
      order.push_back(n);
      facts[n] = *f;
    }
    PruneOthers(editor, order, facts);
    for (ir::Node* n : order) regions.parent[n] = n;
    // Values of one pixel per image: global pools and the squeeze-excitation convs after them.
    // Their convs cost next to nothing, so they do not count towards a region's size.
    std::unordered_set<std::string> pixels;
    for (ir::Node* n : order) {
      const MemberKind kind = facts.at(n).kind;
      const auto* d = editor.DimsOf(n->outputs[0]);
      if (kind == MemberKind::kGlobalPool || (kind == MemberKind::kConv && pixels.count(n->inputs[0])) ||
          (d != nullptr && d->size() == 4 && DimIs((*d)[2], 1) && DimIs((*d)[3], 1)))
        pixels.insert(n->outputs[0]);
    }
    for (ir::Node* n : order)
      for (size_t i = 0; i < n->inputs.size(); ++i) {
        if (!IsBlockedInput(facts.at(n), i) || n->inputs[i].empty()) continue;
        ir::Node* p = editor.Producer(n->inputs[i]);
        if (p != nullptr && facts.count(p)) regions.Join(n, p);
      }
    std::unordered_map<ir::Node*, std::vector<ir::Node*>> members;
    for (ir::Node* n : order) members[regions.Find(n)].push_back(n);

    int rewrites = 0;
    std::unordered_map<std::string, std::string> reordered_in;  // outside value -> its blocked form
    for (ir::Node* n : order) {
      auto it = members.find(n);  // each region once, at its first node
      if (it == members.end()) continue;
      const std::vector<ir::Node*> region = std::move(it->second);
      members.erase(it);
      const auto convs = std::count_if(region.begin(), region.end(),
                                       [&](ir::Node* m) { return facts.at(m).kind == MemberKind::kConv; });
      const auto image_convs = std::count_if(region.begin(), region.end(), [&](ir::Node* m) {
        return facts.at(m).kind == MemberKind::kConv && !pixels.count(m->outputs[0]);
      });
      if (image_convs < static_cast<std::ptrdiff_t>(kMinRegionConvs)) continue;
      RewriteRegion(ctx, region, facts, block, reordered_in);
      ++ctx.counts["NchwcConv region"];
      ctx.counts["NchwcConv"] += static_cast<int>(convs);
      ++rewrites;
    }
    return rewrites;
  }

 private:
  // Drops the non-conv candidates that would read a whole image from outside the candidates
  // (until none is left: each drop can orphan another's input).
  static void PruneOthers(GraphEditor& editor, std::vector<ir::Node*>& order,
                          std::unordered_map<ir::Node*, MemberFacts>& facts) {
    for (bool changed = true; changed;) {
      changed = false;
      for (ir::Node* n : order) {
        const MemberFacts& f = facts.at(n);
        if (f.kind == MemberKind::kConv) continue;
        bool keep = true;
        for (size_t i = 0; i < n->inputs.size() && keep; ++i) {
          if (!IsBlockedInput(f, i)) continue;
          ir::Node* p = editor.Producer(n->inputs[i]);
          if (p != nullptr && facts.count(p)) continue;
          const auto* d = editor.DimsOf(n->inputs[i]);
          keep = (f.kind == MemberKind::kElementwise || f.kind == MemberKind::kScale) && d != nullptr &&
                 DimIs((*d)[2], 1) && DimIs((*d)[3], 1);
        }
        if (!keep) {
          facts.erase(n);
          changed = true;
        }
      }
      std::erase_if(order, [&](ir::Node* n) { return !facts.count(n); });
    }
  }

  // Rewrites one region (its nodes in topological order).
  void RewriteRegion(PassContext& ctx, const std::vector<ir::Node*>& region,
                     const std::unordered_map<ir::Node*, MemberFacts>& facts, int64_t block,
                     std::unordered_map<std::string, std::string>& reordered_in) {
    GraphEditor& editor = ctx.editor;
    const std::unordered_set<ir::Node*> inside(region.begin(), region.end());
    // Blocked names of the region's outputs, and which of them are also read in plain form.
    std::unordered_map<std::string, std::string> blocked;
    std::set<std::string> read_plain;
    for (ir::Node* n : region) {
      const std::string& out = n->outputs[0];
      blocked[out] = editor.UniqueName(out + "_nchwc");
      bool plain = editor.IsGraphOutput(out);
      for (ir::Node* reader : editor.Consumers(out)) {
        if (!inside.count(reader)) {
          plain = true;
          continue;
        }
        for (size_t i = 0; i < reader->inputs.size(); ++i)
          if (reader->inputs[i] == out && !IsBlockedInput(facts.at(reader), i)) plain = true;
      }
      if (plain) read_plain.insert(out);
    }
    auto blocked_input = [&](const std::string& value) {
      auto found = blocked.find(value);
      if (found != blocked.end()) return found->second;
      found = reordered_in.find(value);
      if (found != reordered_in.end()) return found->second;
      const std::string name = editor.UniqueName(value + "_nchwc");
      ir::Node* to = AddFusedNode(editor, "ReorderToNchwc", kOnyxDomain, 1, {value}, {name});
      to->attributes.push_back(IntAttr("block", block));
      ++ctx.counts["ReorderToNchwc"];
      reordered_in[value] = name;
      return name;
    };
    for (ir::Node* n : region) {
      const ir::Node saved = *n;
      const MemberFacts& f = facts.at(n);
      editor.RemoveNode(n);
      std::vector<std::string> inputs = saved.inputs;
      const bool plain_x = f.narrow_input && !blocked.count(inputs[0]);
      for (size_t i = 0; i < inputs.size(); ++i)
        if (IsBlockedInput(f, i) && !inputs[i].empty() && !(i == 0 && plain_x))
          inputs[i] = blocked_input(inputs[i]);
      if (f.gate_first) std::swap(inputs[0], inputs[1]);  // NchwcScaleChannels takes the image first
      const std::string& out = saved.outputs[0];
      const std::string op = BlockedOp(&saved, f.kind);
      const bool onnx_op = op == saved.op_type;  // elementwise ops, Concat and Resize stay themselves
      const float* sc = f.kind == MemberKind::kResize ? editor.Constant(inputs[2])->data<float>() : nullptr;
      const bool upsample = sc != nullptr && IsWholeUpsample(saved, sc[2], sc[3]);
      if (sc != nullptr && !upsample)
        inputs[2] = editor.AddInitializer(inputs[2] + "_nchwc",
                                          MakeFloatTensor(DataType::kFloat, {5}, {1.0, 1.0, sc[2], sc[3], 1.0}));
      ir::Node* member =
          upsample  ? AddFusedNode(editor, "NchwcUpsample", kOnyxDomain, 1, {inputs[0]}, {blocked.at(out)})
          : onnx_op ? AddFusedNode(editor, op, "", saved.opset, inputs, {blocked.at(out)})
                    : AddFusedNode(editor, op, kOnyxDomain, 1, inputs, {blocked.at(out)});
      if (upsample) {
        member->attributes.push_back(IntAttr("scale_h", static_cast<int64_t>(sc[2])));
        member->attributes.push_back(IntAttr("scale_w", static_cast<int64_t>(sc[3])));
      } else {
        for (const auto& a : saved.attributes)
          if (a.name != "storage_order") member->attributes.push_back(a.Clone());
      }
      if (f.kind == MemberKind::kConcat)
        for (auto& a : member->attributes)
          if (a.name == "axis") a.i = 1;  // the blocked tensors have rank 5
      if (f.kind != MemberKind::kConv) ++ctx.counts[(upsample ? std::string("NchwcUpsample") : op) + " blocked"];
      if (plain_x) {
        member->attributes.push_back(IntAttr("plain_input", 1));
        member->attributes.push_back(IntAttr("block", block));
        ++ctx.counts["NchwcConv plain input"];
      }
      if (read_plain.count(out)) {
        ir::Node* from = AddFusedNode(editor, "ReorderFromNchwc", kOnyxDomain, 1, {blocked.at(out)}, {out});
        from->attributes.push_back(IntAttr("channels", f.out_channels));
        ++ctx.counts["ReorderFromNchwc"];
      }
    }
  }
};

// Pass order: after every conv fusion (BatchNorm, Mul/Add, activations, SiLU/HardSwish).
ONYX_REGISTER_PASS(NchwcLayout, 900);

}  // namespace
}  // namespace onyx
