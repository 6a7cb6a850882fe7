#include "dtypes.h"

#include <string>

#include "onyx/error.h"

namespace onyx_python {
namespace {

using onyx::DataType;

struct Entry {
  DataType onyx;
  int npy;                  // NumPy's type number, or -1 for ml_dtypes types
  const char* ml_dtypes;    // ml_dtypes attribute, or null
  PyArray_Descr* descr = nullptr;
};

Entry kEntries[] = {
    {DataType::kFloat, NPY_FLOAT32, nullptr},
    {DataType::kUInt8, NPY_UINT8, nullptr},
    {DataType::kInt8, NPY_INT8, nullptr},
    {DataType::kUInt16, NPY_UINT16, nullptr},
    {DataType::kInt16, NPY_INT16, nullptr},
    {DataType::kInt32, NPY_INT32, nullptr},
    {DataType::kInt64, NPY_INT64, nullptr},
    {DataType::kBool, NPY_BOOL, nullptr},
    {DataType::kFloat16, NPY_FLOAT16, nullptr},
    {DataType::kDouble, NPY_FLOAT64, nullptr},
    {DataType::kUInt32, NPY_UINT32, nullptr},
    {DataType::kUInt64, NPY_UINT64, nullptr},
    {DataType::kComplex64, NPY_COMPLEX64, nullptr},
    {DataType::kComplex128, NPY_COMPLEX128, nullptr},
    {DataType::kBFloat16, -1, "bfloat16"},
    {DataType::kFloat8E4M3FN, -1, "float8_e4m3fn"},
    {DataType::kFloat8E4M3FNUZ, -1, "float8_e4m3fnuz"},
    {DataType::kFloat8E5M2, -1, "float8_e5m2"},
    {DataType::kFloat8E5M2FNUZ, -1, "float8_e5m2fnuz"},
    {DataType::kUInt4, -1, "uint4"},
    {DataType::kInt4, -1, "int4"},
    {DataType::kFloat4E2M1, -1, "float4_e2m1fn"},
    {DataType::kFloat8E8M0, -1, "float8_e8m0fnu"},
    {DataType::kUInt2, -1, "uint2"},
    {DataType::kInt2, -1, "int2"},
};

}  // namespace

void InitDtypes() {
  PyObject* ml = PyImport_ImportModule("ml_dtypes");
  for (Entry& e : kEntries) {
    if (e.npy >= 0) {
      e.descr = PyArray_DescrFromType(e.npy);
    } else if (ml != nullptr) {
      PyObject* type = PyObject_GetAttrString(ml, e.ml_dtypes);
      if (type == nullptr || PyArray_DescrConverter(type, &e.descr) != NPY_SUCCEED) e.descr = nullptr;
      Py_XDECREF(type);
    }
    PyErr_Clear();  // without ml_dtypes those types are only reachable as raw bits
  }
  Py_XDECREF(ml);
}

DataType DataTypeOfDescr(PyArray_Descr* descr) {
  const int num = descr->type_num;
  if (num == NPY_UNICODE || num == NPY_STRING || num == NPY_OBJECT) return DataType::kString;
  // NumPy has two type numbers for some C types (long / long long): compare by kind and size.
  if (PyTypeNum_ISINTEGER(num) || PyTypeNum_ISBOOL(num)) {
    const bool is_signed = PyTypeNum_ISSIGNED(num);
    switch (PyDataType_ELSIZE(descr)) {
      case 1: return PyTypeNum_ISBOOL(num) ? DataType::kBool : is_signed ? DataType::kInt8 : DataType::kUInt8;
      case 2: return is_signed ? DataType::kInt16 : DataType::kUInt16;
      case 4: return is_signed ? DataType::kInt32 : DataType::kUInt32;
      case 8: return is_signed ? DataType::kInt64 : DataType::kUInt64;
    }
    return DataType::kUndefined;
  }
  for (const Entry& e : kEntries)
    if (e.descr != nullptr && e.descr->type_num == num) return e.onyx;
  return DataType::kUndefined;
}

PyArray_Descr* DescrOfDataType(DataType t) {
  if (t == DataType::kString) return PyArray_DescrFromType(NPY_OBJECT);
  for (const Entry& e : kEntries)
    if (e.onyx == t && e.descr != nullptr) {
      Py_INCREF(e.descr);
      return e.descr;
    }
  return nullptr;
}

DataType DataTypeOfPython(PyObject* element_type) {
  if (PyLong_Check(element_type)) {
    const long raw = PyLong_AsLong(element_type);
    if (raw > 0 && onyx::IsValidDataType(static_cast<int32_t>(raw))) return static_cast<DataType>(raw);
    throw onyx::Error(onyx::ErrorCode::kInvalidArgument,
                      "element type " + std::to_string(raw) + " is not an ONNX TensorProto data type");
  }
  PyArray_Descr* descr = nullptr;
  if (PyArray_DescrConverter(element_type, &descr) == NPY_SUCCEED) {
    const DataType t = DataTypeOfDescr(descr);
    Py_DECREF(descr);
    if (t != DataType::kUndefined) return t;
  }
  PyErr_Clear();
  PyObject* repr = PyObject_Repr(element_type);
  std::string text = repr ? PyUnicode_AsUTF8(repr) : "?";
  Py_XDECREF(repr);
  PyErr_Clear();
  throw onyx::Error(onyx::ErrorCode::kInvalidArgument, "element type " + text + " has no ONNX tensor type");
}

std::string TensorTypeName(DataType t) { return "tensor(" + std::string(onyx::DataTypeName(t)) + ")"; }

}  // namespace onyx_python
