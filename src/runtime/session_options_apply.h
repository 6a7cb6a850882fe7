// SessionOptions that change the model before it is optimized: free dimension overrides
// (add_free_dimension_override_by_name) and caller-supplied initializers (add_initializer).
#pragma once

#include <string>

#include "ir/graph.h"
#include "onyx/session.h"

namespace onyx {

// Fixes each overridden symbolic dim of the graph inputs (and of the outputs sharing the
// symbol), and replaces each named initializer with the caller's tensor, sharing its bytes.
// Throws Error(kInvalidArgument) naming the option and the name: a symbol no input has, a
// negative size, an initializer the model lacks, or a tensor of another dtype or shape.
void ApplyModelOptions(ir::Model& model, const SessionOptions& options, const std::string& model_label);

}  // namespace onyx
