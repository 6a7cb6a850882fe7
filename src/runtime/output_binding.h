// IO binding's preallocated outputs (Session::Run with preallocated_outputs): which caller
// buffer each graph output is to be made in, and, after the Run, the buffer filled — in place
// when the kernel wrote there, else by one copy (an output that is an input, an initializer or
// a view of another value).
#pragma once

#include <string>
#include <vector>

#include "base/logging.h"
#include "ir/graph.h"
#include "onyx/value.h"

namespace onyx {

// One tensor per graph output (undefined: no buffer), from the buffers given for the picked
// outputs (picks[k] = index of the k-th requested output). Throws Error(kInvalidArgument) naming
// the output when the counts differ, a buffer is not a CPU tensor, or its dtype or a dim the model
// declares differs.
std::vector<Tensor> BindOutputBuffers(const std::string& model_label, const std::vector<ir::ValueInfo>& outputs,
                                      const std::vector<size_t>& picks, const std::vector<Value>& preallocated);

// The value to return for an output given `buffer` (may be undefined): `produced` itself
// without a buffer or when it already lives in the buffer, else the buffer after copying
// `produced` into it. Throws Error(kInvalidArgument) naming the output, the produced and the
// given type and shape when they differ. A copy is logged at info.
Value FillOutputBuffer(const std::string& model_label, const std::string& name, const Value& produced,
                       const Tensor& buffer, const Logger& logger);

}  // namespace onyx
