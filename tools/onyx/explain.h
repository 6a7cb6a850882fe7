// `onyx explain`: for every node of the optimized graph, where it runs and why the providers
// before it declined, the original nodes it replaced and the pass that likely made it; the
// model's nodes the optimizer removed; and patterns that look fusable but were not fused, with
// the condition that failed. Data first (Explanation), text and JSON from it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "onyx/session.h"

namespace onyx::cli {

struct NodeExplanation {
  std::string name, op, domain;
  std::string provider;  // "" when no provider can run it
  std::vector<std::pair<std::string, std::string>> declined;  // provider, reason
  std::vector<std::string> replaces;  // original nodes it stands for (empty: the model's own node)
  std::string created_by;             // pass(es), or "the model"
  std::string kernel;                 // what is known of the kernel variant
};

struct FusionMiss {
  std::string pattern;             // "Conv+BatchNormalization", "Attention"
  std::vector<std::string> nodes;  // the nodes of the unfused pattern
  std::string reason;              // the condition that failed
};

struct Explanation {
  std::string model;
  std::string level;
  std::vector<std::string> providers;  // as asked, by priority
  std::vector<std::string> notes;      // e.g. a provider this build lacks
  std::vector<NodeExplanation> nodes;
  std::vector<std::pair<std::string, std::string>> removed;  // original node, op: gone without a replacement
  std::vector<FusionMiss> fusion_misses;
};

// providers: ONNX Runtime's or short names ("CUDA", "CUDAExecutionProvider", "CPU"); one this
// build lacks becomes a note and a decline on every node. level: disabled, basic, extended, all.
Explanation ExplainModel(const std::string& model, const std::vector<std::string>& providers, const std::string& level);

std::string ExplanationText(const Explanation& e);
std::string ExplanationJson(const Explanation& e);

}  // namespace onyx::cli
