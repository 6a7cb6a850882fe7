// Helpers the fusion passes share: constants (initializers or Constant nodes) as numbers,
// element types and dims of values, use checks for intermediate values, attribute makers and
// the creation of fused nodes with their domain's opset.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "optimizer/graph_editor.h"
#include "optimizer/pass.h"

namespace onyx::fusion {

inline constexpr const char* kMsDomain = "com.microsoft";
// Onyx's own fused ops (only created at OptLevel::kAll: saved models need Onyx to run).
inline constexpr const char* kOnyxDomain = "com.onyx";

// A constant value: an initializer no feed can override, or the output of a Constant node.
std::optional<Tensor> ConstValue(GraphEditor& editor, const std::string& value);
// A floating-point or integer constant's elements as doubles.
std::optional<std::vector<double>> ConstDoubles(GraphEditor& editor, const std::string& value);
// A constant with exactly one element.
std::optional<double> ConstScalar(GraphEditor& editor, const std::string& value);
// Whether a and b name the same value, or constant one-element tensors of one dtype with the
// same bytes (two absent names compare equal; an absent and a present one do not).
bool SameConstScalar(GraphEditor& editor, const std::string& a, const std::string& b);
// Whether `value` is a one-element constant within relative tolerance `rel_tol` of `expected`.
bool IsConstNear(GraphEditor& editor, const std::string& value, double expected, double rel_tol = 1e-4);
// The rank of a constant (or of any value with a known rank); -1 when unknown.
int64_t RankOf(GraphEditor& editor, const std::string& value);

// The value's static element type, kUndefined when unknown.
DataType ElemType(GraphEditor& editor, const std::string& value);
bool TypeIn(DataType t, std::initializer_list<DataType> allowed);
// A value's element type (kUndefined) and dims (null) in a GraphEditor::TypeSnapshot, taken before
// a pass's first rewrite: fusions keep the types of the values they leave, and asking the editor
// after each rewrite infers the whole graph anew (quadratic in the rewrites).
DataType SnapshotElemType(const TypeMap& types, const std::string& value);
const std::vector<Dim>* SnapshotDims(const TypeMap& types, const std::string& value);

// Dims equal as far as can be proven: known and equal, or the same named symbol.
bool SameDim(const Dim& a, const Dim& b);
bool SameDims(const std::vector<Dim>& a, const std::vector<Dim>& b);
bool DimIs(const Dim& d, int64_t value);
// A value's last dim: from its inferred dims, or, when its rank is unknown, from the constant
// 2-D weight of the MatMul/Gemm that made it (whatever A's shape, the result ends in N).
std::optional<Dim> LastDim(GraphEditor& editor, const std::string& value);

// Whether `node` is `op_type` in the default domain at opset `min_opset` or later (and makes its
// first output).
bool IsOnnxOp(const ir::Node* node, const char* op_type, int min_opset = 1);
// The index of `value` among a two-input node's inputs, and of the other input; -1 if absent.
int InputIndex(const ir::Node& node, const std::string& value);
const std::string& OtherInput(const ir::Node& node, const std::string& value);

// Whether every reader of `value` is in `allowed` and it is not a graph output (an
// intermediate value a fusion may remove).
bool OnlyReadBy(GraphEditor& editor, const std::string& value, const std::vector<ir::Node*>& allowed);
// The single node reading `value`, when it is read exactly once and is not a graph output.
ir::Node* SoleReader(GraphEditor& editor, const std::string& value);
// Whether no output beyond the first is read (optional outputs such as LayerNormalization's
// Mean or BatchNormalization's running statistics).
bool OnlyFirstOutputUsed(GraphEditor& editor, const ir::Node& node);

ir::Attribute IntAttr(const std::string& name, int64_t v);
ir::Attribute FloatAttr(const std::string& name, float v);
ir::Attribute StringAttr(const std::string& name, const std::string& v);
ir::Attribute FloatsAttr(const std::string& name, std::vector<float> v);

// A tensor of `dtype` (float, double, float16 or bfloat16) holding `values` (rounded once).
Tensor MakeFloatTensor(DataType dtype, const Shape& shape, const std::vector<double>& values);

// Whether a fused node of this op may be created: a provider of the session has a kernel for
// it, or the options do not require one (offline optimization).
bool CanRun(const PassContext& ctx, const std::string& op_type, const std::string& domain, int opset);

// Adds a fused node; `opset` is the version of its domain the node is written for (1 for
// com.microsoft, the model's default-domain opset for ONNX ops). Counted in the pass report
// under `op_type`.
ir::Node* AddFusedNode(GraphEditor& editor, const std::string& op_type, const std::string& domain, int opset,
                       std::vector<std::string> inputs, std::vector<std::string> outputs);

// Removes a matched pattern's nodes; the fused node added next takes over the name of the
// pattern's result, so its readers and graph outputs keep their names.
void RemoveAll(GraphEditor& editor, const std::vector<ir::Node*>& nodes);

// A constant that broadcasts against a Conv output of rank `rank` with `channels` output
// channels along the channel axis only (a scalar, [M,1,1], [1,M,1,1], ...), expanded to one
// value per channel; nullopt for anything else (which could change the output's shape).
std::optional<std::vector<double>> PerChannelValues(GraphEditor& editor, const std::string& value, int64_t rank,
                                                    int64_t channels);

// A Conv's constant weights, a scale per output channel to fold into them, and its bias (zeros
// when absent) as doubles: the folds are per-channel scales, so the weights are kept as they
// are (not copied as doubles, twice their size) until SetConvParams writes W[m] * scale[m].
// Float, double and float16 weights.
struct ConvParams {
  Tensor w;
  std::vector<double> scale;  // one per output channel, 1 until a fold changes it
  std::vector<double> bias;
  int64_t channels = 0;  // output channels, W's dim 0

  // The sum of each output channel's weights in double, as they are (without `scale`).
  std::vector<double> WeightSums() const;
};
std::optional<ConvParams> ReadConvParams(GraphEditor& editor, const ir::Node& conv);
// Gives the Conv new bias (and, when changed, weight) initializers holding `p`, the weights
// as double(W[m, ...]) * scale[m] rounded once to W's type; the old ones may be shared, so they
// are never changed in place.
void SetConvParams(GraphEditor& editor, ir::Node* conv, const ConvParams& p, const std::string& tag,
                   bool weights_changed);

// Normalizes axes for a rank; nullopt when out of range or repeated.
std::optional<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank);

// Disjoint sets of nodes (the layout passes' regions): every node is first made its own set with
// parent[n] = n; Join merges two sets, Find names a set by one of its nodes (path halving).
struct NodeSets {
  std::unordered_map<ir::Node*, ir::Node*> parent;
  ir::Node* Find(ir::Node* n) {
    while (parent[n] != n) n = parent[n] = parent[parent[n]];
    return n;
  }
  void Join(ir::Node* a, ir::Node* b) { parent[Find(a)] = Find(b); }
};

}  // namespace onyx::fusion
