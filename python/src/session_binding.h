// onyx._C.Session, SessionOptions and RunOptions: onyx::Session and its option structs for the
// Python layer (python/onyx/session.py gives them ONNX Runtime's names and behaviour).
#pragma once

#include <nanobind/nanobind.h>

namespace onyx_python {

void BindSession(nanobind::module_& m);
void BindOptions(nanobind::module_& m);

}  // namespace onyx_python
