// onyx._C.OrtValue: an onyx::Value held for Python (ORT's C-level OrtValue, which onyx.OrtValue
// wraps). Tensors from NumPy view the array's bytes, which they keep alive.
#pragma once

#include <nanobind/nanobind.h>

#include "onyx/value.h"

namespace onyx_python {

struct ValueObject {
  onyx::Value value;
};

// The ValueObject behind `obj`, or null when obj is not one.
ValueObject* AsValueObject(nanobind::handle obj);
// ONNX Runtime's type string of a value or static type: "tensor(float)", "seq(tensor(int64))",
// "map(int64,tensor(float))", "optional(tensor(float))".
std::string OrtTypeString(const onyx::TypeInfo* type);
std::string OrtTypeString(const onyx::Value& v);

void BindValueObject(nanobind::module_& m);

}  // namespace onyx_python
