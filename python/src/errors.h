// onyx::Error codes as ONNX Runtime's exception classes (onyx.capi.onnxruntime_pybind11_state).
#pragma once

#include <nanobind/nanobind.h>

namespace onyx_python {

// Creates the exception classes in `m` and registers the translator for onyx::Error.
void BindErrors(nanobind::module_& m);

}  // namespace onyx_python
