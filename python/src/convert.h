// Values between Python and Onyx. NumPy arrays become tensors that view the array's bytes (one
// copy only when the layout, byte order or a packed type asks for it); tensors become NumPy arrays
// over the tensor's bytes, kept alive by the array. Sequences are lists, maps dicts, None is None.
#pragma once

#include <nanobind/nanobind.h>

#include "onyx/value.h"

namespace onyx_python {

// A tensor over `array`'s bytes (the tensor keeps the array alive). `writable`: the tensor will
// be written to (IO binding outputs), so a read-only array is an error rather than copied.
onyx::Tensor TensorFromArray(nanobind::handle array, bool writable = false, const char* what = "array");
// `obj` as the value `type` asks for (may be null: then guessed from obj): ndarray or anything
// np.asarray takes for tensors, list for sequences, dict for maps, None for an empty optional.
onyx::Value ValueFromPython(nanobind::handle obj, const onyx::TypeInfo* type, const std::string& name);

// Tensor as a NumPy array. `share`: the array views the tensor's bytes; otherwise it owns a copy.
nanobind::object ArrayFromTensor(const onyx::Tensor& t, bool share);
// Value as ONNX Runtime returns it: array, list, dict or None. With `results` (the Run's outputs,
// `v` among them) a tensor is shared only when nothing but `results` holds its bytes (see
// OnlyHeldByResults), else copied; without, tensors are shared.
nanobind::object PythonFromValue(const onyx::Value& v, const std::vector<onyx::Value>* results = nullptr);

// Whether a tensor of `results` may be handed out without a copy: true when its bytes are held
// only by `results` (a fresh output), false when something else still holds them (a weight of
// the session, a feed the output aliases).
bool OnlyHeldByResults(const onyx::Tensor& t, const std::vector<onyx::Value>& results);
// `results` as _C.OrtValues (run_with_ort_values, IO binding). A tensor the session still holds
// (an output that is a weight) is copied, so writing through the value cannot change the model;
// one in the caller's memory (a feed it aliases, a bound buffer) is not.
nanobind::list ToValueObjects(std::vector<onyx::Value>&& results, const std::vector<onyx::Value>& preallocated);

}  // namespace onyx_python
