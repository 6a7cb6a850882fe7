// InferenceSession.explain(): onyx::Explain's data as Python dicts and lists.
#pragma once

#include <nanobind/nanobind.h>

#include "onyx/explain.h"

namespace onyx_python {

nanobind::dict ExplanationDict(const onyx::Explanation& e);

}  // namespace onyx_python
