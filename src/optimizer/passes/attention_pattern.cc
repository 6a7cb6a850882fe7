#include "optimizer/passes/attention_pattern.h"

#include <algorithm>
#include <cmath>

#include "optimizer/pattern_util.h"
#include "providers/kernel.h"

namespace onyx::attention {
namespace {

// A masked score must vanish in the softmax: exp(-1e4) underflows to 0 in float.
constexpr double kMaxMaskFill = -1e4;
// How far above the pattern dead shape computations are looked for.
constexpr int kConeDepth = 10;
constexpr int64_t kInt32 = 6;

bool Finite(double v) { return std::isfinite(v); }

bool PermIs(const ir::Node& transpose, const std::vector<int64_t>& perm) { return AttrInts(transpose, "perm") == perm; }

std::optional<HeadSplit> MatchHeadSplit(GraphEditor& editor, const std::string& value,
                                        const std::vector<int64_t>& perm) {
  HeadSplit h;
  h.transpose = editor.Producer(value);
  if (!IsOp(h.transpose, "Transpose") || h.transpose->inputs.empty() || !PermIs(*h.transpose, perm))
    return std::nullopt;
  h.reshape = editor.Producer(h.transpose->inputs[0]);
  if (!IsOp(h.reshape, "Reshape") || h.reshape->inputs.size() < 2) return std::nullopt;
  auto shape = ShapeExprs(editor, h.reshape->inputs[1]);
  if (!shape || shape->size() != 4) return std::nullopt;
  for (int i : {2, 3})
    if ((*shape)[i].kind != DimExpr::Kind::kConst || (*shape)[i].constant <= 0) return std::nullopt;
  if (AttrInt(*h.reshape, "allowzero", 0) != 0) {
    for (const auto& e : *shape)
      if (e.kind == DimExpr::Kind::kConst && e.constant == 0) return std::nullopt;
  }
  h.projected = h.reshape->inputs[0];
  h.shape = std::move(*shape);
  return h;
}

struct PaddingMask {
  std::string source;
  double fill = 0.0;
};

// (1 - Cast(Unsqueeze(Unsqueeze(mask, 1), 2))) * fill: a [batch, seq] key padding mask made
// additive [batch, 1, 1, seq]. Unsqueeze may take both axes at once and Cast may sit anywhere
// in the chain (or be absent for a float mask).
std::optional<PaddingMask> MatchPaddingMask(GraphEditor& editor, const std::string& value) {
  ir::Node* mul = editor.Producer(value);
  if (!IsOp(mul, "Mul") || mul->inputs.size() != 2) return std::nullopt;
  for (int i : {0, 1}) {
    auto fill = ConstScalar(editor, mul->inputs[1 - i]);
    ir::Node* sub = editor.Producer(mul->inputs[i]);
    if (!fill || !Finite(*fill) || *fill >= 0 || !IsOp(sub, "Sub") || sub->inputs.size() != 2) continue;
    auto one = ConstScalar(editor, sub->inputs[0]);
    auto one_t = ConstTensor(editor, sub->inputs[0]);
    if (!one || *one != 1.0 || one_t->rank() > 4) continue;
    if (auto f = ConstTensor(editor, mul->inputs[1 - i]); f->rank() > 4) continue;
    // Walk up through Unsqueeze / Cast to the mask.
    std::vector<ir::Node*> chain;
    std::string cur = sub->inputs[1];
    for (int step = 0; step < 4; ++step) {
      ir::Node* n = editor.Producer(cur);
      if ((!IsOp(n, "Unsqueeze") && !IsOp(n, "Cast")) || n->inputs.empty()) break;
      chain.push_back(n);
      cur = n->inputs[0];
    }
    std::reverse(chain.begin(), chain.end());
    const TypeInfo* type = editor.TypeOf(cur);
    if (type == nullptr || type->kind != TypeInfo::Kind::kTensor || !type->shape || type->shape->size() != 2) continue;
    const DataType src = type->elem_type;
    if (src != DataType::kInt64 && src != DataType::kInt32 && src != DataType::kBool && src != DataType::kFloat)
      continue;
    // Simulate the dims: 'b' batch, 's' sequence, '1' inserted.
    std::vector<char> dims = {'b', 's'};
    int casts = 0;
    bool ok = true;
    for (ir::Node* n : chain) {
      if (n->op_type == "Cast") {
        ok = ok && AttrInt(*n, "to", 0) == static_cast<int64_t>(DataType::kFloat);
        ++casts;
        continue;
      }
      auto axes = UnsqueezeAxes(editor, *n, 1);
      if (!axes || axes->empty()) {
        ok = false;
        break;
      }
      const auto out_rank = static_cast<int64_t>(dims.size() + axes->size());
      std::vector<int64_t> norm;
      for (int64_t a : *axes) norm.push_back(a < 0 ? a + out_rank : a);
      std::sort(norm.begin(), norm.end());
      for (int64_t a : norm) {
        if (a < 0 || a >= out_rank || a > static_cast<int64_t>(dims.size())) {
          ok = false;
          break;
        }
        dims.insert(dims.begin() + a, '1');
      }
    }
    if (!ok || casts > 1 || (casts == 0 && src != DataType::kFloat)) continue;
    if (dims != std::vector<char>{'b', '1', '1', 's'}) continue;
    return PaddingMask{cur, *fill};
  }
  return std::nullopt;
}

// Lower triangle of ones (j <= i) over the last two dims, leading dims 1.
bool IsCausalBuffer(const Tensor& t, int64_t* size) {
  if (t.dtype() != DataType::kBool || t.rank() < 2) return false;
  for (size_t i = 0; i + 2 < t.rank(); ++i)
    if (t.dim(i) != 1) return false;
  const int64_t rows = t.dim(t.rank() - 2), cols = t.dim(t.rank() - 1);
  if (rows != cols) return false;
  const auto* data = t.data<bool>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      if (data[i * cols + j] != (j <= i)) return false;
  *size = rows;
  return true;
}

// The causal condition is the [seq, seq] top-left corner of a lower-triangular buffer: rows
// [kv_len - q_len, kv_len) (= [0, seq) without past) and columns [0, kv_len), as GPT-2 slices
// its `bias` buffer, or that corner already folded to a constant.
bool IsCausalCondition(GraphEditor& editor, DimEquivalence& dims, const std::string& cond, const std::string& seq_value,
                       int64_t seq_axis) {
  const int64_t seq_static = dims.StaticSize(seq_value, seq_axis);
  struct Range {
    DimExpr start, end;
  };
  std::map<int64_t, Range> ranges;  // by axis counted from the end (-1 columns, -2 rows)
  std::string cur = cond;
  for (int step = 0; step < 4; ++step) {
    ir::Node* n = editor.Producer(cur);
    if (!IsOp(n, "Slice")) break;
    if (n->opset < 10 || n->inputs.size() < 3) return false;
    auto starts = ShapeExprs(editor, n->inputs[1]), ends = ShapeExprs(editor, n->inputs[2]);
    if (!starts || !ends || starts->size() != ends->size()) return false;
    std::vector<int64_t> axes;
    if (n->inputs.size() > 3 && !n->inputs[3].empty()) {
      auto a = ConstInts(editor, n->inputs[3]);
      if (!a) return false;
      axes = *a;
    } else {
      for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (axes.size() != starts->size()) return false;
    if (n->inputs.size() > 4 && !n->inputs[4].empty()) {
      auto steps = ConstInts(editor, n->inputs[4]);
      if (!steps) return false;
      for (int64_t s : *steps)
        if (s != 1) return false;
    }
    // Axes are resolved against the buffer's rank once it is known.
    const TypeInfo* t = editor.TypeOf(n->inputs[0]);
    auto buffer = ConstTensor(editor, n->inputs[0]);
    int64_t rank = buffer ? static_cast<int64_t>(buffer->rank()) : -1;
    if (rank < 0 && t && t->shape) rank = static_cast<int64_t>(t->shape->size());
    if (rank < 2) return false;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t from_end = (axes[i] < 0 ? axes[i] + rank : axes[i]) - rank;
      if ((from_end != -1 && from_end != -2) || ranges.count(from_end)) return false;
      ranges[from_end] = Range{(*starts)[i], (*ends)[i]};
    }
    cur = n->inputs[0];
  }
  auto buffer = ConstTensor(editor, cur);
  int64_t size = 0;
  if (!buffer || !IsCausalBuffer(*buffer, &size)) return false;
  auto is_zero = [&](const DimExpr& e) {
    return (e.kind == DimExpr::Kind::kConst && e.constant == 0) ||
           (e.kind == DimExpr::Kind::kDiff && dims.Equal(e.value, e.axis, e.value2, e.axis2));
  };
  auto is_seq = [&](const DimExpr& e) {
    if (e.kind == DimExpr::Kind::kDim) return dims.Equal(e.value, e.axis, seq_value, seq_axis);
    if (e.kind == DimExpr::Kind::kConst)
      return seq_static >= 0 && (e.constant == seq_static || (e.constant >= size && size == seq_static));
    return false;
  };
  for (int64_t axis : {-2, -1}) {
    auto it = ranges.find(axis);
    if (it == ranges.end()) {
      if (size != seq_static) return false;
      continue;
    }
    if (!is_zero(it->second.start) || !is_seq(it->second.end)) return false;
  }
  return true;
}

// dims 0 .. kept-1 of Reshape(x, shape) are x's (0 copies, -1 is inferred from the rest when
// the trailing dims hold the same number of elements, which the caller checked).
bool KeepsLeadingDims(DimEquivalence& dims, const ir::Node& reshape, const std::vector<DimExpr>& shape, size_t kept,
                      const std::string& x, bool zero_copies) {
  int minus_ones = 0;
  for (const auto& e : shape)
    if (e.kind == DimExpr::Kind::kConst && e.constant == -1) ++minus_ones;
  if (minus_ones > 1) return false;
  const bool allowzero = AttrInt(reshape, "allowzero", 0) != 0;
  for (size_t i = 0; i < kept; ++i) {
    const DimExpr& e = shape[i];
    const auto axis = static_cast<int64_t>(i);
    if (e.kind == DimExpr::Kind::kDim) {
      if (!dims.Equal(e.value, e.axis, x, axis)) return false;
    } else if (e.kind == DimExpr::Kind::kConst) {
      if (e.constant == 0) {
        if (allowzero || !zero_copies) return false;
      } else if (e.constant != -1 && e.constant != dims.StaticSize(x, axis)) {
        return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

ir::Attribute IntAttribute(const std::string& name, int64_t v) {
  ir::Attribute a{name, ir::AttrType::kInt};
  a.i = v;
  return a;
}

ir::Attribute FloatAttribute(const std::string& name, float v) {
  ir::Attribute a{name, ir::AttrType::kFloat};
  a.f = v;
  return a;
}

}  // namespace

std::vector<ir::Node*> AttentionMatch::Nodes() const {
  std::vector<ir::Node*> nodes = {softmax,     qk_matmul, ctx_matmul,  merge_transpose, merge_reshape, q.reshape,
                                  q.transpose, k.reshape, k.transpose, v.reshape,       v.transpose};
  nodes.insert(nodes.end(), score_nodes.begin(), score_nodes.end());
  return nodes;
}

std::optional<AttentionMatch> MatchCore(GraphEditor& editor, ir::Node* softmax) {
  AttentionMatch m;
  m.softmax = softmax;
  if (!IsOp(softmax, "Softmax") || softmax->inputs.size() != 1 || softmax->outputs.size() != 1) return std::nullopt;
  // Before opset 13 Softmax flattens from `axis` (default 1): only the last axis of the rank-4
  // scores is the per-row softmax.
  const int64_t axis = AttrInt(*softmax, "axis", softmax->opset >= 13 ? -1 : 1);
  if (axis != -1 && axis != 3) return std::nullopt;

  // probs . V, then heads merged back.
  m.ctx_matmul = SoleConsumer(editor, softmax->outputs[0]);
  if (!IsOp(m.ctx_matmul, "MatMul") || m.ctx_matmul->inputs.size() != 2 ||
      m.ctx_matmul->inputs[0] != softmax->outputs[0])
    return std::nullopt;
  auto v = MatchHeadSplit(editor, m.ctx_matmul->inputs[1], {0, 2, 1, 3});
  if (!v) return std::nullopt;
  m.v = std::move(*v);
  m.merge_transpose = SoleConsumer(editor, m.ctx_matmul->outputs[0]);
  if (!IsOp(m.merge_transpose, "Transpose") || !PermIs(*m.merge_transpose, {0, 2, 1, 3})) return std::nullopt;
  for (ir::Node* c : editor.Consumers(m.merge_transpose->outputs[0])) {
    if (!IsOp(c, "Reshape") || c->inputs[0] != m.merge_transpose->outputs[0]) continue;
    if (m.merge_reshape != nullptr) return std::nullopt;
    m.merge_reshape = c;
  }
  if (m.merge_reshape == nullptr || m.merge_reshape->inputs.size() < 2) return std::nullopt;
  auto merge_shape = ShapeExprs(editor, m.merge_reshape->inputs[1]);
  if (!merge_shape || merge_shape->size() != 3) return std::nullopt;
  m.merge_shape = std::move(*merge_shape);
  m.output = m.merge_reshape->outputs[0];

  // Scores: Q.K^T, then in any order at most one scaling, padding mask and causal Where.
  // `after` is the scaling applied downstream of the node being looked at.
  std::string cur = softmax->inputs[0];
  double after = 1.0;
  bool scaled = false, masked = false;
  for (int step = 0; step < 4 && m.qk_matmul == nullptr; ++step) {
    ir::Node* n = editor.Producer(cur);
    if (n == nullptr || !n->domain.empty() || SoleConsumer(editor, n->outputs[0]) == nullptr) return std::nullopt;
    if (n->op_type == "MatMul") {
      if (n->inputs.size() != 2) return std::nullopt;
      m.qk_matmul = n;
      break;
    }
    if ((n->op_type == "Div" || n->op_type == "Mul") && !scaled && n->inputs.size() == 2) {
      int data = 0;
      std::optional<double> c = ConstScalar(editor, n->inputs[1]);
      if (!c && n->op_type == "Mul") {
        c = ConstScalar(editor, n->inputs[0]);
        data = 1;
      }
      if (!c || !Finite(*c) || *c == 0.0) return std::nullopt;
      if (auto t = ConstTensor(editor, n->inputs[1 - data]); t->rank() > 4) return std::nullopt;
      const double f = n->op_type == "Div" ? 1.0 / *c : *c;
      m.scale *= f;
      after *= f;
      scaled = true;
      cur = n->inputs[data];
    } else if (n->op_type == "Add" && !masked && n->inputs.size() == 2) {
      bool found = false;
      for (int i : {0, 1}) {
        auto mask = MatchPaddingMask(editor, n->inputs[1 - i]);
        if (!mask) continue;
        m.mask_source = mask->source;
        m.mask_filter = mask->fill * after;
        cur = n->inputs[i];
        found = true;
        break;
      }
      if (!found) return std::nullopt;
      masked = true;
    } else if (n->op_type == "Where" && m.causal_where == nullptr && n->inputs.size() == 3) {
      auto fill = ConstScalar(editor, n->inputs[2]);
      if (!fill || !Finite(*fill)) return std::nullopt;
      if (auto t = ConstTensor(editor, n->inputs[2]); t->rank() > 4) return std::nullopt;
      m.causal_where = n;
      m.causal_fill = *fill * after;
      if (m.causal_fill > kMaxMaskFill) return std::nullopt;
      cur = n->inputs[1];
    } else {
      return std::nullopt;
    }
    m.score_nodes.push_back(n);
  }
  if (m.qk_matmul == nullptr) return std::nullopt;
  auto q = MatchHeadSplit(editor, m.qk_matmul->inputs[0], {0, 2, 1, 3});
  auto k = MatchHeadSplit(editor, m.qk_matmul->inputs[1], {0, 2, 3, 1});
  if (!q || !k) return std::nullopt;
  m.q = std::move(*q);
  m.k = std::move(*k);
  m.num_heads = m.q.shape[2].constant;
  m.head_size = m.q.shape[3].constant;
  for (const HeadSplit* h : {&m.k, &m.v})
    if (h->shape[2].constant != m.num_heads || h->shape[3].constant != m.head_size) return std::nullopt;
  if (m.hidden() > (int64_t{1} << 30)) return std::nullopt;
  if (!Finite(m.scale) || m.scale == 0.0) return std::nullopt;
  // With a causal mask too, ONNX Runtime adds the one mask_filter_value for both.
  if (!m.mask_source.empty() && m.causal_where != nullptr && m.mask_filter > kMaxMaskFill) return std::nullopt;
  return m;
}

void LinkCore(const AttentionMatch& m, DimEquivalence& dims) {
  for (const HeadSplit* h : {&m.q, &m.k, &m.v}) {
    const auto perm = AttrInts(*h->transpose, "perm");
    for (int64_t a = 0; a < 4; ++a) dims.Link(h->transpose->outputs[0], a, h->reshape->outputs[0], perm[a]);
  }
  // scores [b, n, sq, sk] from Q [b, n, sq, d] and K^T [b, n, d, sk]; context [b, n, sq, dv].
  const std::string& scores = m.qk_matmul->outputs[0];
  for (int64_t a = 0; a < 3; ++a) dims.Link(scores, a, m.qk_matmul->inputs[0], a);
  dims.Link(scores, 3, m.qk_matmul->inputs[1], 3);
  const std::string& context = m.ctx_matmul->outputs[0];
  for (int64_t a = 0; a < 3; ++a) dims.Link(context, a, scores, a);
  dims.Link(context, 3, m.ctx_matmul->inputs[1], 3);
  for (int64_t a = 0; a < 4; ++a) {
    static const int64_t kPerm[] = {0, 2, 1, 3};
    dims.Link(m.merge_transpose->outputs[0], a, context, kPerm[a]);
  }
}

bool CheckShapes(GraphEditor& editor, const AttentionMatch& m, DimEquivalence& dims, const std::string& input) {
  for (const HeadSplit* h : {&m.q, &m.k, &m.v}) {
    if (!KeepsLeadingDims(dims, *h->reshape, h->shape, 2, h->projected, true)) return false;
    for (int64_t a : {0, 1}) dims.Link(h->reshape->outputs[0], a, h->projected, a);
  }
  // Self attention: queries and keys share the sequence.
  if (!dims.Equal(m.q.projected, 1, m.k.projected, 1) || !dims.Equal(m.k.projected, 1, m.v.projected, 1)) return false;
  const DimExpr& last = m.merge_shape[2];
  if (last.kind != DimExpr::Kind::kConst || (last.constant != m.hidden() && last.constant != -1)) return false;
  if (!KeepsLeadingDims(dims, *m.merge_reshape, m.merge_shape, 2, m.merge_transpose->outputs[0], true)) return false;
  if (m.causal_where != nullptr) {
    const TypeInfo* t = editor.TypeOf(m.causal_where->inputs[0]);
    if (t != nullptr && t->elem_type != DataType::kBool) return false;
    if (!IsCausalCondition(editor, dims, m.causal_where->inputs[0], m.q.transpose->outputs[0], 2)) return false;
  }
  if (!m.mask_source.empty()) {
    // mask_index is (batch, total_sequence): the input's batch and sequence.
    if (!dims.Equal(m.mask_source, 0, input, 0) || !dims.Equal(m.mask_source, 1, input, 1)) return false;
    if (m.softmax->opset < 6) return false;  // the int32 Cast needs Cast-6
  }
  return true;
}

bool AttentionKernelAvailable(const PassContext& ctx) {
  if (!ctx.options.require_kernels) return true;
  for (const auto& provider : ctx.options.providers)
    if (KernelRegistry::Global().Find(provider, ir::kMsDomain, "Attention", 1) != nullptr) return true;
  return false;
}

bool IsAttentionInput(GraphEditor& editor, const std::string& input, int64_t hidden_in) {
  // The projection's float weights fix the element type when inference does not know it.
  const TypeInfo* t = editor.TypeOf(input);
  if (t != nullptr && (t->kind != TypeInfo::Kind::kTensor ||
                       (t->elem_type != DataType::kFloat && t->elem_type != DataType::kUndefined)))
    return false;
  if (t == nullptr || !t->shape) {
    return StructuralRank(editor, input) == 3;
  }
  if (t->shape->size() != 3) return false;
  const Dim& last = (*t->shape)[2];
  return !last.known() || last.value == hidden_in;
}

std::optional<std::vector<ir::Node*>> RemovableNodes(GraphEditor& editor, const std::vector<ir::Node*>& pattern,
                                                     const std::string& result, const std::set<std::string>& keep) {
  std::set<ir::Node*> dead(pattern.begin(), pattern.end());
  std::vector<ir::Node*> frontier(pattern.begin(), pattern.end());
  for (int depth = 0; depth < kConeDepth && !frontier.empty(); ++depth) {
    std::vector<ir::Node*> next;
    for (ir::Node* n : frontier)
      for (const auto& in : n->inputs) {
        if (in.empty() || keep.count(in)) continue;
        ir::Node* p = editor.Producer(in);
        if (p != nullptr && !p->HasSubgraphs() && dead.insert(p).second) next.push_back(p);
      }
    frontier = std::move(next);
  }
  // Largest set whose outputs only the set reads (the result gets a new producer).
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = dead.begin(); it != dead.end();) {
      bool live = false;
      for (const auto& out : (*it)->outputs) {
        if (out.empty() || out == result) continue;
        if (keep.count(out) || editor.IsGraphOutput(out)) live = true;
        for (ir::Node* c : editor.Consumers(out))
          if (!dead.count(c)) live = true;
      }
      if (live) {
        it = dead.erase(it);
        changed = true;
      } else {
        ++it;
      }
    }
  }
  for (ir::Node* n : pattern)
    if (!dead.count(n)) return std::nullopt;
  std::vector<ir::Node*> result_nodes(dead.begin(), dead.end());
  return result_nodes;
}

ir::Node* EmitAttention(PassContext& ctx, const AttentionMatch& m, const std::string& input, const std::string& weights,
                        const std::string& bias, const std::vector<ir::Node*>& removable) {
  GraphEditor& editor = ctx.editor;
  const int onnx_opset = m.softmax->opset;
  std::string mask_index;
  if (!m.mask_source.empty()) {
    const TypeInfo* t = editor.TypeOf(m.mask_source);
    if (t != nullptr && t->elem_type == DataType::kInt32) mask_index = m.mask_source;
    // One int32 copy of the mask serves every layer.
    for (ir::Node* c : editor.Consumers(m.mask_source)) {
      if (!mask_index.empty()) break;
      if (IsOp(c, "Cast") && AttrInt(*c, "to", 0) == kInt32 && c->outputs.size() == 1 &&
          std::find(removable.begin(), removable.end(), c) == removable.end())
        mask_index = c->outputs[0];
    }
    if (mask_index.empty()) {
      ir::Node* cast =
          editor.AddNode("Cast", "", {m.mask_source}, {editor.UniqueName(m.mask_source + "_int32")}, "MaskIndexCast");
      cast->opset = onnx_opset;
      cast->attributes.push_back(IntAttribute("to", kInt32));
      mask_index = cast->outputs[0];
    }
  }
  for (ir::Node* n : removable) editor.RemoveNode(n);
  std::vector<std::string> inputs = {input, weights, bias, mask_index};
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  // The fused node takes over the pattern's result name, so readers and graph outputs keep it.
  ir::Node* node = editor.AddNode("Attention", ir::kMsDomain, std::move(inputs), {m.output}, "Attention");
  node->opset = 1;
  node->attributes.push_back(IntAttribute("num_heads", m.num_heads));
  if (m.causal_where != nullptr) node->attributes.push_back(IntAttribute("unidirectional", 1));
  const double default_scale = 1.0 / std::sqrt(static_cast<double>(m.head_size));
  if (std::fabs(m.scale - default_scale) > 1e-6 * default_scale)
    node->attributes.push_back(FloatAttribute("scale", static_cast<float>(m.scale)));
  // Masked positions add mask_filter_value (default -10000): keep the model's own value.
  double filter = -10000.0;
  if (!m.mask_source.empty())
    filter = m.mask_filter;
  else if (m.causal_where != nullptr)
    filter = std::max(m.causal_fill, -3.4028234663852886e38);
  if (filter != -10000.0) node->attributes.push_back(FloatAttribute("mask_filter_value", static_cast<float>(filter)));
  ++ctx.counts["Attention"];
  return node;
}

}  // namespace onyx::attention
