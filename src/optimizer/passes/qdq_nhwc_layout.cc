// QdqNhwcLayout (level "all", CPU, sessions only): regions of int8 QLinearConvs run
// channels-last, as com.microsoft.QLinearConv channels_last = 1, with one Transpose at each end
// of a region instead of the NCHW layout throughout (ONNX Runtime's NhwcTransformer does the same
// for its QLinearConv).
//
// Only convs the direct channels-last kernel runs (linalg/q8_conv_nhwc.h: AVX-512 VNNI, weights
// symmetric as stored, input channels a multiple of 4): it reads each pixel's C codes in place,
// where the NCHW kernel gathers 32-pixel panels of the implicit im2col. On ResNet-50's convs
// (1 thread, Zen 4) it took 0.80-0.98x the NCHW kernel's time except 64 -> 256 1x1 on 56x56
// (1.2x); docs/fusions.md. The CPU decides, so the pass runs only as sessions optimize
// (OptimizerOptions::require_kernels), as NchwcLayout.
//
// Members (rank-4 images of known channels; symbolic batch and maps allowed):
//   QLinearConv, 2-D, group 1, constant W and zero points as above
//                                      -> com.microsoft.QLinearConv channels_last = 1
//   com.microsoft.QLinearAdd / QLinearMul of two images of the same dims (no broadcast), and
//   com.microsoft.QLinearSigmoid / QLinearLeakyRelu, com.onyx.QLinearSiLU / QLinearLookup of an image, all
//   reading members' outputs
//                                      -> the same op on the channels-last images (per element)
//   com.microsoft.QLinearConcat of members' outputs on axis 1 -> the same op on axis 3
//   com.microsoft.QLinearGlobalAveragePool of a member's output -> channels_last = 1
//   Resize (opset 11+), mode nearest, of a member's output, constant scales or sizes
//                                      -> the same op with them permuted to [N, H, W, C]
// (YOLO's SiLU, QLinearSiLU or QLinearSigmoid then QLinearMul, and its Concats join its convs
// into regions.)
// Two members belong to one region when one reads the other's output as its image. A region of
// at least kMinRegionConvs convs, and kConvsPerTranspose convs per Transpose it needs, is
// rewritten: each outside value it reads as an image gets one
// Transpose to [N, H, W, C] (shared by every reader), and each of its values read outside the
// region (other nodes, graph outputs, subgraphs) gets one Transpose back under its name.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "linalg/q8_conv_nhwc.h"
#include "linalg/q8_dwconv_nhwc.h"
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"

namespace onyx {
namespace {

using namespace fusion;

// Two transposes cost what a couple of small convs gain.
constexpr size_t kMinRegionConvs = 3;
// Convs a region needs per Transpose at its ends: ResNet-50 is one region of 52 convs and 2
// Transposes; MobileNetV2's pointwise convs form regions broken by every depthwise conv (30 convs,
// 30 Transposes), which ran 1.5x slower than NCHW.
constexpr size_t kConvsPerTranspose = 4;

// Output pixels from which a conv of few filters stays NCHW (see MatchConv).
constexpr int64_t kLargeImage = 28 * 28;

// kPointwise: an op per element (one image or two of the same dims), layout-agnostic.
// Axis d of [N, H, W, C] is axis kToNhwc[d] of [N, C, H, W].
constexpr size_t kToNhwc[4] = {0, 2, 3, 1};

enum class Kind { kConv, kPointwise, kConcat, kGlobalPool, kResize };

bool IsInt8(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

// Known rank-4 dims of a uint8 / int8 value, else null.
const std::vector<Dim>* Int8Image(GraphEditor& editor, const std::string& value) {
  if (value.empty() || !IsInt8(ElemType(editor, value))) return nullptr;
  const auto* d = editor.DimsOf(value);
  return d != nullptr && d->size() == 4 ? d : nullptr;
}

bool MatchConv(GraphEditor& editor, const ir::Node* n) {
  if (!IsOnnxOp(n, "QLinearConv", 10) || n->outputs.size() != 1 || n->inputs.size() < 8 || n->inputs.size() > 9)
    return false;
  for (size_t i = 0; i < 8; ++i)
    if (n->inputs[i].empty()) return false;
  const Tensor* w = editor.Constant(n->inputs[3]);
  if (w == nullptr || w->rank() != 4 || !IsInt8(w->dtype())) return false;
  const ir::Attribute* g = n->FindAttribute("group");
  const int64_t group = g != nullptr ? g->i : 1;
  // Depthwise convs (group = C = M) join where their channels-last kernel is fast (q8_dwconv_nhwc.h),
  // from 64 channels (its step: MobileNetV2's 32 at 112x112 took 145 us against 79 NCHW); other
  // group convs stay NCHW.
  const bool depthwise = group > 1 && w->dim(1) == 1 && w->dim(0) == group && group >= 64 &&
                         linalg::Q8DepthwiseNhwcFast();
  if (group != 1 && !depthwise) return false;

  const auto* xd = Int8Image(editor, n->inputs[0]);
  const auto* yd = Int8Image(editor, n->outputs[0]);
  if (xd == nullptr || yd == nullptr || !DimIs((*xd)[1], w->dim(1) * group) || !DimIs((*yd)[1], w->dim(0)))
    return false;
  if (!depthwise && w->dim(1) % 4 != 0) return false;
  // Fewer than 32 filters fill under half of the direct kernel's 64-filter panels, a loss that
  // grows with the image: MobileNetV2's 1x1 convs to 16 and 24 channels at 112x112 and 56x56 took
  // 2-3x their NCHW time (at 7x7 it is a few us, less than a Transpose where they break a region).
  const Dim& oh = (*yd)[2];
  const Dim& ow = (*yd)[3];
  if (w->dim(0) < 32 && (!oh.known() || !ow.known() || oh.value * ow.value >= kLargeImage)) return false;
  // Symmetric weights as stored: int8 with zero point 0, uint8 with 128, per tensor or channel.
  const Tensor* wz = editor.Constant(n->inputs[5]);
  if (wz == nullptr || wz->dtype() != w->dtype() || (wz->size() != 1 && wz->size() != w->dim(0))) return false;
  const auto* z = static_cast<const uint8_t*>(wz->raw_data());
  const uint8_t symmetric = w->dtype() == DataType::kInt8 ? 0 : 128;
  return std::all_of(z, z + wz->size(), [&](uint8_t v) { return v == symmetric; });
}

// Nearest Resize picks each output's source per axis, from that axis's scale or size alone (no
// roi: tf_crop_and_resize excluded), so permuting the image and them permutes its output.
bool MatchResize(GraphEditor& editor, const ir::Node* n) {
  if (!IsOnnxOp(n, "Resize", 11) || n->outputs.size() != 1 || n->inputs.size() < 3) return false;
  const ir::Attribute* mode = n->FindAttribute("mode");
  const ir::Attribute* coord = n->FindAttribute("coordinate_transformation_mode");
  const ir::Attribute* policy = n->FindAttribute("keep_aspect_ratio_policy");
  if ((mode != nullptr && mode->s != "nearest") || (coord != nullptr && coord->s == "tf_crop_and_resize") ||
      (policy != nullptr && policy->s != "stretch") || n->FindAttribute("axes") != nullptr)
    return false;
  if (Int8Image(editor, n->inputs[0]) == nullptr || Int8Image(editor, n->outputs[0]) == nullptr) return false;
  const bool sized = n->inputs.size() > 3 && !n->inputs[3].empty();
  const Tensor* c = editor.Constant(n->inputs[sized ? 3 : 2]);
  return (sized || !n->inputs[2].empty()) && c != nullptr && c->size() == 4 &&
         c->dtype() == (sized ? DataType::kInt64 : DataType::kFloat) &&
         (!sized || n->inputs[2].empty() || (editor.Constant(n->inputs[2]) != nullptr &&
                                             editor.Constant(n->inputs[2])->size() == 0));
}

std::optional<Kind> Match(GraphEditor& editor, const ir::Node* n) {
  if (MatchConv(editor, n)) return Kind::kConv;
  if (MatchResize(editor, n)) return Kind::kResize;
  if (n->domain == kOnyxDomain && (n->op_type == "QLinearSiLU" || n->op_type == "QLinearLookup") &&
      n->outputs.size() == 1 && !n->inputs.empty()) {
    const auto* x = Int8Image(editor, n->inputs[0]);
    const auto* y = Int8Image(editor, n->outputs[0]);
    if (x != nullptr && y != nullptr && SameDims(*x, *y)) return Kind::kPointwise;
    return std::nullopt;
  }
  if (n->domain != kMsDomain || n->outputs.size() != 1) return std::nullopt;
  if ((n->op_type == "QLinearAdd" || n->op_type == "QLinearMul") && (n->inputs.size() == 8 || n->inputs.size() == 7)) {
    const auto* a = Int8Image(editor, n->inputs[0]);
    const auto* b = Int8Image(editor, n->inputs[3]);
    const auto* y = Int8Image(editor, n->outputs[0]);
    if (a != nullptr && b != nullptr && y != nullptr && SameDims(*a, *b) && SameDims(*a, *y)) return Kind::kPointwise;
    return std::nullopt;
  }
  if ((n->op_type == "QLinearSigmoid" || n->op_type == "QLinearLeakyRelu") &&
      (n->inputs.size() == 4 || n->inputs.size() == 5)) {
    const auto* x = Int8Image(editor, n->inputs[0]);
    const auto* y = Int8Image(editor, n->outputs[0]);
    if (x != nullptr && y != nullptr && SameDims(*x, *y)) return Kind::kPointwise;
    return std::nullopt;
  }
  if (n->op_type == "QLinearConcat" && n->inputs.size() >= 5 && (n->inputs.size() - 2) % 3 == 0) {
    const ir::Attribute* axis = n->FindAttribute("axis");
    if (axis == nullptr || (axis->i != 1 && axis->i != -3) || Int8Image(editor, n->outputs[0]) == nullptr)
      return std::nullopt;
    for (size_t i = 2; i < n->inputs.size(); i += 3)
      if (Int8Image(editor, n->inputs[i]) == nullptr) return std::nullopt;
    return Kind::kConcat;
  }
  if (n->op_type == "QLinearGlobalAveragePool" && Int8Image(editor, n->inputs[0]) != nullptr) {
    const ir::Attribute* cl = n->FindAttribute("channels_last");
    if (cl == nullptr || cl->i == 0) return Kind::kGlobalPool;
  }
  return std::nullopt;
}

// Inputs of a member that are images (channels-last inside the region).
std::vector<size_t> ImageInputs(const ir::Node* n, Kind kind) {
  if (kind == Kind::kConcat) {
    std::vector<size_t> images;
    for (size_t i = 2; i < n->inputs.size(); i += 3) images.push_back(i);
    return images;
  }
  if (n->op_type == "QLinearAdd" || n->op_type == "QLinearMul") return {0, 3};
  return {0};
}

class QdqNhwcLayout final : public Pass {
 public:
  std::string name() const override { return "QdqNhwcLayout"; }
  OptLevel level() const override { return OptLevel::kAll; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    // The kernel the rewrite is for runs on this CPU only where the session runs.
    if (!ctx.options.require_kernels || !linalg::Q8ConvNhwcAvailable()) return 0;
    if (!CanRun(ctx, "QLinearConv", kMsDomain, 1) || !CanRun(ctx, "Transpose", "", 13)) return 0;
    GraphEditor& editor = ctx.editor;
    std::vector<ir::Node*> order;
    std::unordered_map<ir::Node*, Kind> kinds;
    for (ir::Node* n : editor.Nodes()) {
      const auto k = Match(editor, n);
      if (!k) continue;
      order.push_back(n);
      kinds[n] = *k;
    }
    // Other members join only on a member's output (a binary op or concat on at least one, its
    // other images transposed in): transposing every image in for them would cost what they save
    // (until none is left: each drop can orphan another's input).
    for (bool changed = true; changed;) {
      changed = false;
      for (ir::Node* n : order) {
        if (kinds.at(n) == Kind::kConv) continue;
        const auto images = ImageInputs(n, kinds.at(n));
        if (std::none_of(images.begin(), images.end(), [&](size_t i) {
              ir::Node* p = editor.Producer(n->inputs[i]);
              return p != nullptr && kinds.count(p);
            })) {
          kinds.erase(n);
          changed = true;
        }
      }
      std::erase_if(order, [&](ir::Node* n) { return !kinds.count(n); });
    }
    NodeSets regions;
    for (ir::Node* n : order) regions.parent[n] = n;
    for (ir::Node* n : order)
      for (size_t i : ImageInputs(n, kinds.at(n))) {
        ir::Node* p = editor.Producer(n->inputs[i]);
        if (p != nullptr && kinds.count(p)) regions.Join(n, p);
      }
    std::unordered_map<ir::Node*, std::vector<ir::Node*>> members;
    for (ir::Node* n : order) members[regions.Find(n)].push_back(n);

    int rewrites = 0;
    std::unordered_map<std::string, std::string> transposed_in;  // outside value -> its NHWC form
    for (ir::Node* n : order) {
      auto it = members.find(regions.Find(n));  // each region once, at its first node
      if (it == members.end()) continue;
      const std::vector<ir::Node*> region = std::move(it->second);
      members.erase(it);
      const auto convs =
          std::count_if(region.begin(), region.end(), [&](ir::Node* m) { return kinds.at(m) == Kind::kConv; });
      if (convs < static_cast<std::ptrdiff_t>(kMinRegionConvs)) continue;
      if (kConvsPerTranspose * Transposes(editor, region, kinds) > static_cast<size_t>(convs)) continue;
      RewriteRegion(ctx, region, kinds, transposed_in);
      ++ctx.counts["NHWC int8 region"];
      ctx.counts["QLinearConv channels_last"] += static_cast<int>(convs);
      ++rewrites;
    }
    return rewrites;
  }

 private:
  static ir::Node* AddTranspose(GraphEditor& editor, int opset, const std::string& in, const std::string& out,
                                std::vector<int64_t> perm) {
    ir::Node* t = AddFusedNode(editor, "Transpose", "", opset, {in}, {out});
    ir::Attribute a{"perm", ir::AttrType::kInts};
    a.ints = std::move(perm);
    t->attributes.push_back(std::move(a));
    return t;
  }

  // The region's outputs that are read as NCHW: by other nodes (subgraphs included), as graph
  // outputs, or by a member in another slot than its image.
  static std::set<std::string> ReadNchw(GraphEditor& editor, const std::vector<ir::Node*>& region,
                                        const std::unordered_map<ir::Node*, Kind>& kinds) {
    const std::unordered_set<ir::Node*> inside(region.begin(), region.end());
    std::set<std::string> read_nchw;
    for (ir::Node* n : region) {
      const std::string& out = n->outputs[0];
      bool plain = editor.IsGraphOutput(out);
      for (ir::Node* reader : editor.Consumers(out)) {
        if (!inside.count(reader)) {
          plain = true;
          continue;
        }
        const auto images = ImageInputs(reader, kinds.at(reader));
        for (size_t i = 0; i < reader->inputs.size(); ++i)
          if (reader->inputs[i] == out && std::find(images.begin(), images.end(), i) == images.end()) plain = true;
      }
      if (plain) read_nchw.insert(out);
    }
    return read_nchw;
  }

  // The Transposes a region needs: one per outside image it reads, one per output read as NCHW.
  static size_t Transposes(GraphEditor& editor, const std::vector<ir::Node*>& region,
                           const std::unordered_map<ir::Node*, Kind>& kinds) {
    const std::unordered_set<ir::Node*> inside(region.begin(), region.end());
    std::set<std::string> outside;
    for (ir::Node* n : region)
      for (size_t i : ImageInputs(n, kinds.at(n))) {
        ir::Node* p = editor.Producer(n->inputs[i]);
        if (p == nullptr || !inside.count(p)) outside.insert(n->inputs[i]);
      }
    return outside.size() + ReadNchw(editor, region, kinds).size();
  }

  // Rewrites one region (its nodes in topological order).
  static void RewriteRegion(PassContext& ctx, const std::vector<ir::Node*>& region,
                            const std::unordered_map<ir::Node*, Kind>& kinds,
                            std::unordered_map<std::string, std::string>& transposed_in) {
    GraphEditor& editor = ctx.editor;
    // A Transpose's opset: the default domain's, as the region's convs were written for.
    int opset = 13;
    for (ir::Node* n : region)
      if (kinds.at(n) == Kind::kConv) opset = std::max(opset, n->opset);
    // Channels-last names of the region's outputs, and which of them are also read as NCHW.
    std::unordered_map<std::string, std::string> nhwc;
    for (ir::Node* n : region) nhwc[n->outputs[0]] = editor.UniqueName(n->outputs[0] + "_nhwc");
    const std::set<std::string> read_nchw = ReadNchw(editor, region, kinds);
    auto nhwc_input = [&](const std::string& value) {
      auto found = nhwc.find(value);
      if (found != nhwc.end()) return found->second;
      found = transposed_in.find(value);
      if (found != transposed_in.end()) return found->second;
      const std::string name = editor.UniqueName(value + "_nhwc");
      AddTranspose(editor, opset, value, name, {0, 2, 3, 1});
      ++ctx.counts["Transpose to NHWC"];
      transposed_in[value] = name;
      return name;
    };
    for (ir::Node* n : region) {
      const ir::Node saved = *n;
      const Kind kind = kinds.at(n);
      editor.RemoveNode(n);
      std::vector<std::string> inputs = saved.inputs;
      for (size_t i : ImageInputs(&saved, kind)) inputs[i] = nhwc_input(inputs[i]);
      if (kind == Kind::kResize) {  // its scales or sizes as [N, H, W, C]
        const size_t at = inputs.size() > 3 && !inputs[3].empty() ? 3 : 2;
        Tensor permuted = editor.Constant(inputs[at])->Clone();
        auto* bytes = static_cast<uint8_t*>(permuted.raw_data());
        const auto all = static_cast<size_t>(permuted.byte_size()), item = all / 4;
        const std::vector<uint8_t> nchw(bytes, bytes + all);
        for (size_t d = 0; d < 4; ++d) std::copy_n(nchw.data() + kToNhwc[d] * item, item, bytes + d * item);
        inputs[at] = editor.AddInitializer(inputs[at] + "_nhwc", std::move(permuted));
      }
      const std::string& out = saved.outputs[0];
      // QLinearConv moves to com.microsoft (version 1); the other ops keep their domain and opset.
      const int node_opset = kind == Kind::kConv ? 1 : saved.opset;
      const std::string domain = kind == Kind::kConv ? std::string(kMsDomain) : saved.domain;
      ir::Node* member = AddFusedNode(editor, saved.op_type, domain, node_opset, inputs, {nhwc.at(out)});
      for (const auto& a : saved.attributes)
        if (a.name != "channels_last" && !(kind == Kind::kConcat && a.name == "axis"))
          member->attributes.push_back(a.Clone());
      if (kind == Kind::kConv || kind == Kind::kGlobalPool) member->attributes.push_back(IntAttr("channels_last", 1));
      if (kind == Kind::kConcat) member->attributes.push_back(IntAttr("axis", 3));  // C of [N, H, W, C]

      if (read_nchw.count(out)) {
        AddTranspose(editor, opset, nhwc.at(out), out, {0, 3, 1, 2});
        ++ctx.counts["Transpose to NCHW"];
      }
    }
  }
};

// Pass order: after the QDQ fusions that make QLinearConv / QLinearAdd / QLinearGlobalAveragePool.
ONYX_REGISTER_PASS(QdqNhwcLayout, 905);

}  // namespace
}  // namespace onyx
