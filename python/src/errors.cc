#include "errors.h"

#include <string>

#include "onyx/error.h"

namespace nb = nanobind;

namespace onyx_python {
namespace {

// ONNX Runtime's status codes, names and Python classes, in its order (common/status.h).
struct OrtStatus {
  int code;
  const char* status;
  const char* cls;
};
constexpr OrtStatus kStatuses[] = {
    {1, "FAIL", "Fail"},
    {2, "INVALID_ARGUMENT", "InvalidArgument"},
    {3, "NO_SUCHFILE", "NoSuchFile"},
    {4, "NO_MODEL", "NoModel"},
    {5, "ENGINE_ERROR", "EngineError"},
    {6, "RUNTIME_EXCEPTION", "RuntimeException"},
    {7, "INVALID_PROTOBUF", "InvalidProtobuf"},
    {8, "MODEL_LOADED", "ModelLoaded"},
    {9, "NOT_IMPLEMENTED", "NotImplemented"},
    {10, "INVALID_GRAPH", "InvalidGraph"},
    {11, "EP_FAIL", "EPFail"},
};
PyObject* g_classes[std::size(kStatuses)] = {};

size_t StatusIndex(onyx::ErrorCode code) {
  switch (code) {
    case onyx::ErrorCode::kInvalidArgument: return 1;
    case onyx::ErrorCode::kNoSuchFile: return 2;
    case onyx::ErrorCode::kRuntime: return 5;
    case onyx::ErrorCode::kInvalidProtobuf: return 6;
    case onyx::ErrorCode::kNotImplemented: return 8;
    case onyx::ErrorCode::kInvalidModel: return 9;
    case onyx::ErrorCode::kFail:
    case onyx::ErrorCode::kOutOfMemory: return 0;
  }
  return 0;
}

}  // namespace

void BindErrors(nb::module_& m) {
  for (size_t i = 0; i < std::size(kStatuses); ++i) {
    // Named as ONNX Runtime's, so tracebacks and isinstance checks read the same.
    const std::string qualified = std::string("onyx.capi.onnxruntime_pybind11_state.") + kStatuses[i].cls;
    g_classes[i] = PyErr_NewException(qualified.c_str(), PyExc_Exception, nullptr);
    m.attr(kStatuses[i].cls) = nb::borrow(g_classes[i]);
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const onyx::Error& e) {
      const OrtStatus& s = kStatuses[StatusIndex(e.code())];
      // ONNX Runtime's message layout, which programs sometimes match on.
      const std::string message =
          "[ONNXRuntimeError] : " + std::to_string(s.code) + " : " + s.status + " : " + e.what();
      PyErr_SetString(g_classes[StatusIndex(e.code())], message.c_str());
    }
  });
}

}  // namespace onyx_python
