// QLinearLookupFusion (level all, CPU): a chain of per-element ops that starts at one uint8 /
// int8 value X and ends at a uint8 / int8 value Y, every other operand a one-element constant,
// its inside values read by nothing else, e.g. the GELU of an int8 BERT in QDQ form:
//   DQ(X) -> Div(sqrt 2) -> Erf -> Q -> QLinearAdd(1) -> QLinearMul(X, .) -> QLinearMul(0.5) = Y
// => Y = com.onyx.QLinearLookup(X, table)
// Y's code is then a function of X's code alone: the table is the chain's own kernels run on the
// 256 codes (cpu_evaluation.h), so the lookup gives what the chain gives, code for code, in one
// pass over the bytes where the chain read and wrote the tensor once per op, mostly in float.
// Members: the per-element ONNX ops of kUnary / kMultiOperand, Cast, DequantizeLinear and
// QuantizeLinear with one-element parameters, com.microsoft QLinearAdd / QLinearMul /
// QLinearSigmoid / QLinearLeakyRelu, and QLinearLookup itself (chains grow across rounds). Not
// com.onyx.QLinearSiLU: channels-last convs fuse it (QLinearConvSiluFusion). A lone table op
// (QLinearSigmoid, QLinearLeakyRelu, QLinearLookup) is left as it is: it already is one lookup.
#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "base/str_cat.h"
#include "optimizer/cpu_evaluation.h"
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"

namespace onyx {
namespace {

using namespace fusion;

const std::set<std::string> kUnary = {
    "Abs",  "Neg",       "Exp",         "Log",       "Sqrt",     "Reciprocal", "Erf",      "Tanh",  "Sigmoid", "Relu",
    "Elu",  "LeakyRelu", "HardSigmoid", "HardSwish", "Softplus", "Softsign",   "Gelu",     "Floor", "Ceil",    "Round",
    "Sin",  "Cos",       "Selu",        "Celu",      "Mish",     "Sign",       "Identity", "ThresholdedRelu"};
// Ops with more than one operand (every other one a constant or the chain's own value).
const std::set<std::string> kMultiOperand = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu", "Clip"};
const std::set<std::string> kOnnxQuant = {"DequantizeLinear", "QuantizeLinear", "Cast"};
const std::set<std::string> kMsQuant = {"QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu"};
// Ops that already are one lookup each.
const std::set<std::string> kTableOps = {"QLinearSigmoid", "QLinearLeakyRelu", "QLinearLookup"};

// A chain longer than this is left alone (its table would cost more to make than it saves).
constexpr size_t kMaxMembers = 64;

bool Is8Bit(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

// Value types as inferred when a sweep began (SnapshotElemType: BERT's 61 rewrites took 100 ms of
// its creation when each asked the editor anew). The tables a rewrite adds are constants, read
// directly.
class SweepTypes {
 public:
  explicit SweepTypes(GraphEditor& editor) : editor_(editor), types_(editor.TypeSnapshot()) {}

  DataType Elem(const std::string& value) const {
    if (const Tensor* c = editor_.Constant(value)) return c->dtype();
    return SnapshotElemType(types_, value);
  }
  // -1 when unknown.
  int64_t Rank(const std::string& value) const {
    if (const Tensor* c = editor_.Constant(value)) return static_cast<int64_t>(c->rank());
    const std::vector<Dim>* dims = SnapshotDims(types_, value);
    return dims != nullptr ? static_cast<int64_t>(dims->size()) : -1;
  }

 private:
  GraphEditor& editor_;
  const TypeMap types_;
};

// Whether the node is a per-element op a chain may hold (its operands not yet checked).
bool IsMemberOp(const ir::Node& n) {
  if (n.outputs.size() != 1 || n.HasSubgraphs()) return false;
  if (n.domain.empty() || n.domain == "ai.onnx")
    return kUnary.count(n.op_type) || kMultiOperand.count(n.op_type) || kOnnxQuant.count(n.op_type);
  if (n.domain == kMsDomain) return kMsQuant.count(n.op_type) > 0;
  return n.domain == kOnyxDomain && n.op_type == "QLinearLookup";
}

// Whether every constant operand of n (a QLinearLookup's table aside) is one element of a rank no
// greater than its other operands' (so it broadcasts without changing their shape).
bool ScalarConstants(GraphEditor& editor, const SweepTypes& types, const ir::Node& n) {
  int64_t rank = 0;
  bool rank_known = true;
  for (const std::string& in : n.inputs) {
    if (in.empty() || editor.Constant(in) != nullptr) continue;
    const int64_t r = types.Rank(in);
    if (r < 0) rank_known = false;
    rank = std::max(rank, r);
  }
  const size_t operands = n.op_type == "QLinearLookup" ? 1 : n.inputs.size();
  for (size_t i = 0; i < operands; ++i) {
    const Tensor* c = n.inputs[i].empty() ? nullptr : editor.Constant(n.inputs[i]);
    if (c == nullptr) continue;
    if (c->size() != 1) return false;
    if (c->rank() > 0 && (!rank_known || static_cast<int64_t>(c->rank()) > rank)) return false;
  }
  return true;
}

// Sorts `region` so that each member comes after the members it reads; false on a cycle.
bool TopologicalOrder(GraphEditor& editor, const std::unordered_set<const ir::Node*>& members,
                      std::vector<ir::Node*>& region) {
  std::vector<ir::Node*> ordered;
  std::unordered_set<const ir::Node*> placed;
  while (ordered.size() < region.size()) {
    bool progress = false;
    for (ir::Node* n : region) {
      if (placed.count(n)) continue;
      bool ready = true;
      for (const std::string& in : n->inputs) {
        ir::Node* p = in.empty() ? nullptr : editor.Producer(in);
        if (p != nullptr && members.count(p) && !placed.count(p)) ready = false;
      }
      if (!ready) continue;
      ordered.push_back(n);
      placed.insert(n);
      progress = true;
    }
    if (!progress) return false;
  }
  region = std::move(ordered);
  return true;
}

// The members that make `last`'s output, walking back from `last`: a producer joins when it is a
// member op with scalar constants and every reader of its output is already in. Producers first.
std::vector<ir::Node*> GrowRegion(GraphEditor& editor, const SweepTypes& types, ir::Node* last) {
  if (!ScalarConstants(editor, types, *last)) return {};
  std::unordered_set<const ir::Node*> members = {last};
  std::vector<ir::Node*> region = {last};
  for (bool grew = true; grew && region.size() < kMaxMembers;) {
    grew = false;
    for (size_t i = 0; i < region.size() && region.size() < kMaxMembers; ++i) {
      for (const std::string& in : region[i]->inputs) {
        if (in.empty() || editor.Constant(in) != nullptr) continue;
        ir::Node* p = editor.Producer(in);
        if (p == nullptr || members.count(p) || !IsMemberOp(*p) || !ScalarConstants(editor, types, *p) ||
            !OnlyReadBy(editor, in, region))
          continue;
        members.insert(p);
        region.push_back(p);
        grew = true;
      }
    }
  }
  if (!TopologicalOrder(editor, members, region)) return {};
  return region;
}

// The longest chain in `region` ending at its last node whose outside operands are one 8-bit
// value (its name in x) and constants, its inside values read by nothing else. Producers first.
std::vector<ir::Node*> PickChain(GraphEditor& editor, const SweepTypes& types, const std::vector<ir::Node*>& region,
                                 std::string& x) {
  std::vector<ir::Node*> best;
  std::unordered_set<std::string> tried;
  for (const ir::Node* n : region)
    for (const std::string& candidate : n->inputs) {
      if (candidate.empty() || editor.Constant(candidate) != nullptr || !tried.insert(candidate).second ||
          !Is8Bit(types.Elem(candidate)))
        continue;
      // The members that depend on the candidate, in order; none may read anything else.
      std::vector<ir::Node*> chain;
      std::unordered_set<std::string> made = {candidate};
      bool valid = true;
      for (ir::Node* m : region) {
        bool reads_made = false, reads_other = false;
        for (const std::string& in : m->inputs) {
          if (in.empty() || editor.Constant(in) != nullptr) continue;
          (made.count(in) ? reads_made : reads_other) = true;
        }
        if (!reads_made) continue;
        valid = valid && !reads_other;
        chain.push_back(m);
        made.insert(m->outputs[0]);
      }
      if (!valid || chain.empty() || chain.back() != region.back() || chain.size() <= best.size()) continue;
      for (size_t i = 0; i + 1 < chain.size() && valid; ++i) valid = OnlyReadBy(editor, chain[i]->outputs[0], chain);
      if (!valid) continue;
      best = std::move(chain);
      x = candidate;
    }
  return best;
}

// The chain's result for each of the 256 codes of x (in x's rank, so attributes such as a
// quantizer's axis stay valid), or nothing when a member's kernel cannot run on them.
std::optional<Tensor> MakeTable(GraphEditor& editor, const SweepTypes& types, const std::vector<ir::Node*>& chain,
                                const std::string& x) {
  Shape shape(static_cast<size_t>(std::max<int64_t>(types.Rank(x), 1)), 1);
  shape.back() = 256;
  Tensor codes(types.Elem(x), shape);
  auto* bytes = static_cast<uint8_t*>(codes.raw_data());
  for (int i = 0; i < 256; ++i) bytes[i] = static_cast<uint8_t>(i);
  std::unordered_map<std::string, Value> values = {{x, Value(codes)}};
  auto constants = [&editor](const std::string& name) { return editor.Constant(name); };
  for (const ir::Node* n : chain) {
    std::vector<Value> inputs;
    for (const std::string& in : n->inputs) {
      if (in.empty()) {
        inputs.emplace_back();
      } else if (auto it = values.find(in); it != values.end()) {
        inputs.push_back(it->second);
      } else if (const Tensor* c = editor.Constant(in)) {
        inputs.emplace_back(*c);
      } else {
        return std::nullopt;
      }
    }
    auto out = EvaluateOnCpu(*n, std::move(inputs), int64_t{1} << 20, constants, &editor.graph());
    if (out.size() != 1 || !out[0].is_tensor() || out[0].tensor().size() != 256) return std::nullopt;
    values[n->outputs[0]] = std::move(out[0]);
  }
  const Tensor& y = values.at(chain.back()->outputs[0]).tensor();
  if (!Is8Bit(y.dtype()) || y.dtype() != types.Elem(chain.back()->outputs[0])) return std::nullopt;
  Tensor table(y.dtype(), Shape{256});
  std::copy_n(static_cast<const uint8_t*>(y.raw_data()), 256, static_cast<uint8_t*>(table.raw_data()));
  return table;
}

class QLinearLookupFusion final : public Pass {
 public:
  std::string name() const override { return "QLinearLookupFusion"; }
  OptLevel level() const override { return OptLevel::kAll; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!CanRun(ctx, "QLinearLookup", kOnyxDomain, 1)) return 0;
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    // Float graphs skip the type inference: 8-bit values come from a quantizer, a Cast or a
    // QLinear op (a chain on an 8-bit graph input with none of these is left alone).
    const std::vector<ir::Node*> nodes = editor.Nodes();
    if (std::none_of(nodes.begin(), nodes.end(), [](const ir::Node* n) {
          return n->op_type == "QuantizeLinear" || n->op_type == "DequantizeLinear" || n->op_type == "Cast" ||
                 n->op_type.rfind("QLinear", 0) == 0;
        }))
      return 0;
    std::unordered_set<const ir::Node*> removed;
    std::optional<SweepTypes> types;  // inferred at the first member op
    for (ir::Node* last : nodes) {
      if (removed.count(last) || !IsMemberOp(*last)) continue;
      if (!types) types.emplace(editor);
      if (!Is8Bit(types->Elem(last->outputs[0]))) continue;
      std::string x;
      const std::vector<ir::Node*> chain = PickChain(editor, *types, GrowRegion(editor, *types, last), x);
      if (chain.empty() || (chain.size() == 1 && kTableOps.count(last->op_type))) continue;
      auto table = MakeTable(editor, *types, chain, x);
      if (!table) continue;
      const std::string y = last->outputs[0];
      const std::string table_name = editor.AddInitializer(y + "_lookup_table", std::move(*table));
      removed.insert(chain.begin(), chain.end());
      RemoveAll(editor, chain);
      AddFusedNode(editor, "QLinearLookup", kOnyxDomain, 1, {x, table_name}, {y});
      ++ctx.counts[StrCat("chains of ", chain.size(), chain.size() == 1 ? " op" : " ops")];
      ++rewrites;
    }
    return rewrites;
  }
};

// After the QDQ fusions and QLinearSiluFusion (160) have made their ops, before the layouts.
ONYX_REGISTER_PASS(QLinearLookupFusion, 165);

}  // namespace
}  // namespace onyx
