#include "value_object.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "convert.h"
#include "dtypes.h"
#include "onyx/error.h"

namespace nb = nanobind;
using onyx::DataType;
using onyx::Error;
using onyx::ErrorCode;
using onyx::Tensor;
using onyx::TypeInfo;
using onyx::Value;

namespace onyx_python {
namespace {

const Tensor& TensorOf(const ValueObject& v, const char* what) {
  if (!v.value.is_tensor())
    throw Error(ErrorCode::kInvalidArgument, std::string(what) + " needs a tensor, this OrtValue holds " + OrtTypeString(v.value));
  return v.value.tensor();
}

onyx::Shape ToShape(const std::vector<int64_t>& dims) { return onyx::Shape(dims.begin(), dims.end()); }

// Copies `src` into `dst` after checking they agree (update_inplace).
void CopyInto(Tensor& dst, const Tensor& src) {
  if (dst.dtype() != src.dtype() || dst.shape() != src.shape())
    throw Error(ErrorCode::kInvalidArgument, "update_inplace: the source is " + src.Describe() + ", the OrtValue " +
                                                 dst.Describe() + " (dtype and shape must match)");
  if (dst.dtype() == DataType::kString) {
    for (int64_t i = 0; i < dst.size(); ++i) dst.data<std::string>()[i] = src.data<std::string>()[i];
  } else if (dst.byte_size() > 0) {
    std::memmove(dst.raw_data(), src.raw_data(), static_cast<size_t>(dst.byte_size()));
  }
}

}  // namespace

ValueObject* AsValueObject(nb::handle obj) {
  if (!nb::isinstance<ValueObject>(obj)) return nullptr;
  return nb::inst_ptr<ValueObject>(obj);
}

std::string OrtTypeString(const TypeInfo* type) {
  if (type == nullptr) return "unknown";
  switch (type->kind) {
    case TypeInfo::Kind::kTensor: return TensorTypeName(type->elem_type);
    case TypeInfo::Kind::kSparseTensor: return "sparse_tensor(" + std::string(onyx::DataTypeName(type->elem_type)) + ")";
    case TypeInfo::Kind::kSequence: return "seq(" + OrtTypeString(type->elem.get()) + ")";
    case TypeInfo::Kind::kOptional: return "optional(" + OrtTypeString(type->elem.get()) + ")";
    case TypeInfo::Kind::kMap:
      return "map(" + std::string(onyx::DataTypeName(type->elem_type)) + "," + OrtTypeString(type->elem.get()) + ")";
    case TypeInfo::Kind::kUnknown: break;
  }
  return "unknown";
}

std::string OrtTypeString(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kTensor: return TensorTypeName(v.tensor().dtype());
    case Value::Kind::kSequence:
      if (v.type()) return "seq(" + OrtTypeString(v.type().get()) + ")";
      return v.sequence().empty() ? "seq(unknown)" : "seq(" + OrtTypeString(v.sequence()[0]) + ")";
    case Value::Kind::kMap:
      return "map(" + std::string(onyx::DataTypeName(v.map_keys().dtype())) + "," +
             TensorTypeName(v.map_values().dtype()) + ")";
    case Value::Kind::kNone:
      return v.type() ? "optional(" + OrtTypeString(v.type().get()) + ")" : "optional(unknown)";
  }
  return "unknown";
}

void BindValueObject(nb::module_& m) {
  nb::class_<ValueObject>(m, "OrtValue")
      .def_static("ortvalue_from_numpy",
                  [](nb::handle array) {
                    if (!PyArray_Check(array.ptr()))
                      throw Error(ErrorCode::kInvalidArgument, std::string("ortvalue_from_numpy needs a numpy.ndarray, got ") +
                                                                   Py_TYPE(array.ptr())->tp_name);
                    return ValueObject{TensorFromArray(array, false, "ortvalue_from_numpy")};
                  })
      .def_static("ortvalue_from_numpy_with_onnx_type",
                  [](nb::handle array, int onnx_type) {
                    const DataType t = DataTypeOfPython(nb::int_(onnx_type).ptr());
                    Tensor raw = TensorFromArray(array, false, "ortvalue_from_numpy_with_onnx_type");
                    const int64_t raw_bits = raw.size() == 0 ? 0 : raw.byte_size() * 8 / raw.size();
                    if (raw.dtype() == DataType::kString || onyx::IsSubByte(t) || raw_bits != onyx::DataTypeBits(t))
                      throw Error(ErrorCode::kInvalidArgument,
                                  "ortvalue_from_numpy_with_onnx_type: a " + raw.Describe() + " array cannot be read as " +
                                      std::string(onyx::DataTypeName(t)) + " (element sizes differ)");
                    return ValueObject{Tensor::View(t, raw.shape(), raw.raw_data(), raw.holder())};
                  })
      .def_static("ortvalue_from_shape_and_type",
                  [](const std::vector<int64_t>& shape, nb::handle element_type) {
                    return ValueObject{Tensor(DataTypeOfPython(element_type.ptr()), ToShape(shape))};
                  })
      .def_static("ortvalue_from_python",
                  [](nb::handle obj) { return ValueObject{ValueFromPython(obj, nullptr, "value")}; })
      .def_static("from_raw_pointer",
                  [](nb::handle element_type, const std::vector<int64_t>& shape, uintptr_t pointer) {
                    // ORT's bind_input / bind_output with a buffer pointer: the caller keeps it alive.
                    return ValueObject{Tensor::View(DataTypeOfPython(element_type.ptr()), ToShape(shape),
                                                    reinterpret_cast<void*>(pointer), nullptr)};
                  })
      .def("numpy", [](const ValueObject& v) { return ArrayFromTensor(TensorOf(v, "numpy()"), true); })
      .def("to_python", [](const ValueObject& v) { return PythonFromValue(v.value); })
      .def("shape",
           [](const ValueObject& v) {
             const onyx::Shape& s = TensorOf(v, "shape()").shape();
             return std::vector<int64_t>(s.begin(), s.end());
           })
      .def("data_type", [](const ValueObject& v) { return OrtTypeString(v.value); })
      .def("element_type", [](const ValueObject& v) { return static_cast<int>(TensorOf(v, "element_type()").dtype()); })
      .def("tensor_size_in_bytes", [](const ValueObject& v) { return TensorOf(v, "tensor_size_in_bytes()").byte_size(); })
      .def("data_ptr", [](const ValueObject& v) { return reinterpret_cast<uintptr_t>(TensorOf(v, "data_ptr()").raw_data()); })
      .def("device_name", [](const ValueObject& v) { return std::string("Cpu"); })
      .def("is_tensor", [](const ValueObject& v) { return v.value.is_tensor(); })
      .def("is_tensor_sequence", [](const ValueObject& v) { return v.value.is_sequence(); })
      .def("is_map", [](const ValueObject& v) { return v.value.is_map(); })
      .def("has_value", [](const ValueObject& v) { return !v.value.is_none(); })
      .def("update_inplace",
           [](ValueObject& v, nb::handle data) {
             TensorOf(v, "update_inplace()");  // a tensor, or an error naming what it holds
             Tensor& dst = v.value.tensor();
             if (ValueObject* src = AsValueObject(data)) {
               CopyInto(dst, TensorOf(*src, "update_inplace()"));
             } else {
               CopyInto(dst, TensorFromArray(data, false, "update_inplace"));
             }
           });
}

}  // namespace onyx_python
