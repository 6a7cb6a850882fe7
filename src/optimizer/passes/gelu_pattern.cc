#include "optimizer/passes/gelu_pattern.h"

#include <algorithm>
#include <cmath>

#include "optimizer/fusion_util.h"

namespace onyx::fusion {
namespace {

using Poly = std::array<double, 4>;
constexpr int kMaxExpressionNodes = 12;

// A one-element constant that cannot change x's shape by broadcasting.
std::optional<double> ScalarOperand(GraphEditor& editor, const std::string& value, int64_t x_rank) {
  auto c = ConstScalar(editor, value);
  if (!c) return std::nullopt;
  if (RankOf(editor, value) > std::max<int64_t>(x_rank, 0)) return std::nullopt;
  return c;
}

std::optional<Poly> Multiply(const Poly& a, const Poly& b) {
  Poly r{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const double v = a[i] * b[j];
      if (v == 0.0) continue;
      if (i + j > 3) return std::nullopt;
      r[i + j] += v;
    }
  return r;
}

// `value` as a polynomial in x, recording the nodes that compute it.
std::optional<Poly> PolyOf(GraphEditor& editor, const std::string& value, const std::string& x, int64_t x_rank,
                           std::vector<ir::Node*>& nodes) {
  if (value == x) return Poly{0, 1, 0, 0};
  if (auto c = ScalarOperand(editor, value, x_rank)) return Poly{*c, 0, 0, 0};
  ir::Node* n = editor.Producer(value);
  if (n == nullptr || !n->domain.empty() || n->opset < 7 || n->outputs.size() != 1) return std::nullopt;
  if (static_cast<int>(nodes.size()) >= kMaxExpressionNodes) return std::nullopt;
  if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  const std::string& op = n->op_type;
  if (op == "Neg" && n->inputs.size() == 1) {
    auto a = PolyOf(editor, n->inputs[0], x, x_rank, nodes);
    if (!a) return std::nullopt;
    for (double& c : *a) c = -c;
    return a;
  }
  if (n->inputs.size() != 2) return std::nullopt;
  if (op == "Pow") {
    auto e = ScalarOperand(editor, n->inputs[1], x_rank);
    auto base = PolyOf(editor, n->inputs[0], x, x_rank, nodes);
    if (!e || !base || (*e != 1.0 && *e != 2.0 && *e != 3.0)) return std::nullopt;
    Poly r = *base;
    for (int i = 1; i < static_cast<int>(*e); ++i) {
      auto next = Multiply(r, *base);
      if (!next) return std::nullopt;
      r = *next;
    }
    return r;
  }
  if (op == "Div") {
    auto d = ScalarOperand(editor, n->inputs[1], x_rank);
    auto a = PolyOf(editor, n->inputs[0], x, x_rank, nodes);
    if (!d || *d == 0.0 || !a) return std::nullopt;
    for (double& c : *a) c /= *d;
    return a;
  }
  auto a = PolyOf(editor, n->inputs[0], x, x_rank, nodes);
  auto b = PolyOf(editor, n->inputs[1], x, x_rank, nodes);
  if (!a || !b) return std::nullopt;
  if (op == "Mul") return Multiply(*a, *b);
  if (op != "Add" && op != "Sub") return std::nullopt;
  Poly r{};
  for (int i = 0; i < 4; ++i) r[i] = op == "Add" ? (*a)[i] + (*b)[i] : (*a)[i] - (*b)[i];
  return r;
}

// A product of values and constants through Mul nodes (and Div by constants) whose inner
// results are read by the next node only.
struct Product {
  std::vector<std::string> leaves;
  double coef = 1.0;
  std::vector<ir::Node*> nodes;
};

bool CollectProduct(GraphEditor& editor, ir::Node* n, int64_t x_rank, Product& p) {
  if (static_cast<int>(p.nodes.size()) >= 4) return false;
  p.nodes.push_back(n);
  const bool div = n->op_type == "Div";
  for (size_t i = 0; i < 2; ++i) {
    const std::string& v = n->inputs[i];
    if (auto c = ScalarOperand(editor, v, x_rank)) {
      if (div && i == 1) {
        if (*c == 0.0) return false;
        p.coef /= *c;
      } else if (div) {
        return false;  // c / x is no product
      } else {
        p.coef *= *c;
      }
      continue;
    }
    if (div && i == 1) return false;
    ir::Node* inner = editor.Producer(v);
    const bool mul_like = IsOnnxOp(inner, "Mul", 7) || IsOnnxOp(inner, "Div", 7);
    if (mul_like && inner->inputs.size() == 2 && SoleReader(editor, v) == n && n->inputs[0] != n->inputs[1]) {
      if (!CollectProduct(editor, inner, x_rank, p)) return false;
    } else {
      p.leaves.push_back(v);
    }
  }
  return true;
}

}  // namespace

std::optional<GeluMatch> MatchGelu(GraphEditor& editor, ir::Node* f_node) {
  if (f_node->inputs.size() != 1 || f_node->outputs.size() != 1) return std::nullopt;
  // 1 + f(...)
  ir::Node* plus_one = SoleReader(editor, f_node->outputs[0]);
  if (!IsOnnxOp(plus_one, "Add", 7) || plus_one->inputs.size() != 2) return std::nullopt;
  const std::string& one = OtherInput(*plus_one, f_node->outputs[0]);
  if (one.empty() || !IsConstNear(editor, one, 1.0)) return std::nullopt;
  const std::string& a = plus_one->outputs[0];
  // 0.5 * x * a: the smallest product above `a` with exactly the leaves {x, a}.
  ir::Node* root = SoleReader(editor, a);
  for (int level = 0; level < 3 && root != nullptr; ++level) {
    if (!(IsOnnxOp(root, "Mul", 7) || IsOnnxOp(root, "Div", 7)) || root->inputs.size() != 2) return std::nullopt;
    // x's rank is not known yet: the leaves' ranks bound the constants' rank instead.
    int64_t rank = RankOf(editor, a);
    Product p;
    if (CollectProduct(editor, root, rank, p) && p.leaves.size() == 2 && std::fabs(p.coef - 0.5) < 1e-6) {
      const auto it = std::find(p.leaves.begin(), p.leaves.end(), a);
      if (it != p.leaves.end()) {
        const std::string x = p.leaves[it == p.leaves.begin() ? 1 : 0];
        if (x == a || ConstValue(editor, x)) return std::nullopt;
        GeluMatch m;
        m.x = x;
        m.output = root->outputs[0];
        std::vector<ir::Node*> expr;
        auto poly = PolyOf(editor, f_node->inputs[0], x, RankOf(editor, x), expr);
        if (!poly || expr.empty()) return std::nullopt;
        m.poly = *poly;
        m.nodes = expr;
        m.nodes.push_back(f_node);
        m.nodes.push_back(plus_one);
        m.nodes.insert(m.nodes.end(), p.nodes.begin(), p.nodes.end());
        // Every value made inside the pattern, but its result, stays inside it.
        for (ir::Node* n : m.nodes) {
          if (n == root) continue;
          if (!OnlyReadBy(editor, n->outputs[0], m.nodes)) return std::nullopt;
        }
        for (ir::Node* n : m.nodes)
          if (n->outputs[0] == x) return std::nullopt;
        return m;
      }
    }
    if (editor.IsGraphOutput(root->outputs[0])) return std::nullopt;
    root = SoleReader(editor, root->outputs[0]);
  }
  return std::nullopt;
}

}  // namespace onyx::fusion
