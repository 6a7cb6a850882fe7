// Constant folding (basic): a node whose inputs are all constants is run once with the CPU
// kernels and replaced by initializers. Skipped: nodes with subgraphs, random ops, QDQ
// dequantization (kept for quantized fusions), results over the size limit that are larger
// than their inputs (folding must not bloat the model), and non-tensor results.
#include <algorithm>
#include <set>

#include "optimizer/cpu_evaluation.h"
#include "optimizer/pass.h"
#include "providers/cpu/kernels/linalg/deferred_half_widening.h"

namespace onyx {
namespace {

const std::set<std::string> kNeverFold = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                          "Multinomial",  "Bernoulli",     "DequantizeLinear", "QuantizeLinear"};

class ConstantFolding final : public Pass {
 public:
  std::string name() const override { return "ConstantFolding"; }
  OptLevel level() const override { return OptLevel::kBasic; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int folded = 0;
    for (ir::Node* node : editor.Nodes()) {
      if (node->HasSubgraphs() || kNeverFold.count(node->op_type)) continue;
      std::vector<Value> inputs;
      int64_t input_bytes = 0;
      bool all_constant = true;
      for (const auto& in : node->inputs) {
        if (in.empty()) {
          inputs.emplace_back();
          continue;
        }
        const Tensor* t = editor.Constant(in);
        if (t == nullptr) {
          all_constant = false;
          break;
        }
        input_bytes += t->byte_size();
        inputs.emplace_back(*t);
      }
      if (!all_constant) continue;
      for (const auto& v : inputs)
        if (v.is_tensor()) MaterializeDeferredWidening(v.tensor());  // a float16 weight's values
      auto results = EvaluateOnCpu(*node, std::move(inputs), std::max(ctx.options.fold_size_limit_bytes, input_bytes),
                                   nullptr, &editor.graph());
      if (results.empty()) continue;
      bool fits = true;
      for (size_t i = 0; i < results.size(); ++i) {
        if (!node->outputs[i].empty() && !results[i].is_tensor()) fits = false;
        if (results[i].is_tensor() && results[i].tensor().byte_size() > ctx.options.fold_size_limit_bytes &&
            results[i].tensor().byte_size() > input_bytes)
          fits = false;
      }
      if (!fits) continue;
      const std::vector<std::string> outputs = node->outputs;
      editor.RemoveNode(node);
      for (size_t i = 0; i < outputs.size(); ++i) {
        if (outputs[i].empty()) continue;
        // Folded results own their bytes (kernels may have returned views of inputs).
        editor.graph().initializers[outputs[i]] = results[i].tensor();
      }
      ++ctx.counts["folded " + node->op_type];
      ++folded;
    }
    return folded;
  }

};

ONYX_REGISTER_PASS(ConstantFolding, 100);

}  // namespace
}  // namespace onyx
