#include "convert.h"

#include <cstring>
#include <string>
#include <vector>

#include "dtypes.h"
#include "onyx/error.h"
#include "value_object.h"

namespace nb = nanobind;
using onyx::DataType;
using onyx::Error;
using onyx::ErrorCode;
using onyx::Tensor;
using onyx::TypeInfo;
using onyx::Value;

namespace onyx_python {
namespace {

bool Finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// The deleter of tensor holders that own one reference to a Python object: the last tensor to
// let go drops it (taking the GIL, since that may happen on an engine thread or with the GIL
// released).
struct PythonRelease {
  void operator()(void* p) const {
    if (!Py_IsInitialized() || Finalizing()) return;  // the interpreter is going: leak, don't crash
    nb::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  }
};

std::shared_ptr<void> PythonHolder(PyObject* owned) { return std::shared_ptr<void>(owned, PythonRelease{}); }

// Whether the tensor's bytes belong to a Python object (a caller's array).
bool InPythonMemory(const Tensor& t) { return std::get_deleter<PythonRelease>(t.holder()) != nullptr; }

onyx::Shape ShapeOf(PyArrayObject* a) {
  onyx::Shape shape(PyArray_NDIM(a));
  for (int i = 0; i < PyArray_NDIM(a); ++i) shape[i] = PyArray_DIM(a, i);
  return shape;
}

std::string Describe(PyArrayObject* a) {
  PyObject* repr = PyObject_Str(reinterpret_cast<PyObject*>(PyArray_DESCR(a)));
  std::string text = repr ? PyUnicode_AsUTF8(repr) : "?";
  Py_XDECREF(repr);
  PyErr_Clear();
  text += "[";
  for (int i = 0; i < PyArray_NDIM(a); ++i) text += (i ? "," : "") + std::to_string(PyArray_DIM(a, i));
  return text + "]";
}

// Sub-byte elements are stored one per byte by ml_dtypes and packed low bits first by Onyx.
int SubByteBits(DataType t) { return onyx::IsSubByte(t) ? onyx::DataTypeBits(t) : 0; }

Tensor PackSubByte(PyArrayObject* a, DataType t) {
  const int bits = SubByteBits(t);
  Tensor out = Tensor::Zeros(t, ShapeOf(a));
  const auto* src = static_cast<const uint8_t*>(PyArray_DATA(a));
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  for (int64_t i = 0; i < out.size(); ++i)
    dst[i / per_byte] |= static_cast<uint8_t>((src[i] & mask) << (bits * (i % per_byte)));
  return out;
}

void UnpackSubByte(const Tensor& t, uint8_t* dst) {
  const int bits = SubByteBits(t.dtype());
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  const bool sign_extend = t.dtype() == DataType::kInt4 || t.dtype() == DataType::kInt2;
  const auto* src = static_cast<const uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.size(); ++i) {
    uint8_t v = (src[i / per_byte] >> (bits * (i % per_byte))) & mask;
    if (sign_extend && (v >> (bits - 1))) v |= static_cast<uint8_t>(~mask);
    dst[i] = v;
  }
}

Tensor StringTensor(PyArrayObject* a, const std::string& what) {
  Tensor out(DataType::kString, ShapeOf(a));
  auto* dst = out.data<std::string>();
  // Iterating through NumPy handles any layout and U / S / object alike.
  nb::object flat = nb::steal(PyArray_Ravel(a, NPY_CORDER));
  if (!flat.is_valid()) throw nb::python_error();
  nb::object items = nb::steal(PyArray_ToList(reinterpret_cast<PyArrayObject*>(flat.ptr())));
  if (!items.is_valid()) throw nb::python_error();
  Py_ssize_t i = 0;
  for (nb::handle item : items) {
    if (PyUnicode_Check(item.ptr())) {
      Py_ssize_t size = 0;
      const char* s = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
      if (s == nullptr) throw nb::python_error();
      dst[i].assign(s, static_cast<size_t>(size));
    } else if (PyBytes_Check(item.ptr())) {
      dst[i].assign(PyBytes_AS_STRING(item.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(item.ptr())));
    } else {
      // ORT stores str(element) for other objects (numbers in an object array).
      nb::str text = nb::str(item);
      dst[i] = text.c_str();
    }
    ++i;
  }
  return out;
}

const TypeInfo* Unwrap(const TypeInfo* type) {
  return type && type->kind == TypeInfo::Kind::kOptional ? type->elem.get() : type;
}

// The NumPy dtype a model input asks for (null when unknown or NumPy has none).
nb::object DtypeFor(const TypeInfo* type) {
  if (type == nullptr || type->kind != TypeInfo::Kind::kTensor || type->elem_type == DataType::kUndefined)
    return nb::none();
  PyArray_Descr* d = DescrOfDataType(type->elem_type);
  return d ? nb::steal(reinterpret_cast<PyObject*>(d)) : nb::none();
}

Tensor TensorFromAny(nb::handle obj, const TypeInfo* type, const std::string& name) {
  if (PyArray_Check(obj.ptr())) return TensorFromArray(obj, false, name.c_str());
  if (ValueObject* v = AsValueObject(obj)) return v->value.tensor();
  // Lists and scalars: NumPy makes the array, in the model's element type where it has one.
  nb::object dtype = DtypeFor(type);
  PyArray_Descr* descr = nullptr;
  if (!dtype.is_none()) {
    descr = reinterpret_cast<PyArray_Descr*>(dtype.ptr());
    Py_INCREF(descr);  // PyArray_FromAny steals it
  }
  nb::object array = nb::steal(PyArray_FromAny(obj.ptr(), descr, 0, 0, NPY_ARRAY_DEFAULT, nullptr));
  if (!array.is_valid()) throw nb::python_error();
  return TensorFromArray(array, false, name.c_str());
}

Value MapFromDict(nb::handle obj, const TypeInfo* type, const std::string& name) {
  nb::dict d = nb::borrow<nb::dict>(obj);
  nb::list keys, values;
  for (auto [k, v] : d) {
    keys.append(k);
    values.append(v);
  }
  const DataType key_type = type ? type->elem_type : DataType::kUndefined;
  const TypeInfo* value_type = type ? type->elem.get() : nullptr;
  Tensor key_tensor;
  if (key_type != DataType::kUndefined) {
    key_tensor = TensorFromAny(keys, TypeInfo::Tensor(key_type).get(), name + " keys");
  } else {
    key_tensor = TensorFromAny(keys, nullptr, name + " keys");
  }
  Tensor value_tensor = TensorFromAny(values, value_type, name + " values");
  if (key_tensor.rank() != 1 || value_tensor.rank() != 1)
    throw Error(ErrorCode::kInvalidArgument, name + ": map keys and values must be scalars");
  return Value::Map(key_tensor, value_tensor);
}

}  // namespace

Tensor TensorFromArray(nb::handle array, bool writable, const char* what) {
  auto* a = reinterpret_cast<PyArrayObject*>(array.ptr());
  const DataType t = DataTypeOfDescr(PyArray_DESCR(a));
  if (t == DataType::kUndefined)
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) + ": NumPy type " + Describe(a) + " has no ONNX tensor type");
  if (t == DataType::kString) {
    if (writable) throw Error(ErrorCode::kInvalidArgument, std::string(what) + ": string tensors cannot be bound in place");
    return StringTensor(a, what);
  }
  if (SubByteBits(t) != 0) {
    if (writable)
      throw Error(ErrorCode::kInvalidArgument, std::string(what) + ": " + Describe(a) +
                                                   " is one element per byte in NumPy and packed in Onyx, so it "
                                                   "cannot be written in place");
    nb::object c = nb::steal(PyArray_FromAny(array.ptr(), nullptr, 0, 0, NPY_ARRAY_IN_ARRAY, nullptr));
    if (!c.is_valid()) throw nb::python_error();
    return PackSubByte(reinterpret_cast<PyArrayObject*>(c.ptr()), t);
  }
  // The array itself when it is C-contiguous, aligned and native-endian; else one copy.
  int requirements = NPY_ARRAY_IN_ARRAY | NPY_ARRAY_NOTSWAPPED;
  if (writable) {
    requirements |= NPY_ARRAY_WRITEABLE;
    if (!PyArray_ISWRITEABLE(a) || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a))
      throw Error(ErrorCode::kInvalidArgument, std::string(what) + ": " + Describe(a) +
                                                   " must be writable, C-contiguous, aligned and native-endian "
                                                   "to be written in place");
  }
  PyArray_Descr* native = PyArray_DESCR(a);
  if (PyArray_ISNOTSWAPPED(a)) {
    Py_INCREF(native);  // PyArray_FromAny steals the descr
  } else {
    native = PyArray_DescrNewByteorder(native, NPY_NATIVE);
    if (native == nullptr) throw nb::python_error();
  }
  PyObject* view = PyArray_FromAny(array.ptr(), native, 0, 0, requirements, nullptr);
  if (view == nullptr) throw nb::python_error();
  auto* v = reinterpret_cast<PyArrayObject*>(view);
  return Tensor::View(t, ShapeOf(v), PyArray_DATA(v), PythonHolder(view));
}

Value ValueFromPython(nb::handle obj, const TypeInfo* type, const std::string& name) {
  if (ValueObject* v = AsValueObject(obj)) return v->value;
  if (!PyArray_Check(obj.ptr()) && nb::hasattr(obj, "_ortvalue")) {  // an onyx.OrtValue
    if (ValueObject* v = AsValueObject(obj.attr("_ortvalue"))) return v->value;
  }
  if (obj.is_none()) {
    if (type && type->kind != TypeInfo::Kind::kOptional)
      throw Error(ErrorCode::kInvalidArgument, "input '" + name + "' is " + type->ToString() + ", not optional: None given");
    return Value::None(type ? type->elem : nullptr);
  }
  const TypeInfo* want = Unwrap(type);
  const TypeInfo::Kind kind = want ? want->kind : TypeInfo::Kind::kUnknown;
  if (kind == TypeInfo::Kind::kSequence || (kind == TypeInfo::Kind::kUnknown && PyList_Check(obj.ptr()))) {
    if (!PyList_Check(obj.ptr()) && !PyTuple_Check(obj.ptr()))
      throw Error(ErrorCode::kInvalidArgument, "input '" + name + "' is a sequence: pass a list, not " +
                                                   Py_TYPE(obj.ptr())->tp_name);
    const TypeInfo* elem = want ? want->elem.get() : nullptr;
    std::vector<Value> elements;
    size_t i = 0;
    for (nb::handle item : obj) elements.push_back(ValueFromPython(item, elem, name + "[" + std::to_string(i++) + "]"));
    return Value::Sequence(std::move(elements), want ? want->elem : nullptr);
  }
  if (kind == TypeInfo::Kind::kMap || (kind == TypeInfo::Kind::kUnknown && PyDict_Check(obj.ptr()))) {
    if (!PyDict_Check(obj.ptr()))
      throw Error(ErrorCode::kInvalidArgument, "input '" + name + "' is a map: pass a dict, not " +
                                                   Py_TYPE(obj.ptr())->tp_name);
    return MapFromDict(obj, want, name);
  }
  return TensorFromAny(obj, want, name);
}

bool OnlyHeldByResults(const Tensor& t, const std::vector<Value>& results) {
  const std::shared_ptr<void>& holder = t.holder();
  if (!holder) return false;
  long count = 0;
  std::vector<const Value*> stack;
  for (const Value& v : results) stack.push_back(&v);
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (v->is_tensor()) {
      count += v->tensor().holder() == holder;
    } else if (v->is_sequence()) {
      for (const Value& e : v->sequence()) stack.push_back(&e);
    } else if (v->is_map()) {
      count += (v->map_keys().holder() == holder) + (v->map_values().holder() == holder);
    }
  }
  return holder.use_count() == count;
}

nb::object ArrayFromTensor(const Tensor& t, bool share) {
  std::vector<npy_intp> dims(t.shape().begin(), t.shape().end());
  const int nd = static_cast<int>(dims.size());
  if (t.dtype() == DataType::kString) {
    nb::object array = nb::steal(PyArray_SimpleNew(nd, dims.data(), NPY_OBJECT));
    if (!array.is_valid()) throw nb::python_error();
    auto** items = static_cast<PyObject**>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array.ptr())));
    const auto* src = t.data<std::string>();
    for (int64_t i = 0; i < t.size(); ++i) {
      PyObject* s = PyUnicode_DecodeUTF8(src[i].data(), static_cast<Py_ssize_t>(src[i].size()), "surrogateescape");
      if (s == nullptr) throw nb::python_error();
      Py_XDECREF(items[i]);
      items[i] = s;
    }
    return array;
  }
  PyArray_Descr* descr = DescrOfDataType(t.dtype());
  if (descr == nullptr)
    throw Error(ErrorCode::kNotImplemented, "tensor " + t.Describe() + " has no NumPy type (is ml_dtypes installed?)");
  if (SubByteBits(t.dtype()) != 0 || t.size() == 0 || !share || t.raw_data() == nullptr) {
    PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims.data(), nullptr, nullptr, 0, nullptr);
    if (array == nullptr) throw nb::python_error();
    auto* dst = static_cast<uint8_t*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array)));
    if (SubByteBits(t.dtype()) != 0) {
      UnpackSubByte(t, dst);
    } else if (t.size() > 0) {
      std::memcpy(dst, t.raw_data(), static_cast<size_t>(t.byte_size()));
    }
    return nb::steal(array);
  }
  // A view: a capsule holding a copy of the Tensor (which shares its bytes) is the array's base.
  nb::object owner = nb::steal(PyCapsule_New(new Tensor(t), "onyx.Tensor", [](PyObject* capsule) {
    delete static_cast<Tensor*>(PyCapsule_GetPointer(capsule, "onyx.Tensor"));
  }));
  if (!owner.is_valid()) {
    Py_DECREF(descr);
    throw nb::python_error();
  }
  PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims.data(), nullptr,
                                         const_cast<void*>(t.raw_data()), NPY_ARRAY_CARRAY, nullptr);
  if (array == nullptr) throw nb::python_error();
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), owner.release().ptr()) != 0) {
    Py_DECREF(array);
    throw nb::python_error();
  }
  return nb::steal(array);
}

nb::object PythonFromValue(const Value& v, const std::vector<Value>* results) {
  switch (v.kind()) {
    case Value::Kind::kNone:
      return nb::none();
    case Value::Kind::kTensor:
      return ArrayFromTensor(v.tensor(), results == nullptr || OnlyHeldByResults(v.tensor(), *results));
    case Value::Kind::kSequence: {
      nb::list out;
      for (const Value& e : v.sequence()) out.append(PythonFromValue(e, results));
      return out;
    }
    case Value::Kind::kMap: {
      // ONNX Runtime gives Python scalars: {key: value}.
      nb::object keys = ArrayFromTensor(v.map_keys(), false).attr("tolist")();
      nb::object values = ArrayFromTensor(v.map_values(), false).attr("tolist")();
      nb::object zipped = nb::steal(PyObject_CallFunctionObjArgs(reinterpret_cast<PyObject*>(&PyZip_Type),
                                                                 keys.ptr(), values.ptr(), nullptr));
      if (!zipped.is_valid()) throw nb::python_error();
      return nb::steal(PyObject_CallOneArg(reinterpret_cast<PyObject*>(&PyDict_Type), zipped.ptr()));
    }
  }
  return nb::none();
}

}  // namespace onyx_python

namespace onyx_python {

nb::list ToValueObjects(std::vector<Value>&& results,
                        const std::vector<Value>& preallocated) {
  nb::list out;
  std::vector<bool> copy(results.size(), false);
  for (size_t i = 0; i < results.size(); ++i) {
    const bool bound = i < preallocated.size() && preallocated[i].is_tensor();
    const Value& v = results[i];
    copy[i] = !bound && v.is_tensor() && v.tensor().holder() && !InPythonMemory(v.tensor()) &&
              !OnlyHeldByResults(v.tensor(), results);
  }
  for (size_t i = 0; i < results.size(); ++i)
    out.append(nb::cast(ValueObject{copy[i] ? Value(results[i].tensor().Clone()) : std::move(results[i])}));
  return out;
}

}  // namespace onyx_python
