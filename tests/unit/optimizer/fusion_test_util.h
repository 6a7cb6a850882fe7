// Helpers for the fusion pass tests: run passes alone (with chosen providers), read the fused
// node back, build inputs, and compare the optimized model with the original when Onyx has CPU
// kernels for every node of both (fused com.microsoft ops get theirs from the kernel branches;
// until then the comparison is skipped, naming the missing kernels, while the structural
// checks still run).
#pragma once

// GCC 12 reports a -Wrestrict false positive in std::string concatenation inlined from
// ModelBuilder::Type when inputs have symbolic dims.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <cmath>
#include <set>

#include "optimizer/pass_test_util.h"
#include "providers/kernel.h"

namespace onyx::test {

// Runs `passes` alone. Fusions are made whether or not Onyx has kernels for the fused ops yet
// (as `onyx optimize` does) unless `require_kernels` (as a session does).
inline PassRun RunPasses(const std::string& model_bytes, std::vector<std::string> passes,
                         OptLevel level = OptLevel::kAll, std::vector<std::string> providers = {"CPU"},
                         bool require_kernels = false) {
  auto model = LoadModelFromBytes(model_bytes.data(), model_bytes.size());
  OptimizerOptions options;
  options.level = level;
  options.only_passes = std::move(passes);
  options.providers = std::move(providers);
  options.require_kernels = require_kernels;
  PassRun run;
  run.report = OptimizeModel(*model, options);
  run.ops_after = CountOps(*model->graph);
  run.optimized_bytes = SerializeModel(*model);
  return run;
}

inline PassRun RunFusion(const std::string& model_bytes, const std::string& pass, OptLevel level = OptLevel::kAll) {
  return RunPasses(model_bytes, {pass}, level);
}

// Nodes of a model without a CPU kernel, as "domain.op(opset)".
inline std::set<std::string> MissingCpuKernels(const std::string& bytes) {
  std::set<std::string> missing;
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  for (const auto& node : model->graph->nodes)
    if (KernelRegistry::Global().Find("CPU", node->domain, node->op_type, node->opset) == nullptr)
      missing.insert((node->domain.empty() ? "" : node->domain + ".") + node->op_type + "(" +
                     std::to_string(node->opset) + ")");
  return missing;
}

// ExpectSameOutputs, skipped (naming the missing kernels) when a node cannot run yet.
inline void ExpectSameOutputsWhenRunnable(const std::string& original, const std::string& optimized,
                                          const NamedValues& feeds) {
  std::set<std::string> missing = MissingCpuKernels(original);
  for (const auto& m : MissingCpuKernels(optimized)) missing.insert(m);
  if (!missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += " " + m;
    GTEST_SKIP() << "no CPU kernel yet for" << names << "; structure checked only";
  }
  ExpectSameOutputs(original, optimized, feeds);
}

// The single node of `op_type` in `domain` in a serialized model.
inline std::unique_ptr<ir::Node> FindNode(const std::string& bytes, const std::string& op_type,
                                          const std::string& domain = "") {
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  for (auto& node : model->graph->nodes)
    if (node->op_type == op_type && node->domain == domain) return std::make_unique<ir::Node>(*node);
  return nullptr;
}

inline int64_t OpsetImport(const std::string& bytes, const std::string& domain) {
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  auto it = model->opset_imports.find(domain);
  return it == model->opset_imports.end() ? 0 : it->second;
}

// Deterministic values in [lo, hi) (a fixed pseudo-random sequence).
inline Tensor RandomTensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(DataType::kFloat, shape);
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < t.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return t;
}

inline Tensor Scalar(float v) { return Tensor::Scalar<float>(DataType::kFloat, v); }

inline Tensor Int64s(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

inline const ir::Attribute* Attr(const ir::Node& node, const std::string& name) { return node.FindAttribute(name); }

}  // namespace onyx::test
