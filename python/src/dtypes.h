// Element types between NumPy and Onyx. NumPy's own types map directly; bfloat16, the float8 types
// and the 4- and 2-bit types use ml_dtypes' NumPy dtypes (the ones ONNX's own tools use).
#pragma once

#include "numpy_api.h"
#include "onyx/dtype.h"

namespace onyx_python {

// Loads ml_dtypes' dtypes (once; the module is a dependency of the package).
void InitDtypes();

// The Onyx type of a NumPy dtype; kUndefined when it has none. Strings (U, S, O) are kString.
onyx::DataType DataTypeOfDescr(PyArray_Descr* descr);
// A new reference to the NumPy dtype of an Onyx type (object for strings), or null (no Python
// error set) when NumPy has none.
PyArray_Descr* DescrOfDataType(onyx::DataType t);
// The Onyx type for what ORT takes as an element type: an ONNX TensorProto type number, a NumPy
// dtype or scalar type (np.float32), or a dtype name. Throws Error(kInvalidArgument) otherwise.
onyx::DataType DataTypeOfPython(PyObject* element_type);
// ONNX Runtime's spelling: "tensor(float)".
std::string TensorTypeName(onyx::DataType t);

}  // namespace onyx_python
