// Running one node's CPU kernel while optimizing: constant folding's results, and the tables of
// 8-bit chains (QLinearLookupFusion), come from the same kernels a session runs, so a rewrite
// built from them computes what the nodes it replaces would have.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onyx/value.h"

namespace onyx {

// The node's outputs on `inputs` (one per node input, empty Values for absent ones), or nothing
// when no CPU kernel runs it on them: no kernel claims it, the kernel fails, an output would
// exceed `max_output_bytes`, or scratch does not fit. The node then stays for run time, whose
// errors name it and its inputs. Outputs may be views of the inputs. `constants` (when given)
// shows the kernel's constructor the node's constant inputs by name, as a session does, so a
// kernel that prepares constant operands at creation takes the path it takes in the session.
// `graph` (when given) is the graph the node belongs to, which a kernel reads as in a session
// (e.g. a Sigmoid in a quantized graph computes ONNX Runtime's logistic there).
std::vector<Value> EvaluateOnCpu(const ir::Node& node, std::vector<Value> inputs, int64_t max_output_bytes,
                                 std::function<const Tensor*(const std::string&)> constants = nullptr,
                                 const ir::Graph* graph = nullptr);

}  // namespace onyx
