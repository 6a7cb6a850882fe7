// The pass seam: one file per pass under passes/, registered with a level and the providers it
// suits. A pass looks for its anchor op types, matches a pattern around each, and rewrites
// through the GraphEditor. The manager runs passes to a fixed point and validates the graph
// after each one that changed something.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "optimizer/graph_editor.h"

namespace onyx {

// ONNX Runtime's graph_optimization_level values.
enum class OptLevel : int { kDisabled = 0, kBasic = 1, kExtended = 2, kAll = 99 };

const char* OptLevelName(OptLevel level);
// "disabled", "basic", "extended", "all" (also ORT's ORT_DISABLE_ALL ... ORT_ENABLE_ALL);
// throws Error(kInvalidArgument) otherwise.
OptLevel ParseOptLevel(const std::string& text);

struct OptimizerOptions {
  OptLevel level = OptLevel::kAll;
  // Constant folding never makes a tensor larger than this unless its inputs were as large.
  int64_t fold_size_limit_bytes = int64_t{1} << 20;
  // Fold initializers that double as graph inputs (IR < 4 overridable defaults)? Off, as in ORT:
  // a feed could replace them.
  bool fold_overridable_initializers = false;
  std::vector<std::string> disabled_passes;
  // When not empty, only these passes run (tests run one pass alone this way).
  std::vector<std::string> only_passes;
  // Providers the session uses, by priority; passes can skip nodes none of them suits.
  std::vector<std::string> providers = {"CPU"};
  // Fusions create only nodes that one of `providers` has a kernel for (a session must run what
  // it optimized, and ONNX Runtime too fuses only for execution providers that have the fused
  // op). Off for offline optimization (`onyx optimize`), which writes every fusion.
  bool require_kernels = true;
  // HalfBodyToFloat leaves the float values of float16 weights only MatMul / Gemm read unwritten
  // (DeferWidening): their kernels pack from the float16 bits. For sessions, which write them
  // before anything else reads them (SessionImpl); off for callers that keep the graph.
  bool defer_half_widening = false;
};

struct PassContext {
  GraphEditor& editor;
  const OptimizerOptions& options;
  // Counts by kind ("FusedConv", "removed Identity", ...) for the report.
  std::map<std::string, int>& counts;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  virtual OptLevel level() const = 0;
  // Providers whose kernels the rewritten nodes need; empty means any.
  virtual std::vector<std::string> providers() const { return {}; }
  // Applies the pass once over the graph; returns the number of rewrites.
  virtual int Apply(PassContext& ctx) = 0;
};

class PassRegistry {
 public:
  using Factory = std::unique_ptr<Pass> (*)();
  static PassRegistry& Global();
  // Passes run in order of `order`, then name; levels decide which run.
  void Register(int order, Factory factory);
  std::vector<std::unique_ptr<Pass>> Create() const;

 private:
  std::vector<std::pair<int, Factory>> factories_;
};

struct PassRegistrar {
  PassRegistrar(int order, PassRegistry::Factory factory) { PassRegistry::Global().Register(order, factory); }
};

// ONYX_REGISTER_PASS(ConstantFolding, 100): lower orders run first within a round.
#define ONYX_REGISTER_PASS(PassClass, order)                                                          \
  static ::onyx::PassRegistrar ONYX_PASS_CONCAT(onyx_pass_registrar_, __COUNTER__)(                    \
      order, []() -> std::unique_ptr<::onyx::Pass> { return std::make_unique<PassClass>(); })
#define ONYX_PASS_CONCAT_INNER(a, b) a##b
#define ONYX_PASS_CONCAT(a, b) ONYX_PASS_CONCAT_INNER(a, b)

}  // namespace onyx
