// Runs one optimizer pass alone on a model and checks that the optimized graph computes the
// same outputs as the original (conformance tolerances).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "model_builder.h"
#include "onnx/model_loader.h"
#include "onnx/model_writer.h"
#include "onyx/session.h"
#include "optimizer/pass_manager.h"
#include "runtime/session_impl.h"
#include "testing/value_compare.h"

namespace onyx::test {

struct PassRun {
  OptimizationReport report;
  std::map<std::string, int> ops_after;
  std::string optimized_bytes;
};

inline PassRun RunPassAlone(const std::string& model_bytes, const std::string& pass,
                            OptLevel level = OptLevel::kAll) {
  auto model = LoadModelFromBytes(model_bytes.data(), model_bytes.size());
  OptimizerOptions options;
  options.level = level;
  options.only_passes = {pass};
  PassRun run;
  run.report = OptimizeModel(*model, options);
  run.ops_after = CountOps(*model->graph);
  run.optimized_bytes = SerializeModel(*model);
  return run;
}

// Outputs of the original and the optimized model (both run unoptimized) must agree, within
// `tol` (CompareValues's default unless given; {0, 0} asks for equal bits).
inline void ExpectSameOutputs(const std::string& original, const std::string& optimized, const NamedValues& feeds,
                              const testing::Tolerance& tol = {}) {
  SessionOptions plain;
  plain.graph_optimization_level = GraphOptimizationLevel::kDisabled;
  Session a(original.data(), original.size(), plain);
  Session b(optimized.data(), optimized.size(), plain);
  const auto expected = a.Run(feeds);
  const auto got = b.Run(feeds);
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(testing::CompareValues(expected[i], got[i], tol), "") << "output " << i;
}

inline int OpCount(const std::map<std::string, int>& counts, const std::string& op) {
  auto it = counts.find(op);
  return it == counts.end() ? 0 : it->second;
}

}  // namespace onyx::test
