// Gradient (ai.onnx.preview.training, opset 1): the derivatives of the value `y` with respect
// to the values `xs`, by reverse-mode differentiation of the part of the node's graph that
// computes y from xs and zs (the node's inputs are the values of xs then zs). When the kernel
// is created, that part is cut out of the graph; each run re-evaluates it forward in double
// precision and propagates dy = 1 back. Differentiable ops: Add, Sub, Mul, Div (numpy
// broadcasting), Neg, Identity, Relu, Sigmoid, Tanh, Exp, Log, Sqrt and 2-D MatMul.
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "base/type_traits.h"
#include "ops/broadcast.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

struct DTensor {
  Shape shape;
  std::vector<double> v;
};

enum class OpKind { kAdd, kSub, kMul, kDiv, kNeg, kIdentity, kRelu, kSigmoid, kTanh, kExp, kLog, kSqrt, kMatMul };

bool LookupOp(const std::string& op, OpKind& kind) {
  static const std::unordered_map<std::string, OpKind> kOps = {
      {"Add", OpKind::kAdd},      {"Sub", OpKind::kSub},         {"Mul", OpKind::kMul},
      {"Div", OpKind::kDiv},      {"Neg", OpKind::kNeg},         {"Identity", OpKind::kIdentity},
      {"Relu", OpKind::kRelu},    {"Sigmoid", OpKind::kSigmoid}, {"Tanh", OpKind::kTanh},
      {"Exp", OpKind::kExp},      {"Log", OpKind::kLog},         {"Sqrt", OpKind::kSqrt},
      {"MatMul", OpKind::kMatMul}};
  auto it = kOps.find(op);
  if (it == kOps.end()) return false;
  kind = it->second;
  return true;
}

bool IsBinary(OpKind k) { return k == OpKind::kAdd || k == OpKind::kSub || k == OpKind::kMul || k == OpKind::kDiv; }

struct Step {
  OpKind kind;
  std::vector<std::string> inputs;
  std::string output;
  std::string describe;
};

DTensor ToDouble(const Tensor& t, const std::string& what) {
  DTensor d{t.shape(), std::vector<double>(static_cast<size_t>(t.size()))};
  Dispatch(NumericTypes{}, t.dtype(), what, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < t.size(); ++i) d.v[i] = static_cast<double>(ToCompute(t.data<T>()[i]));
  });
  return d;
}

class Gradient final : public OpKernel {
 public:
  explicit Gradient(const KernelInfo& info) {
    xs_ = info.GetStrings("xs");
    y_ = info.GetString("y");
    const auto zs = info.GetStringsOr("zs", {});
    if (info.num_inputs() != xs_.size() + zs.size())
      info.Fail(StrCat("the node has ", info.num_inputs(), " inputs; expected one per name in xs and zs (",
                       xs_.size() + zs.size(), ")"));
    if (info.num_outputs() != xs_.size()) info.Fail(StrCat("the node needs one output per name in xs"));
    leaves_ = xs_;
    leaves_.insert(leaves_.end(), zs.begin(), zs.end());
    const ir::Graph* graph = info.graph();
    if (graph == nullptr) info.Fail("the kernel needs the graph holding the node");

    // Walk back from y to the leaves (or constants), collecting the nodes in between.
    const std::unordered_set<std::string> leaf_set(leaves_.begin(), leaves_.end());
    std::unordered_map<std::string, const ir::Node*> producer;
    for (const auto& node : graph->nodes)
      for (const auto& out : node->outputs)
        if (!out.empty()) producer[out] = node.get();
    std::unordered_set<const ir::Node*> needed;
    std::vector<std::string> todo = {y_};
    std::unordered_set<std::string> seen;
    while (!todo.empty()) {
      const std::string name = todo.back();
      todo.pop_back();
      if (!seen.insert(name).second || leaf_set.count(name)) continue;
      if (const Tensor* c = graph->FindInitializer(name)) {
        if (!graph->IsGraphInput(name)) {
          constants_.emplace(name, ToDouble(*c, info.Describe()));
          continue;
        }
      }
      auto it = producer.find(name);
      if (it == producer.end())
        info.Fail(StrCat("'", name, "' is needed to compute '", y_, "' but is neither in xs/zs nor made by a node"));
      const ir::Node* node = it->second;
      if (node->op_type == "Constant" && node->domain.empty()) {
        const ir::Attribute* value = node->FindAttribute("value");
        if (value == nullptr || value->type != ir::AttrType::kTensor)
          info.Fail(StrCat(node->Describe(), ": only Constant nodes with a 'value' tensor are supported"));
        constants_.emplace(name, ToDouble(value->t, info.Describe()));
        continue;
      }
      needed.insert(node);
      for (const auto& in : node->inputs)
        if (!in.empty()) todo.push_back(in);
    }
    for (const auto& node : graph->nodes) {
      if (!needed.count(node.get())) continue;
      Step step;
      if (!node->domain.empty() || !LookupOp(node->op_type, step.kind))
        info.Fail(StrCat("cannot differentiate through ", node->Describe()));
      const size_t arity = IsBinary(step.kind) || step.kind == OpKind::kMatMul ? 2 : 1;
      if (node->inputs.size() != arity || node->outputs.empty())
        info.Fail(StrCat(node->Describe(), " has ", node->inputs.size(), " inputs; expected ", arity));
      step.inputs = node->inputs;
      step.output = node->outputs[0];
      step.describe = node->Describe();
      steps_.push_back(std::move(step));
    }
  }

  void Compute(KernelContext& ctx) const override {
    std::unordered_map<std::string, DTensor> values;
    for (const auto& [name, t] : constants_) values[name] = t;
    for (size_t i = 0; i < leaves_.size(); ++i) {
      const Tensor& t = ctx.required_input(i);
      if (!IsFloatingPoint(t.dtype()) && i < xs_.size())
        ctx.Fail(StrCat("cannot differentiate with respect to '", xs_[i], "' of type ", DataTypeName(t.dtype())));
      values[leaves_[i]] = ToDouble(t, ctx.node().Describe());
    }
    for (const Step& s : steps_) values[s.output] = Forward(ctx, s, values);
    if (!values.count(y_)) ctx.Fail(StrCat("'", y_, "' could not be computed"));

    std::unordered_map<std::string, DTensor> grads;
    const DTensor& y = values.at(y_);
    grads[y_] = DTensor{y.shape, std::vector<double>(y.v.size(), 1.0)};
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      auto g = grads.find(it->output);
      if (g == grads.end()) continue;
      Backward(ctx, *it, values, g->second, grads);
    }
    for (size_t i = 0; i < xs_.size(); ++i) {
      const Tensor& x = ctx.required_input(i);
      Tensor& out = ctx.AllocateOutput(i, x.dtype(), x.shape());
      auto g = grads.find(xs_[i]);
      Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t k = 0; k < x.size(); ++k)
          out.data<T>()[k] = FromCompute<T>(static_cast<ComputeType<T>>(g == grads.end() ? 0.0 : g->second.v[k]));
      });
    }
  }

 private:
  static const DTensor& Get(const KernelContext& ctx, const std::unordered_map<std::string, DTensor>& values,
                            const std::string& name) {
    auto it = values.find(name);
    if (it == values.end()) ctx.Fail(StrCat("value '", name, "' is not available"));
    return it->second;
  }

  static void CheckMatMul(const KernelContext& ctx, const Step& s, const DTensor& a, const DTensor& b) {
    if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0])
      ctx.Fail(StrCat(s.describe, ": only 2-D MatMul [M,K]x[K,N] is differentiable here, got ", ShapeToString(a.shape),
                      " and ", ShapeToString(b.shape)));
  }

  DTensor Forward(const KernelContext& ctx, const Step& s,
                  const std::unordered_map<std::string, DTensor>& values) const {
    const DTensor& a = Get(ctx, values, s.inputs[0]);
    if (IsBinary(s.kind)) {
      const DTensor& b = Get(ctx, values, s.inputs[1]);
      DTensor out;
      out.shape = BroadcastShapes({a.shape, b.shape});
      out.v.resize(static_cast<size_t>(ShapeSize(out.shape)));
      ForEachBroadcastRun(out.shape, {a.shape, b.shape}, [&](const BroadcastRun& run) {
        for (int64_t i = 0; i < run.count; ++i) {
          const double x = a.v[run.in[0] + i * run.step[0]], y = b.v[run.in[1] + i * run.step[1]];
          double r = 0.0;
          switch (s.kind) {
            case OpKind::kAdd: r = x + y; break;
            case OpKind::kSub: r = x - y; break;
            case OpKind::kMul: r = x * y; break;
            default: r = x / y; break;
          }
          out.v[run.out + i] = r;
        }
      });
      return out;
    }
    if (s.kind == OpKind::kMatMul) {
      const DTensor& b = Get(ctx, values, s.inputs[1]);
      CheckMatMul(ctx, s, a, b);
      const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
      DTensor out{{m, n}, std::vector<double>(static_cast<size_t>(m * n), 0.0)};
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p)
          for (int64_t j = 0; j < n; ++j) out.v[i * n + j] += a.v[i * k + p] * b.v[p * n + j];
      return out;
    }
    DTensor out{a.shape, a.v};
    for (double& x : out.v) {
      switch (s.kind) {
        case OpKind::kNeg: x = -x; break;
        case OpKind::kRelu: x = x > 0 ? x : 0.0; break;
        case OpKind::kSigmoid: x = 1.0 / (1.0 + std::exp(-x)); break;
        case OpKind::kTanh: x = std::tanh(x); break;
        case OpKind::kExp: x = std::exp(x); break;
        case OpKind::kLog: x = std::log(x); break;
        case OpKind::kSqrt: x = std::sqrt(x); break;
        default: break;
      }
    }
    return out;
  }

  static DTensor& GradOf(std::unordered_map<std::string, DTensor>& grads, const std::string& name, const Shape& shape) {
    auto it = grads.find(name);
    if (it == grads.end())
      it = grads.emplace(name, DTensor{shape, std::vector<double>(static_cast<size_t>(ShapeSize(shape)), 0.0)}).first;
    return it->second;
  }

  void Backward(const KernelContext& ctx, const Step& s, const std::unordered_map<std::string, DTensor>& values,
                const DTensor& g_in, std::unordered_map<std::string, DTensor>& grads) const {
    const DTensor g = g_in;  // grads may rehash below
    const DTensor& a = Get(ctx, values, s.inputs[0]);
    if (IsBinary(s.kind)) {
      const DTensor& b = Get(ctx, values, s.inputs[1]);
      // Both gradients accumulate into the (possibly broadcast) input positions.
      DTensor da{a.shape, std::vector<double>(a.v.size(), 0.0)};
      DTensor db{b.shape, std::vector<double>(b.v.size(), 0.0)};
      ForEachBroadcastRun(g.shape, {a.shape, b.shape}, [&](const BroadcastRun& run) {
        for (int64_t i = 0; i < run.count; ++i) {
          const int64_t ia = run.in[0] + i * run.step[0], ib = run.in[1] + i * run.step[1];
          const double go = g.v[run.out + i], x = a.v[ia], y = b.v[ib];
          switch (s.kind) {
            case OpKind::kAdd: da.v[ia] += go, db.v[ib] += go; break;
            case OpKind::kSub: da.v[ia] += go, db.v[ib] -= go; break;
            case OpKind::kMul: da.v[ia] += go * y, db.v[ib] += go * x; break;
            default: da.v[ia] += go / y, db.v[ib] -= go * x / (y * y); break;
          }
        }
      });
      Accumulate(GradOf(grads, s.inputs[0], a.shape), da);
      Accumulate(GradOf(grads, s.inputs[1], b.shape), db);
      return;
    }
    if (s.kind == OpKind::kMatMul) {
      const DTensor& b = Get(ctx, values, s.inputs[1]);
      const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
      DTensor da{a.shape, std::vector<double>(a.v.size(), 0.0)};
      DTensor db{b.shape, std::vector<double>(b.v.size(), 0.0)};
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p)
          for (int64_t j = 0; j < n; ++j) {
            da.v[i * k + p] += g.v[i * n + j] * b.v[p * n + j];
            db.v[p * n + j] += a.v[i * k + p] * g.v[i * n + j];
          }
      Accumulate(GradOf(grads, s.inputs[0], a.shape), da);
      Accumulate(GradOf(grads, s.inputs[1], b.shape), db);
      return;
    }
    const DTensor& y = Get(ctx, values, s.output);
    DTensor da{a.shape, std::vector<double>(a.v.size(), 0.0)};
    for (size_t i = 0; i < a.v.size(); ++i) {
      const double go = g.v[i], x = a.v[i], r = y.v[i];
      double d = 0.0;
      switch (s.kind) {
        case OpKind::kNeg: d = -go; break;
        case OpKind::kIdentity: d = go; break;
        case OpKind::kRelu: d = x > 0 ? go : 0.0; break;
        case OpKind::kSigmoid: d = go * r * (1.0 - r); break;
        case OpKind::kTanh: d = go * (1.0 - r * r); break;
        case OpKind::kExp: d = go * r; break;
        case OpKind::kLog: d = go / x; break;
        case OpKind::kSqrt: d = go / (2.0 * r); break;
        default: break;
      }
      da.v[i] = d;
    }
    Accumulate(GradOf(grads, s.inputs[0], a.shape), da);
  }

  static void Accumulate(DTensor& into, const DTensor& add) {
    for (size_t i = 0; i < into.v.size() && i < add.v.size(); ++i) into.v[i] += add.v[i];
  }

  std::vector<std::string> xs_;
  std::string y_;
  std::vector<std::string> leaves_;  // xs then zs: the node's inputs
  std::unordered_map<std::string, DTensor> constants_;
  std::vector<Step> steps_;  // forward order
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.preview.training", "Gradient", 1, kOpsetMax, Gradient);

}  // namespace
}  // namespace onyx
