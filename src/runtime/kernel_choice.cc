#include "runtime/kernel_choice.h"

#include <set>
#include <unordered_set>

#include "linalg/conv.h"
#include "linalg/gemm.h"
#include "providers/cpu/kernels/quantization/qdq_neighbours.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// An initializer no feed can replace (what a kernel gets as a constant input).
const Tensor* Constant(const ir::Graph& graph, const std::string& name) {
  if (name.empty() || graph.IsGraphInput(name)) return nullptr;
  return graph.FindInitializer(name);
}

// A constant the session let go after kernels pre-packed it (no kernel reads it at run time):
// neither fed, nor an initializer any more, nor made by a node.
bool ReleasedConstant(const ir::Graph& graph, const std::string& name, GraphFacts& facts) {
  if (name.empty() || graph.IsGraphInput(name) || graph.FindInitializer(name) != nullptr) return false;
  const auto& made = facts.Get<std::unordered_set<std::string>>("values made by nodes", [&graph] {
    std::unordered_set<std::string> values;
    for (const auto& n : graph.nodes) values.insert(n->outputs.begin(), n->outputs.end());
    return values;
  });
  return made.count(name) == 0;
}

const TypeInfo* TypeOf(const ir::Graph& graph, const TypeMap& types, const std::string& name) {
  auto it = types.find(name);
  if (it != types.end()) return it->second.get();
  for (const auto& in : graph.inputs)
    if (in.name == name) return in.type.get();
  auto vt = graph.value_types.find(name);
  return vt == graph.value_types.end() ? nullptr : vt->second.get();
}

std::vector<int64_t> Ints(const ir::Node& n, const char* name) {
  const ir::Attribute* a = n.FindAttribute(name);
  return a != nullptr ? a->ints : std::vector<int64_t>{};
}

// The product of dims [from, to) of a value when all are known, else -1.
int64_t StaticPlane(const TypeInfo* t, size_t from, size_t drop_last) {
  if (t == nullptr || !t->shape) return -1;
  const auto& d = *t->shape;
  if (d.size() < from + drop_last) return -1;
  int64_t plane = 1;
  for (size_t i = from; i + drop_last < d.size(); ++i) {
    if (!d[i].known()) return -1;
    plane *= d[i].value;
  }
  return plane;
}

// The linalg shape of a convolution's weight and attributes (as the kernels build it), with
// explicit pads (they only decide whether a 1x1 GEMM reads the input as is).
linalg::Conv2dShape WeightShape(const ir::Node& n, const Shape& w) {
  linalg::Conv2dShape s;
  const ir::Attribute* g = n.FindAttribute("group");
  s.group = g != nullptr ? g->i : 1;
  s.out_channels = w[0];
  s.in_channels = w[1] * s.group;
  s.kernel_w = w.back();
  s.kernel_h = w.size() == 4 ? w[2] : 1;
  const size_t r = w.size() - 2;
  const auto strides = Ints(n, "strides"), dilations = Ints(n, "dilations"), pads = Ints(n, "pads");
  auto at = [&](const std::vector<int64_t>& v, size_t d) { return v.size() == r ? v[d] : 1; };
  s.stride_w = at(strides, r - 1);
  s.dilation_w = at(dilations, r - 1);
  if (r == 2) {
    s.stride_h = at(strides, 0);
    s.dilation_h = at(dilations, 0);
  }
  if (pads.size() == 2 * r) {
    s.pad_left = pads[r - 1];
    s.pad_right = pads[2 * r - 1];
    if (r == 2) s.pad_top = pads[0], s.pad_bottom = pads[2];
  }
  return s;
}

std::string Channels(const linalg::Conv2dShape& s) {
  return std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + ", " + std::to_string(s.in_channels) +
         " -> " + std::to_string(s.out_channels) + " channels, group " + std::to_string(s.group);
}

std::string EngineIsa(linalg::ConvAlgorithm a) {
  return a == linalg::ConvAlgorithm::kGemm ? linalg::SgemmKernelName() : linalg::ConvIsa();
}

std::string ConvText(const ir::Node& node, const ir::Graph& graph, const TypeMap& types, GraphFacts& facts) {
  const TypeInfo* x = TypeOf(graph, types, node.inputs.empty() ? "" : node.inputs[0]);
  if (x != nullptr && x->elem_type == DataType::kDouble)
    return "im2col and row loops in double, scalar (double convolutions have one path)";
  const Tensor* w = Constant(graph, node.inputs.size() > 1 ? node.inputs[1] : "");
  const TypeInfo* w_type = TypeOf(graph, types, node.inputs.size() > 1 ? node.inputs[1] : "");
  Shape w_shape;
  if (w != nullptr) {
    w_shape = w->shape();
  } else if (w_type != nullptr && w_type->shape) {
    for (const Dim& d : *w_type->shape) {
      if (!d.known()) return "chosen at each run from W's shape (W is not a constant and its shape is not known)";
      w_shape.push_back(d.value);
    }
  }
  if (!w_shape.empty() && w_shape.size() != 3 && w_shape.size() != 4)
    return "gemm im2col on " + linalg::SgemmKernelName() + " (" + std::to_string(w_shape.size() - 2) +
           "-D convolutions take im2col + GEMM)";
  if (w_shape.empty()) return "chosen at each run from W's shape (its rank is not known)";
  const linalg::Conv2dShape s = WeightShape(node, w_shape);
  const bool exact = linalg::WinogradConv::Applicable(s) && IsBetweenQuantizeNodes(graph, node, &facts);
  const linalg::ConvAlgorithm forced = linalg::ConvAlgorithmFromEnvironment();
  if (w == nullptr) {
    // The kernel chooses per run, without an output size.
    const linalg::ConvChoice c = linalg::ChooseConvAlgorithm(forced, s, exact);
    return std::string(linalg::ConvAlgorithmName(c.algorithm, s)) + " on " + EngineIsa(c.algorithm) + " (" + c.why +
           "; " + Channels(s) + "); W is not a constant, so the kernel applies this rule at each run";
  }
  const int64_t out_plane = StaticPlane(TypeOf(graph, types, node.outputs.empty() ? "" : node.outputs[0]), 2, 0);
  const linalg::ConvChoice c = linalg::ChooseConvAlgorithm(forced, s, exact, out_plane);
  return std::string(linalg::ConvAlgorithmName(c.algorithm, s)) + " on " + EngineIsa(c.algorithm) + " (" + c.why +
         "; " + Channels(s) + "), prepared when the session was made";
}

std::string NchwcText(const ir::Node& node, const ir::Graph& graph, const TypeMap& types, GraphFacts& facts) {
  const std::string& w_name = node.inputs.size() > 1 ? node.inputs[1] : "";
  Shape w_shape;
  if (const Tensor* w = Constant(graph, w_name)) {
    w_shape = w->shape();
  } else if (const TypeInfo* t = ReleasedConstant(graph, w_name, facts) ? TypeOf(graph, types, w_name) : nullptr;
             t != nullptr && t->shape) {
    // Packed and let go when the session was made: its declared type still tells the shape.
    for (const Dim& d : *t->shape) w_shape.push_back(d.value);
  }
  if (w_shape.size() != 3 && w_shape.size() != 4) return "";  // the kernel refuses it
  linalg::Conv2dShape s = WeightShape(node, w_shape);
  const ir::Attribute* plain = node.FindAttribute("plain_input");
  const bool plain_input = plain != nullptr && plain->i != 0;
  const bool exact = !plain_input && linalg::WinogradConv::Applicable(s) && IsBetweenQuantizeNodes(graph, node, &facts);
  const linalg::ConvChoice c = linalg::ChooseNchwcAlgorithm(s, plain_input, exact);
  const std::string isa = linalg::ConvIsa();
  std::string text = std::string(linalg::ConvAlgorithmName(c.algorithm, s)) + " on " + isa + " (" + c.why + "; " +
                     Channels(s) + ")";
  if (c.algorithm != linalg::ConvAlgorithm::kWinograd) return text;
  // Winograd gives way to direct on small output maps with many weights: when the session is made
  // where the map is static, else per run.
  const int64_t out_plane = StaticPlane(TypeOf(graph, types, node.outputs.empty() ? "" : node.outputs[0]), 2, 1);
  s.out_h = out_plane;
  s.out_w = 1;
  if (s.in_channels * s.out_channels < linalg::kNchwcWinogradMinDirectWeights) return text;
  if (out_plane > 0) {
    if (!linalg::NchwcRunsDirectForSmallPlane(s)) return text;
    return "direct NCHWc on " + isa + " (a Winograd layer whose output map of " + std::to_string(out_plane) +
           " pixels is at most 49, with C * M >= 2^17 weights; " + Channels(s) + ")";
  }
  return text + "; at run time direct NCHWc instead when the output map is at most 49 pixels (C * M >= 2^17)";
}

std::string GemmText(const ir::Node& node, const ir::Graph& graph, const TypeMap& types, GraphFacts& facts) {
  const bool is_gemm = node.op_type == "Gemm";
  const ir::Attribute* ta = node.FindAttribute("transA");
  const ir::Attribute* tb = node.FindAttribute("transB");
  const bool trans_a = is_gemm && ta != nullptr && ta->i != 0, trans_b = is_gemm && tb != nullptr && tb->i != 0;
  const std::string& b_name = node.inputs.size() > 1 ? node.inputs[1] : "";
  const Tensor* b = Constant(graph, b_name);
  // A released B was packed (the kernel reads only its packed form).
  if ((b != nullptr && b->dtype() == DataType::kFloat && b->rank() == 2 && b->size() > 0) ||
      ReleasedConstant(graph, b_name, facts))
    return "gemm packed B on " + linalg::SgemmKernelName() + " (B is a constant float matrix, packed when the session "
           "was made)";
  const TypeInfo* a_type = TypeOf(graph, types, node.inputs.empty() ? "" : node.inputs[0]);
  const DataType dtype = a_type != nullptr ? a_type->elem_type : DataType::kUndefined;
  if (dtype == DataType::kDouble) return "row loops in double, scalar";
  if (dtype == DataType::kInt32 || dtype == DataType::kInt64 || dtype == DataType::kUInt32 || dtype == DataType::kUInt64)
    return "row loops in 64-bit integers, scalar";
  const TypeInfo* b_type = TypeOf(graph, types, node.inputs.size() > 1 ? node.inputs[1] : "");
  int64_t n = -1;
  if (b_type != nullptr && b_type->shape && !b_type->shape->empty()) {
    const auto& d = *b_type->shape;
    const Dim& nd = is_gemm ? d[trans_b ? 0 : d.size() - 1] : (d.size() == 1 ? Dim{1, ""} : d.back());
    if (nd.known()) n = nd.value;
  }
  const std::string rule = "few columns when N <= 4" + std::string(is_gemm ? " and A is not transposed" : "") +
                           ", else the blocked microkernel";
  if (n < 0) return "chosen per call from N (" + rule + "): " + linalg::SgemmIsa() + " / " + linalg::SgemmKernelName();
  // k > 0 is taken for granted: an empty product computes nothing.
  if (linalg::SgemmTakesFewColumnsPath(trans_a, n, 1))
    return "gemm few columns (N <= 4) on " + linalg::SgemmIsa() + " (N = " + std::to_string(n) + "; " + rule + ")";
  return "gemm blocked on " + linalg::SgemmKernelName() + " (N = " + std::to_string(n) + "; " + rule + ")";
}

}  // namespace

std::string KernelChoiceText(const ir::Node& node, const ir::Graph& graph, const TypeMap& types,
                             GraphFacts& facts) {
  const bool conv_domain = node.domain.empty() || node.domain == "com.microsoft" || node.domain == "com.onyx";
  if ((node.op_type == "Conv" && node.domain.empty()) || (node.op_type == "FusedConv" && conv_domain))
    return ConvText(node, graph, types, facts);
  if (node.op_type == "NchwcConv" && node.domain == "com.onyx") return NchwcText(node, graph, types, facts);
  if ((node.op_type == "MatMul" || node.op_type == "Gemm") && node.domain.empty())
    return GemmText(node, graph, types, facts);
  static const std::set<std::string> gemm_ops = {"FusedMatMul", "Attention", "MultiHeadAttention"};
  if (gemm_ops.count(node.op_type)) return "GEMM microkernel " + linalg::SgemmKernelName();
  return "";
}

}  // namespace onyx
