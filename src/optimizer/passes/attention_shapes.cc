#include "optimizer/passes/attention_shapes.h"

#include <algorithm>
#include <set>

#include "optimizer/pattern_util.h"

namespace onyx::attention {
namespace {

constexpr int kMaxShapeDepth = 10;
constexpr int kMaxRankDepth = 2000;

std::optional<std::vector<DimExpr>> Exprs(GraphEditor& editor, const std::string& value, int depth);

// Shape(y) without needing y's rank, for indexing with non-negative indices.
struct ShapeSource {
  std::string value;
  int64_t start = 0;
};

std::optional<ShapeSource> ShapeNodeSource(GraphEditor& editor, const std::string& value) {
  ir::Node* n = editor.Producer(value);
  if (!IsOp(n, "Shape") || n->inputs.empty()) return std::nullopt;
  const int64_t start = AttrInt(*n, "start", 0);
  if (start < 0 || n->FindAttribute("end") != nullptr) return std::nullopt;
  return ShapeSource{n->inputs[0], start};
}

DimExpr DimOf(const std::string& value, int64_t axis) {
  DimExpr e;
  e.kind = DimExpr::Kind::kDim;
  e.value = value;
  e.axis = axis;
  return e;
}

DimExpr ConstExpr(int64_t v) {
  DimExpr e;
  e.constant = v;
  return e;
}

std::optional<std::vector<DimExpr>> GatherExprs(GraphEditor& editor, const ir::Node& n, int depth) {
  if (AttrInt(n, "axis", 0) != 0 || n.inputs.size() < 2) return std::nullopt;
  auto idx = ConstInts(editor, n.inputs[1]);
  if (!idx) return std::nullopt;
  std::vector<DimExpr> out;
  // Non-negative indices into Shape(y) need no rank.
  if (auto src = ShapeNodeSource(editor, n.inputs[0])) {
    bool ok = true;
    for (int64_t i : *idx) ok = ok && i >= 0;
    if (ok) {
      for (int64_t i : *idx) out.push_back(DimOf(src->value, src->start + i));
      return out;
    }
  }
  auto base = Exprs(editor, n.inputs[0], depth + 1);
  if (!base) return std::nullopt;
  const auto len = static_cast<int64_t>(base->size());
  for (int64_t i : *idx) {
    if (i < 0) i += len;
    if (i < 0 || i >= len) return std::nullopt;
    out.push_back((*base)[i]);
  }
  return out;
}

std::optional<std::vector<DimExpr>> SliceExprs(GraphEditor& editor, const ir::Node& n, int depth) {
  if (n.opset < 10 || n.inputs.size() < 3) return std::nullopt;
  auto starts = ConstInts(editor, n.inputs[1]);
  auto ends = ConstInts(editor, n.inputs[2]);
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
  if (n.inputs.size() > 3 && !n.inputs[3].empty()) {
    auto axes = ConstInts(editor, n.inputs[3]);
    if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
  }
  if (n.inputs.size() > 4 && !n.inputs[4].empty()) {
    auto steps = ConstInts(editor, n.inputs[4]);
    if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
  }
  auto base = Exprs(editor, n.inputs[0], depth + 1);
  if (!base) return std::nullopt;
  const auto len = static_cast<int64_t>(base->size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + len : v, int64_t{0}, len); };
  const int64_t b = clamp((*starts)[0]), e = clamp((*ends)[0]);
  return std::vector<DimExpr>(base->begin() + b, base->begin() + std::max(b, e));
}

std::optional<std::vector<DimExpr>> Exprs(GraphEditor& editor, const std::string& value, int depth) {
  if (depth > kMaxShapeDepth || value.empty()) return std::nullopt;
  if (auto c = ConstTensor(editor, value)) {
    if (c->rank() > 1) return std::nullopt;
    auto v = ConstInts(editor, value);
    if (!v) return std::nullopt;
    std::vector<DimExpr> out;
    for (int64_t x : *v) out.push_back(ConstExpr(x));
    return out;
  }
  ir::Node* n = editor.Producer(value);
  if (n == nullptr || !n->domain.empty() || n->outputs.empty() || n->outputs[0] != value) return std::nullopt;
  const std::string& op = n->op_type;
  if (n->inputs.empty()) return std::nullopt;
  if (op == "Concat") {
    const int64_t axis = AttrInt(*n, "axis", 0);
    if (axis != 0 && axis != -1) return std::nullopt;
    std::vector<DimExpr> out;
    for (const auto& in : n->inputs) {
      auto part = Exprs(editor, in, depth + 1);
      if (!part) return std::nullopt;
      out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    // Only between 0-D and 1-D single elements.
    auto axes = UnsqueezeAxes(editor, *n, 1);
    if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
    auto part = Exprs(editor, n->inputs[0], depth + 1);
    if (!part || part->size() != 1) return std::nullopt;
    return part;
  }
  if (op == "Cast") {
    const int64_t to = AttrInt(*n, "to", 0);
    if (to != static_cast<int64_t>(DataType::kInt64) && to != static_cast<int64_t>(DataType::kInt32))
      return std::nullopt;
    return Exprs(editor, n->inputs[0], depth + 1);
  }
  if (op == "Identity") return Exprs(editor, n->inputs[0], depth + 1);
  if (op == "Shape") {
    if (n->inputs.empty()) return std::nullopt;
    const auto* dims = editor.DimsOf(n->inputs[0]);
    if (dims == nullptr) return std::nullopt;
    const auto rank = static_cast<int64_t>(dims->size());
    int64_t start = AttrInt(*n, "start", 0), end = AttrInt(*n, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    std::vector<DimExpr> out;
    for (int64_t i = start; i < end; ++i) out.push_back(DimOf(n->inputs[0], i));
    return out;
  }
  if (op == "Gather") return GatherExprs(editor, *n, depth);
  if (op == "Slice") return SliceExprs(editor, *n, depth);
  if (op == "Sub" && n->inputs.size() == 2) {
    auto a = Exprs(editor, n->inputs[0], depth + 1), b = Exprs(editor, n->inputs[1], depth + 1);
    if (!a || !b || a->size() != 1 || b->size() != 1) return std::nullopt;
    const DimExpr& x = (*a)[0];
    const DimExpr& y = (*b)[0];
    if (x.kind == DimExpr::Kind::kConst && y.kind == DimExpr::Kind::kConst)
      return std::vector<DimExpr>{ConstExpr(x.constant - y.constant)};
    if (y.kind == DimExpr::Kind::kConst && y.constant == 0) return a;
    if (x.kind != DimExpr::Kind::kDim || y.kind != DimExpr::Kind::kDim) return std::nullopt;
    DimExpr d = x;
    d.kind = DimExpr::Kind::kDiff;
    d.value2 = y.value;
    d.axis2 = y.axis;
    return std::vector<DimExpr>{d};
  }
  return std::nullopt;
}

// Memoized: the residual stream reaches back through every layer.
int64_t StructuralRank(GraphEditor& editor, const std::string& value, std::map<std::string, int64_t>& memo, int depth) {
  if (const auto* dims = editor.DimsOf(value)) return static_cast<int64_t>(dims->size());
  if (auto c = ConstTensor(editor, value)) return static_cast<int64_t>(c->rank());
  if (auto it = memo.find(value); it != memo.end()) return it->second;
  ir::Node* n = editor.Producer(value);
  if (depth > kMaxRankDepth || n == nullptr || n->inputs.empty() || n->outputs[0] != value) return -1;
  auto rank_of = [&](const std::string& in) { return StructuralRank(editor, in, memo, depth + 1); };
  static const std::set<std::string> kSameRank = {"LayerNormalization",
                                                  "SkipLayerNormalization",
                                                  "SimplifiedLayerNormalization",
                                                  "Cast",
                                                  "Identity",
                                                  "Relu",
                                                  "Gelu",
                                                  "FastGelu",
                                                  "BiasGelu",
                                                  "Erf",
                                                  "Tanh",
                                                  "Sigmoid",
                                                  "Neg",
                                                  "Softmax"};
  const std::string& op = n->op_type;
  int64_t rank = -1;
  if (kSameRank.count(op) && (n->domain.empty() || n->domain == ir::kMsDomain)) {
    rank = rank_of(n->inputs[0]);
  } else if (n->domain == ir::kMsDomain && (op == "Attention" || op == "MultiHeadAttention")) {
    rank = 3;
  } else if (!n->domain.empty()) {
    rank = -1;
  } else if (op == "MatMul" && n->inputs.size() == 2) {  // both at least 2-D: the larger rank
    const int64_t ra = rank_of(n->inputs[0]), rb = rank_of(n->inputs[1]);
    rank = ra >= 2 && rb >= 2 ? std::max(ra, rb) : -1;
  } else if (op == "Transpose") {
    const auto perm = AttrInts(*n, "perm");
    rank = perm.empty() ? rank_of(n->inputs[0]) : static_cast<int64_t>(perm.size());
  } else if (op == "Concat") {  // every input has the output's rank
    for (const auto& in : n->inputs)
      if (rank < 0) rank = rank_of(in);
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {  // broadcasting: the largest
    for (const auto& in : n->inputs) {
      const int64_t r = rank_of(in);
      if (r < 0) {
        rank = -1;
        break;
      }
      rank = std::max(rank, r);
    }
  } else if (op == "Reshape" && n->inputs.size() == 2) {
    auto shape = ShapeExprs(editor, n->inputs[1]);
    rank = shape ? static_cast<int64_t>(shape->size()) : -1;
  }
  memo[value] = rank;
  return rank;
}

}  // namespace

std::optional<std::vector<int64_t>> UnsqueezeAxes(GraphEditor& editor, const ir::Node& node, size_t input) {
  if (node.opset >= 13 || node.FindAttribute("axes") == nullptr) {
    if (input < node.inputs.size() && !node.inputs[input].empty()) return ConstInts(editor, node.inputs[input]);
    return std::nullopt;
  }
  return AttrInts(node, "axes");
}

std::optional<Tensor> ConstTensor(GraphEditor& editor, const std::string& value) {
  if (value.empty()) return std::nullopt;
  if (const Tensor* t = editor.Constant(value)) return *t;
  ir::Node* n = editor.Producer(value);
  if (!IsOp(n, "Constant") || n->outputs.size() != 1) return std::nullopt;
  for (const auto& a : n->attributes) {
    if (a.name == "value" && a.type == ir::AttrType::kTensor) return a.t;
    if (a.name == "value_float") return Tensor::Scalar<float>(DataType::kFloat, a.f);
    if (a.name == "value_int") return Tensor::Scalar<int64_t>(DataType::kInt64, a.i);
    if (a.name == "value_ints")
      return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(a.ints.size())}, a.ints);
    if (a.name == "value_floats")
      return Tensor::FromVector<float>(DataType::kFloat, {static_cast<int64_t>(a.floats.size())}, a.floats);
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> ConstInts(GraphEditor& editor, const std::string& value) {
  auto t = ConstTensor(editor, value);
  if (!t) return std::nullopt;
  return IntsOf(*t);
}

std::optional<double> ConstScalar(GraphEditor& editor, const std::string& value) {
  auto t = ConstTensor(editor, value);
  if (!t || t->size() != 1) return std::nullopt;
  switch (t->dtype()) {
    case DataType::kFloat:
      return t->data<float>()[0];
    case DataType::kDouble:
      return t->data<double>()[0];
    case DataType::kInt64:
      return static_cast<double>(t->data<int64_t>()[0]);
    case DataType::kInt32:
      return t->data<int32_t>()[0];
    default:
      return std::nullopt;
  }
}

std::optional<std::vector<DimExpr>> ShapeExprs(GraphEditor& editor, const std::string& value) {
  return Exprs(editor, value, 0);
}

void DimEquivalence::Link(const std::string& out, int64_t out_axis, const std::string& in, int64_t in_axis) {
  const DimRef from{out, out_axis}, to = Root({in, in_axis});
  if (from != to) links_[from] = to;
}

DimEquivalence::DimRef DimEquivalence::Root(DimRef d) const {
  for (int i = 0; i < 64; ++i) {
    auto it = links_.find(d);
    if (it == links_.end()) break;
    d = it->second;
  }
  return d;
}

const Dim* DimEquivalence::Inferred(const DimRef& d) {
  const auto* dims = editor_.DimsOf(d.first);
  if (dims == nullptr || d.second < 0 || d.second >= static_cast<int64_t>(dims->size())) return nullptr;
  return &(*dims)[d.second];
}

bool DimEquivalence::Equal(const std::string& a, int64_t a_axis, const std::string& b, int64_t b_axis) {
  const DimRef ra = Root({a, a_axis}), rb = Root({b, b_axis});
  if (ra == rb) return true;
  for (const DimRef& x : {DimRef{a, a_axis}, ra})
    for (const DimRef& y : {DimRef{b, b_axis}, rb}) {
      const Dim* dx = Inferred(x);
      const Dim* dy = Inferred(y);
      if (dx == nullptr || dy == nullptr) continue;
      if (dx->known() && dx->value == dy->value) return true;
      if (!dx->known() && !dx->param.empty() && dx->param == dy->param) return true;
    }
  return false;
}

int64_t DimEquivalence::StaticSize(const std::string& value, int64_t axis) {
  for (const DimRef& d : {DimRef{value, axis}, Root({value, axis})}) {
    const Dim* dim = Inferred(d);
    if (dim != nullptr && dim->known()) return dim->value;
  }
  return -1;
}

int64_t StructuralRank(GraphEditor& editor, const std::string& value) {
  std::map<std::string, int64_t> memo;
  return StructuralRank(editor, value, memo, 0);
}

}  // namespace onyx::attention
