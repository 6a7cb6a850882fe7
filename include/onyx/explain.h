// Why a session runs its model as it does (ONNX Runtime users otherwise rebuild with verbose
// logging): for every node of the optimized graph, its provider and why providers before it
// declined, the pass that created or rewrote it (as the optimizer recorded it) and the original
// nodes it replaced, the kernel variant it runs; the model's nodes the optimizer removed, each
// with its pass; and patterns that look fusable but were not fused, with the condition that
// failed. `onyx explain` and InferenceSession.explain() print this data.
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
  // "the model", "pass AttentionFusion", "the model, rewritten by pass ConvBatchNormFusion",
  // "the session (added after the optimizer, by no pass)".
  std::string created_by;
  std::vector<std::string> rewritten_by;  // passes that changed it in place, in order
  // The variant it runs: algorithm and ISA with the rule's reason ("winograd F(4x4,3x3) on
  // avx512 (...)"), or the rule when it waits for a run-time shape; "" for single-path ops and
  // for nodes on providers other than CPU.
  std::string kernel;
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
  // Nodes of the model the optimizer removed (subgraphs' too), each with its op and the pass
  // that removed it, and the optimized nodes that replaced it when the original graph is known:
  // {"bn", "BatchNormalization (removed by pass ConvBatchNormFusion)"}.
  std::vector<std::pair<std::string, std::string>> removed;
  std::vector<FusionMiss> fusion_misses;
};

// The session's own decisions. The original graph is re-read from the model's file to list
// what each node replaced; for a session made from bytes `replaces` stays empty and a note says
// so (which pass made or removed what is known either way).
Explanation Explain(const Session& session);

}  // namespace onyx
