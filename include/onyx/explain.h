// Why a session runs its model as it does (ONNX Runtime users otherwise rebuild with verbose
// logging): for every node of the optimized graph, its provider and why providers before it
// declined, the original nodes it replaced and the pass that likely made it, the kernel; the
// model's nodes the optimizer removed; and patterns that look fusable but were not fused, with
// the condition that failed. `onyx explain` and InferenceSession.explain() print this data.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "onyx/session.h"

namespace onyx {

struct NodeExplanation {
  std::string name, op, domain;
  std::string provider;  // "" when no provider can run it
  std::vector<std::pair<std::string, std::string>> declined;  // provider, reason
  std::vector<std::string> replaces;  // original nodes it stands for (empty: the model's own node)
  std::string created_by;             // "the model", "pass AttentionFusion", ...
  std::string kernel;                 // what is known of the kernel variant ("" when nothing)
};

struct FusionMiss {
  std::string pattern;             // "Conv+BatchNormalization", "Attention"
  std::vector<std::string> nodes;  // the nodes of the unfused pattern, in order
  std::string reason;              // the condition that failed
};

struct Explanation {
  std::string model;                   // the model's path ("" for bytes)
  std::string level;                   // "disabled", "basic", "extended", "all"
  std::vector<std::string> providers;  // the session's, by priority ("CPU" last)
  std::vector<std::string> notes;
  std::vector<NodeExplanation> nodes;
  // Original nodes gone without a replacement, with the passes whose counts name their op.
  std::vector<std::pair<std::string, std::string>> removed;
  std::vector<FusionMiss> fusion_misses;
};

// The session's own decisions. The original graph is re-read from the model's file; for a
// session made from bytes, `replaces` and `removed` stay empty and a note says so.
Explanation Explain(const Session& session);

}  // namespace onyx
