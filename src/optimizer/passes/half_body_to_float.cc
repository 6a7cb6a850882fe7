// Computes the float16 and bfloat16 bodies of a model in float32 (basic), as ONNX Runtime's CPU
// provider does with its inserted Casts: the allow-listed nodes (half_body_ops.h) that compute
// in a half type are rewritten to float, their half constant inputs become float initializers
// once at load, a Cast(float -> half) entering the body and a Cast(half -> float) leaving it
// fold away, and Casts are inserted only where a half value must stay half: a graph input or
// output, a node left out, a subgraph reading it. Later passes then fuse the float graph as any
// other, and kernels pack float weights once instead of widening half ones on every Run.
#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "base/float_types.h"
#include "linalg/bf16_gemm.h"
#include "linalg/f16_widen.h"
#include "optimizer/pass.h"
#include "optimizer/passes/half_body_ops.h"
#include "optimizer/passes/half_widen.h"
#include "optimizer/pattern_util.h"
#include "providers/cpu/kernels/linalg/deferred_half_widening.h"
#include "tensor/small_page_allocator.h"

namespace onyx {
namespace {

bool IsHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }
bool IsFloatOrHalf(DataType t) { return IsHalf(t) || t == DataType::kFloat || t == DataType::kDouble; }

ir::Attribute CastTo(DataType to) {
  ir::Attribute a;
  a.name = "to";
  a.type = ir::AttrType::kInt;
  a.i = static_cast<int64_t>(to);
  return a;
}

}  // namespace

Tensor WidenHalfToFloat(const Tensor& half, bool small_pages) {
  Tensor out(DataType::kFloat, half.shape(), small_pages ? CpuSmallPageAllocator() : nullptr);
  float* dst = out.data<float>();
  const uint16_t* src = static_cast<const uint16_t*>(half.raw_data());
  const int64_t n = half.size();
  if (half.dtype() == DataType::kFloat16) {
    linalg::WidenHalf(src, dst, n);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = BFloat16BitsToFloat(src[i]);
  }
  NoteHalfWeightFloatCopy(out.byte_size());
  return out;
}

namespace {

bool TypeMentionsHalf(const TypeInfo* t) {
  for (; t != nullptr; t = t->elem.get())
    if (IsHalf(t->elem_type)) return true;
  return false;
}

// Whether a half value can arise in the graph at all: from a declared type, a constant, or an
// attribute naming a half type (Cast's `to`, a dtype; any int attribute equal to a half type's
// code counts, to be safe). Type inference, which finding the body needs, is the pass's
// main cost, and nearly all graphs are float.
bool MentionsHalf(const ir::Graph& g) {
  const auto half_code = [](int64_t v) {
    return v == static_cast<int64_t>(DataType::kFloat16) || v == static_cast<int64_t>(DataType::kBFloat16);
  };
  for (const auto* values : {&g.inputs, &g.outputs})
    for (const auto& v : *values)
      if (TypeMentionsHalf(v.type.get())) return true;
  for (const auto& [name, type] : g.value_types)
    if (TypeMentionsHalf(type.get())) return true;
  for (const auto& [name, t] : g.initializers)
    if (IsHalf(t.dtype())) return true;
  for (const auto& node : g.nodes)
    for (const auto& a : node->attributes) {
      if (a.type == ir::AttrType::kInt && half_code(a.i)) return true;
      if (std::any_of(a.ints.begin(), a.ints.end(), half_code)) return true;
      if (a.t.defined() && IsHalf(a.t.dtype())) return true;
      for (const auto& t : a.tensors)
        if (IsHalf(t.dtype())) return true;
      for (const auto& t : a.types)
        if (TypeMentionsHalf(t.get())) return true;
      if (a.g && MentionsHalf(*a.g)) return true;
      for (const auto& sub : a.graphs)
        if (MentionsHalf(*sub)) return true;
    }
  return false;
}

class HalfBodyToFloat final : public Pass {
 public:
  std::string name() const override { return "HalfBodyToFloat"; }
  // Basic: every session computes half bodies in float, as ONNX Runtime does at every level.
  OptLevel level() const override { return OptLevel::kBasic; }

  // Only for sessions on the CPU alone: another provider (CUDA) has half kernels of its own.
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    for (const auto& p : ctx.options.providers)
      if (p != "CPU") return 0;
    GraphEditor& editor = ctx.editor;
    // The whole model's graph (with every subgraph): a subgraph may read half values of an
    // enclosing graph.
    const ir::Graph* model_graph = &editor.graph();
    while (model_graph->parent != nullptr) model_graph = model_graph->parent;
    if (!MentionsHalf(*model_graph)) return 0;
    editor_ = &editor;
    members_.clear();
    FindMembers();
    if (members_.empty()) return 0;
    // Graph order, so that new names and nodes do not depend on pointer hashing.
    ordered_.clear();
    for (ir::Node* node : editor.Nodes())
      if (members_.count(node)) ordered_.push_back(node);
    MarkBf16Weights(ctx);
    Plan plan = MakePlan(ctx);
    Rewrite(plan);
    ctx.counts["nodes computed in float"] += static_cast<int>(members_.size());
    return static_cast<int>(members_.size());
  }

 private:
  // The half type of a tensor value, or kUndefined (unknown, or not a half tensor).
  DataType HalfTypeOf(const std::string& value) {
    if (value.empty()) return DataType::kUndefined;
    const TypeInfo* t = editor_->TypeOf(value);
    if (t == nullptr || t->kind != TypeInfo::Kind::kTensor || !IsHalf(t->elem_type)) return DataType::kUndefined;
    return t->elem_type;
  }

  // The one half type every floating-point input (those the op's type ties together) and
  // output of the node has; kUndefined when it has none, mixes types, or a type is unknown.
  DataType NodeHalfType(const ir::Node& node, const HalfBodyOp& op) {
    DataType half = DataType::kUndefined;
    auto check = [&](const std::string& value) {
      if (value.empty()) return true;
      const TypeInfo* t = editor_->TypeOf(value);
      if (t == nullptr || t->kind != TypeInfo::Kind::kTensor || t->elem_type == DataType::kUndefined) return false;
      if (!IsFloatOrHalf(t->elem_type)) return true;
      if (!IsHalf(t->elem_type) || (half != DataType::kUndefined && half != t->elem_type)) return false;
      half = t->elem_type;
      return true;
    };
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (!op.KeepsInput(i) && !check(node.inputs[i])) return DataType::kUndefined;
    for (const auto& out : node.outputs)
      if (!check(out)) return DataType::kUndefined;
    return half;
  }

  void FindMembers() {
    std::unordered_map<ir::Node*, const HalfBodyOp*> movers;  // data movement, joins when next to the body
    for (ir::Node* node : editor_->Nodes()) {
      const HalfBodyOp* op = FindHalfBodyOp(node->domain, node->op_type);
      if (op == nullptr || NodeHalfType(*node, *op) == DataType::kUndefined) continue;
      if (op->computes) members_.insert(node);
      else movers.emplace(node, op);
    }
    // A Reshape or Transpose alone between half nodes stays half (it needs no float math and
    // two Casts would cost more); next to the body it joins it, to a fixed point.
    for (bool grew = true; grew;) {
      grew = false;
      for (auto it = movers.begin(); it != movers.end();) {
        if (TouchesMember(*it->first)) {
          members_.insert(it->first);
          it = movers.erase(it);
          grew = true;
        } else {
          ++it;
        }
      }
    }
  }

  bool TouchesMember(const ir::Node& node) {
    for (const auto& in : node.inputs)
      if (members_.count(editor_->Producer(in))) return true;
    for (const auto& out : node.outputs)
      for (ir::Node* c : editor_->Consumers(out))
        if (members_.count(c)) return true;
    return false;
  }

  bool ReadsInFloat(const ir::Node& member, size_t input) {
    const HalfBodyOp* op = FindHalfBodyOp(member.domain, member.op_type);
    return !op->KeepsInput(input) && HalfTypeOf(member.inputs[input]) != DataType::kUndefined;
  }

  struct Plan {
    // Half value -> the float value body nodes read instead.
    std::unordered_map<std::string, std::string> float_name;
    // Body outputs renamed to a new float name; a Cast makes the half value under its old name.
    std::vector<std::tuple<ir::Node*, size_t, DataType>> renamed_outputs;
    // Half values entering the body through a Cast(half -> float) to insert.
    std::vector<std::pair<std::string, DataType>> entry_casts;
    // Values whose type changes to float, or new float values.
    std::vector<std::string> float_values;
    // Readers outside the body that may read the float value instead: Shape and Size (they read
    // only dims) and Cast(half -> float) (it becomes a float -> float Cast NoOpElimination drops).
    std::vector<std::pair<ir::Node*, size_t>> float_readers;
    // Cast(x -> half) entering the body become Cast(x -> float): (x, the float value).
    std::vector<std::pair<std::string, std::string>> direct_casts;
    std::vector<ir::Node*> folded_entry_casts;
    // Float initializers to make from half constants.
    struct Widened {
      std::string name;
      const Tensor* half;
      bool small_pages;  // see PackedOrGatheredOnly
      bool deferred;     // values left unwritten: see OnlyPacked
    };
    std::vector<Widened> widened;
  };

  Plan MakePlan(PassContext& ctx) {
    Plan plan;
    // Values the body produces.
    for (ir::Node* node : ordered_) {
      for (size_t i = 0; i < node->outputs.size(); ++i) {
        const std::string& v = node->outputs[i];
        const DataType half = HalfTypeOf(v);
        if (half == DataType::kUndefined) continue;
        bool needs_half = editor_->IsGraphOutput(v);
        for (ir::Node* c : editor_->Consumers(v)) {
          if (members_.count(c)) continue;
          const bool by_input = std::find(c->inputs.begin(), c->inputs.end(), v) != c->inputs.end();
          if (by_input && ReadsFloatAsWell(*c, v) && !HasSubgraphs(*c)) {
            for (size_t k = 0; k < c->inputs.size(); ++k)
              if (c->inputs[k] == v) plan.float_readers.emplace_back(c, k);
          } else {
            needs_half = true;
          }
        }
        std::string fv = v;
        if (needs_half) {
          fv = editor_->UniqueName(v + "_float");
          plan.renamed_outputs.emplace_back(node, i, half);
          ++ctx.counts["half values kept by a Cast"];
        }
        plan.float_name[v] = fv;
        plan.float_values.push_back(fv);
      }
    }
    // Values entering the body.
    for (ir::Node* node : ordered_) {
      for (size_t i = 0; i < node->inputs.size(); ++i) {
        const std::string& v = node->inputs[i];
        if (plan.float_name.count(v) || !ReadsInFloat(*node, i)) continue;
        if (const Tensor* c = editor_->Constant(v)) {
          // Added when rewriting: a new initializer now would make the editor infer types again.
          plan.float_name[v] = editor_->UniqueName(v + "_float");
          plan.widened.push_back({plan.float_name[v], c, PackedOrGatheredOnly(v), OnlyPacked(ctx, v, *c)});
          ++ctx.counts["half initializers made float"];
          continue;
        }
        ir::Node* p = editor_->Producer(v);
        if (IsOp(p, "Cast") && IsTensorNotHalf(p->inputs[0])) {
          // Cast(x -> half) into the body: the body reads x itself when x is float, or
          // Cast(x -> float) (int, bool, double x): one rounding fewer either way.
          if (IsFloat(p->inputs[0])) {
            plan.float_name[v] = p->inputs[0];
          } else {
            plan.float_name[v] = editor_->UniqueName(v + "_float");
            plan.direct_casts.emplace_back(p->inputs[0], plan.float_name[v]);
            plan.float_values.push_back(plan.float_name[v]);
          }
          bool still_read = editor_->IsGraphOutput(v);
          for (ir::Node* c : editor_->Consumers(v)) still_read = still_read || !members_.count(c);
          if (!still_read) plan.folded_entry_casts.push_back(p);
          ++ctx.counts["Casts into the body folded"];
          continue;
        }
        const std::string fv = editor_->UniqueName(v + "_float");
        plan.float_name[v] = fv;
        plan.entry_casts.emplace_back(v, HalfTypeOf(v));
        plan.float_values.push_back(fv);
        ++ctx.counts["Casts to float inserted"];
      }
    }
    for (const auto& [reader, k] : plan.float_readers)
      if (reader->op_type == "Cast") ++ctx.counts["Casts out of the body folded"];
    return plan;
  }

  // A bfloat16 body's products with bfloat16 constant weights keep bfloat16 precision: the node
  // gets the int attribute linalg::kBf16Attribute = 1, and its kernel runs the bf16 GEMM (AVX-512 BF16)
  // on the weight rounded back to bfloat16 (exact: it was widened from bfloat16) and the
  // activations rounded to bfloat16, as the model itself computes them; where the CPU lacks
  // AVX-512 BF16 the kernel ignores it and stays float32. Fusions that replace such a node
  // carry the attribute over (FusedMatMul, Attention, FusedConv, NchwcConv). float16 bodies are never
  // marked: float16 has more mantissa than bfloat16.
  void MarkBf16Weights(PassContext& ctx) {
    for (ir::Node* node : ordered_) {
      if (!TakesBf16Weights(*node)) continue;
      const HalfBodyOp* op = FindHalfBodyOp(node->domain, node->op_type);
      if (NodeHalfType(*node, *op) != DataType::kBFloat16 || node->inputs.size() < 2) continue;
      const Tensor* w = editor_->Constant(node->inputs[1]);
      if (w == nullptr || w->dtype() != DataType::kBFloat16 || node->FindAttribute(linalg::kBf16Attribute)) continue;
      ir::Attribute a;
      a.name = linalg::kBf16Attribute;
      a.type = ir::AttrType::kInt;
      a.i = 1;
      node->attributes.push_back(std::move(a));
      ++ctx.counts["products kept in bfloat16"];
    }
  }

  static bool TakesBf16Weights(const ir::Node& node) {
    // Convs: the NCHWc conv kernel reads the mark for pointwise convs (others stay float32).
    if (node.domain.empty()) return node.op_type == "MatMul" || node.op_type == "Gemm" || node.op_type == "Conv";
    return node.domain == "com.microsoft" &&
           (node.op_type == "FusedMatMul" || node.op_type == "FusedConv" || node.op_type == "Attention");
  }

  // A constant read only as the B operand of MatMul / Gemm (itself or through a Transpose of the
  // matrix, a tied LM head), or as the table of Gather: its kernel packs it and drops the widened
  // copy, or reads a few rows of it per Run, where huge pages buy nothing. Such a copy goes on small
  // pages (docs/memory.md: on a VM that hands freed memory back to its host, a fresh 2 MB page
  // costs a host fault for all of it). Others (Conv weights, read again by BatchNormalization
  // folding and the NCHWc / Winograd packs) stay on the default huge pages. Cold creation, 5 fresh
  // workers alternating, 1 thread, medians (CPU ms): all widened copies on small pages took
  // BERT-base float16 1569 -> 1049 ms and gpt2_small float16 2491 -> 1374 ms, but ResNet-50
  // float16 328 -> 540 ms.
  bool PackedOrGatheredOnly(const std::string& value) {
    if (editor_->IsGraphOutput(value)) return false;
    const std::vector<ir::Node*> readers = editor_->Consumers(value);
    for (const ir::Node* r : readers)
      if (!ReadAsMatMulB(*r, value) && !ReadAsGatherTable(*r, value) && !TransposedForMatMulB(*r)) return false;
    return !readers.empty();
  }

  // A float16 weight of the top graph whose float values only MatMul / Gemm kernels read, as
  // their B (directly or through a Transpose MatMulConstantTransposeFusion removes), or Gather
  // as its table: left unwritten (DeferWidening), the kernels pack from the float16 bits and
  // Gather widens the rows it reads (issue 18: BERT-base float16 no longer fills and drops
  // 440 MB of float copies at creation, nor widens its 94 MB word embeddings). Passes that read
  // a weight's values (constant folding, say of a Transpose left) write them first; so does the
  // session for any other reader it finds. Small weights are not worth it.
  bool OnlyPacked(const PassContext& ctx, const std::string& value, const Tensor& half) {
    constexpr int64_t kMinDeferredElements = 16384;  // 64 KB of floats
    if (!ctx.options.defer_half_widening || half.dtype() != DataType::kFloat16 || half.rank() != 2 ||
        half.size() < kMinDeferredElements || editor_->graph().parent != nullptr || editor_->IsGraphOutput(value) ||
        editor_->graph().IsGraphInput(value))
      return false;
    const std::vector<ir::Node*> readers = editor_->Consumers(value);
    for (const ir::Node* r : readers) {
      const bool packed = ReadAsMatMulB(*r, value) && editor_->Constant(r->inputs[0]) == nullptr;
      if (!packed && !ReadAsGatherTable(*r, value) && !TransposedForMatMulB(*r)) return false;
    }
    return !readers.empty();
  }

  static bool OnlyAt(const ir::Node& node, const std::string& value, size_t index) {
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] == value && i != index) return false;
    return true;
  }
  static bool ReadAsMatMulB(const ir::Node& r, const std::string& value) {
    return r.domain.empty() && (r.op_type == "MatMul" || r.op_type == "Gemm") && OnlyAt(r, value, 1);
  }
  static bool ReadAsGatherTable(const ir::Node& r, const std::string& value) {
    return r.domain.empty() && r.op_type == "Gather" && OnlyAt(r, value, 0);
  }
  // Transpose(value) read only as MatMul / Gemm's B: packed from value (MatMulConstantTransposeFusion).
  bool TransposedForMatMulB(const ir::Node& r) {
    if (!r.domain.empty() || r.op_type != "Transpose" || r.outputs.size() != 1) return false;
    const std::string& t = r.outputs[0];
    if (editor_->IsGraphOutput(t)) return false;
    const std::vector<ir::Node*> readers = editor_->Consumers(t);
    for (const ir::Node* m : readers)
      if (!ReadAsMatMulB(*m, t)) return false;
    return !readers.empty();
  }

  bool IsTensorNotHalf(const std::string& value) {
    const TypeInfo* t = editor_->TypeOf(value);
    return t && t->kind == TypeInfo::Kind::kTensor && t->elem_type != DataType::kUndefined && !IsHalf(t->elem_type) &&
           t->elem_type != DataType::kString;
  }

  bool IsFloat(const std::string& value) {
    const TypeInfo* t = editor_->TypeOf(value);
    return t && t->kind == TypeInfo::Kind::kTensor && t->elem_type == DataType::kFloat;
  }

  // Whether a node outside the body reads a half value just as well in float: Shape and Size
  // read only its dims, and a Cast(half -> float) becomes a float -> float Cast.
  static bool ReadsFloatAsWell(const ir::Node& c, const std::string& v) {
    if (!c.domain.empty()) return false;
    if (c.op_type == "Shape" || c.op_type == "Size") return true;
    return c.op_type == "Cast" && c.inputs.size() == 1 && c.inputs[0] == v &&
           AttrInt(c, "to", 0) == static_cast<int64_t>(DataType::kFloat);
  }

  static bool HasSubgraphs(const ir::Node& node) {
    for (const auto& a : node.attributes)
      if (a.g || !a.graphs.empty()) return true;
    return false;
  }

  void Rewrite(const Plan& plan) {
    GraphEditor& editor = *editor_;
    ir::Graph& graph = editor.graph();
    // The editor's producer map is not used after this point: Finish indexes the graph again.
    for (const auto& w : plan.widened)
      graph.initializers[w.name] = w.deferred ? DeferWidening(*w.half) : WidenHalfToFloat(*w.half, w.small_pages);
    for (const auto& [node, i, half] : plan.renamed_outputs) {
      const std::string v = node->outputs[i];
      const std::string& fv = plan.float_name.at(v);
      node->outputs[i] = fv;
      ir::Node* cast = editor.AddNode("Cast", "", {fv}, {v}, v + "_to_half");
      cast->attributes.push_back(CastTo(half));
    }
    for (const auto& [v, half] : plan.entry_casts) {
      ir::Node* cast = editor.AddNode("Cast", "", {v}, {plan.float_name.at(v)}, v + "_to_float");
      cast->attributes.push_back(CastTo(DataType::kFloat));
    }
    for (const auto& [x, fv] : plan.direct_casts) {
      ir::Node* cast = editor.AddNode("Cast", "", {x}, {fv}, fv + "_cast");
      cast->attributes.push_back(CastTo(DataType::kFloat));
    }
    for (ir::Node* node : ordered_)
      for (size_t i = 0; i < node->inputs.size(); ++i) {
        auto it = plan.float_name.find(node->inputs[i]);
        if (it != plan.float_name.end() && ReadsInFloatByName(*node, i)) editor.SetInput(node, i, it->second);
      }
    for (const auto& [reader, k] : plan.float_readers) editor.SetInput(reader, k, plan.float_name.at(reader->inputs[k]));
    for (ir::Node* cast : plan.folded_entry_casts) editor.RemoveNode(cast);
    // A declared half type would override inference: the values are float now, and inference
    // gives their dims again (declared dims an exporter's shape inference named would also
    // hide from fusions that two dims are equal).
    for (const auto& value : plan.float_values) graph.value_types.erase(value);
  }

  // Inputs read in float, decided before any rewiring (the plan keys inputs by half name).
  bool ReadsInFloatByName(const ir::Node& member, size_t input) {
    const HalfBodyOp* op = FindHalfBodyOp(member.domain, member.op_type);
    return !op->KeepsInput(input);
  }

  GraphEditor* editor_ = nullptr;
  std::unordered_set<ir::Node*> members_;
  std::vector<ir::Node*> ordered_;
};

ONYX_REGISTER_PASS(HalfBodyToFloat, 5);

}  // namespace
}  // namespace onyx
