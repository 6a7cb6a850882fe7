#include "runtime/fusion_checks.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace onyx {
namespace {

struct GraphIndex {
  const ir::Graph& graph;
  std::unordered_map<std::string, ir::Node*> producer;
  std::unordered_map<std::string, std::vector<ir::Node*>> consumers;

  explicit GraphIndex(const ir::Graph& g) : graph(g), producer(g.Producers()), consumers(g.Consumers()) {}

  ir::Node* Producer(const std::string& v) const {
    auto it = producer.find(v);
    return it == producer.end() ? nullptr : it->second;
  }
  // Nodes reading v, and "the graph output" when it is one.
  std::vector<std::string> Readers(const std::string& v) const {
    std::vector<std::string> names;
    auto it = consumers.find(v);
    if (it != consumers.end())
      for (const ir::Node* n : it->second) names.push_back(n->name);
    if (graph.IsGraphOutput(v)) names.push_back("(graph output)");
    return names;
  }
  const TypeInfo* TypeOf(const std::string& v) const {
    for (const auto& in : graph.inputs)
      if (in.name == v) return in.type.get();
    auto it = graph.value_types.find(v);
    return it == graph.value_types.end() ? nullptr : it->second.get();
  }
};

int64_t IntAttr(const ir::Node& n, const char* name, int64_t fallback) {
  const ir::Attribute* a = n.FindAttribute(name);
  return a != nullptr ? a->i : fallback;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string ShapeText(const TypeInfo* t) {
  if (t == nullptr || !t->shape) return "unknown";
  std::string out = "[";
  for (size_t i = 0; i < t->shape->size(); ++i) {
    const Dim& d = (*t->shape)[i];
    out += (i ? ", " : "") + (d.known() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param));
  }
  return out + "]";
}

// Conv -> BatchNormalization left unfused: the first of ConvBatchNormFusion's conditions that fails.
void CheckConvBatchNorm(const GraphIndex& index, OptLevel level, std::vector<FusionMiss>& misses) {
  for (const auto& node : index.graph.nodes) {
    if (node->op_type != "BatchNormalization" || !node->domain.empty() || node->inputs.empty()) continue;
    ir::Node* conv = index.Producer(node->inputs[0]);
    if (conv == nullptr || conv->op_type != "Conv" || !conv->domain.empty()) continue;
    FusionMiss miss{"Conv+BatchNormalization", {conv->name, node->name}, ""};
    std::vector<std::string> extra_outputs;
    for (size_t i = 1; i < node->outputs.size(); ++i)
      if (!node->outputs[i].empty() && !index.Readers(node->outputs[i]).empty()) extra_outputs.push_back(node->outputs[i]);
    const std::vector<std::string> conv_readers = index.Readers(conv->outputs[0]);
    if (level < OptLevel::kExtended) {
      miss.reason = "ConvBatchNormFusion runs from level extended; this session's level is " +
                    std::string(OptLevelName(level));
    } else if (node->inputs.size() != 5) {
      miss.reason = "the BatchNormalization has " + std::to_string(node->inputs.size()) + " inputs, not 5";
    } else if (!extra_outputs.empty()) {
      miss.reason = "the BatchNormalization's running statistics (" + Join(extra_outputs) +
                    ") are read: only its first output may be used";
    } else if (IntAttr(*node, "spatial", 1) != 1 || IntAttr(*node, "training_mode", 0) != 0) {
      miss.reason = "the BatchNormalization is not an inference one (spatial != 1 or training_mode != 0)";
    } else if (conv_readers.size() != 1) {
      miss.reason = "the Conv's output '" + conv->outputs[0] + "' is read by " + std::to_string(conv_readers.size()) +
                    " nodes (" + Join(conv_readers) + "): folding the BatchNormalization into the Conv would change "
                    "what the others read";
    } else if (conv->inputs.size() < 2 || !index.graph.IsInitializer(conv->inputs[1])) {
      miss.reason = "the Conv's weights are not a constant initializer";
    } else {
      for (size_t i = 1; i < 5 && miss.reason.empty(); ++i) {
        const Tensor* t = index.graph.FindInitializer(node->inputs[i]);
        if (t == nullptr) miss.reason = "BatchNormalization input '" + node->inputs[i] + "' is not a constant";
        else if (t->rank() != 1) miss.reason = "BatchNormalization input '" + node->inputs[i] + "' is not 1-D";
      }
      if (miss.reason.empty()) miss.reason = "the parameters' dtypes or channel counts differ from the Conv's";
    }
    misses.push_back(std::move(miss));
  }
}

// Walks from a mask operand back through the ops of the extended-mask chain to its source.
std::string MaskSource(const GraphIndex& index, std::string v, std::vector<std::string>& chain) {
  static const std::unordered_set<std::string> kChainOps = {"Mul", "Sub", "Cast", "Unsqueeze", "Reshape", "Expand"};
  for (int step = 0; step < 12; ++step) {
    ir::Node* p = index.Producer(v);
    if (p == nullptr) return v;
    if (!kChainOps.count(p->op_type)) return v;
    chain.push_back(p->op_type);
    // Follow the operand that is not a constant.
    std::string next;
    for (const auto& in : p->inputs)
      if (!in.empty() && !index.graph.IsInitializer(in)) {
        next = in;
        break;
      }
    if (next.empty()) return v;
    v = next;
  }
  return v;
}

bool IsMatMul(const ir::Node* n) { return n != nullptr && (n->op_type == "MatMul" || n->op_type == "FusedMatMul"); }

// MatMul -> [scale / mask Add / Where] -> Softmax -> MatMul left unfused (other fusions may have
// taken parts: FusedMatMul holds a scaling, BiasSoftmax the mask Add).
void CheckAttention(const GraphIndex& index, OptLevel level, std::vector<FusionMiss>& misses) {
  static const std::unordered_set<std::string> kScoreOps = {"Add", "Div", "Mul", "Where"};
  for (const auto& node : index.graph.nodes) {
    const bool bias_softmax = node->op_type == "BiasSoftmax";
    if ((node->op_type != "Softmax" && !bias_softmax) || node->inputs.empty()) continue;
    auto readers = index.consumers.find(node->outputs[0]);
    if (readers == index.consumers.end() || readers->second.size() != 1 || !IsMatMul(readers->second[0])) continue;
    std::vector<std::string> names = {node->name};
    std::string mask;  // the operand added to the scores
    if (bias_softmax && node->inputs.size() > 1) mask = node->inputs[1];
    ir::Node* p = index.Producer(node->inputs[0]);
    while (p != nullptr && kScoreOps.count(p->op_type) && names.size() < 6) {
      names.push_back(p->name);
      if (p->op_type == "Add" && mask.empty() && p->inputs.size() == 2) {
        // The operand that does not come from the scores' chain.
        const ir::Node* first = index.Producer(p->inputs[0]);
        const bool first_is_scores = first != nullptr && (IsMatMul(first) || kScoreOps.count(first->op_type));
        mask = p->inputs[first_is_scores ? 1 : 0];
        p = index.Producer(p->inputs[first_is_scores ? 0 : 1]);
        continue;
      }
      p = index.Producer(p->inputs[0]);
    }
    if (!IsMatMul(p)) continue;
    names.push_back(p->name);
    std::reverse(names.begin(), names.end());  // Q.K^T first, the probabilities' MatMul last
    names.push_back(readers->second[0]->name);
    FusionMiss miss{"Attention", names, ""};
    if (level < OptLevel::kExtended) {
      miss.reason = "AttentionFusion runs from level extended; this session's level is " + std::string(OptLevelName(level));
    } else if (!mask.empty()) {
      std::vector<std::string> chain;
      const std::string source = MaskSource(index, mask, chain);
      const TypeInfo* type = index.TypeOf(source);
      const size_t rank = type != nullptr && type->shape ? type->shape->size() : 0;
      if (rank != 2) {
        miss.reason = "unsupported mask shape: the mask added to the scores comes from '" + source + "' of shape " +
                      ShapeText(type) + "; AttentionFusion takes a [batch, sequence] key padding mask, extended as "
                      "(1 - mask[:, None, None, :]) * fill";
      } else {
        miss.reason = "the mask from '" + source + "' (" + ShapeText(type) + ") reaches the scores through " +
                      (chain.empty() ? std::string("no ops") : Join(chain)) +
                      ", not the (1 - Cast(Unsqueeze(Unsqueeze(mask)))) * fill chain AttentionFusion matches";
      }
    } else {
      miss.reason = "the Q, K, V projections, reshapes or transposes around this core do not match "
                    "AttentionFusion's pattern (one [hidden, hidden] MatMul + bias each, heads split by Reshape + "
                    "Transpose)";
    }
    misses.push_back(std::move(miss));
  }
}

}  // namespace

std::vector<FusionMiss> FindFusionMisses(const ir::Graph& graph, OptLevel level) {
  GraphIndex index(graph);
  std::vector<FusionMiss> misses;
  CheckConvBatchNorm(index, level, misses);
  CheckAttention(index, level, misses);
  return misses;
}

}  // namespace onyx
