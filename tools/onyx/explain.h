// `onyx explain`: the session's own explanation (onyx/explain.h) for a model at a level and
// provider list, as text or JSON. Providers this build lacks (CUDA with ONYX_USE_CUDA off) become a
// note and a decline on every node instead of an error.
#pragma once

#include <string>
#include <vector>

#include "onyx/explain.h"

namespace onyx::cli {

// providers: short or ONNX Runtime names ("CUDA", "CUDAExecutionProvider", "CPU"), by priority.
Explanation ExplainModel(const std::string& model, const std::vector<std::string>& providers, const std::string& level);

std::string ExplanationText(const Explanation& e);
std::string ExplanationJson(const Explanation& e);

}  // namespace onyx::cli
