// onyx._C: the extension module. python/onyx/ builds ONNX Runtime's API on top of it.
#define ONYX_NUMPY_IMPORT
#include <nanobind/nanobind.h>

#include "dtypes.h"
#include "errors.h"
#include "numpy_api.h"
#include "session_binding.h"
#include "value_object.h"

namespace nb = nanobind;

NB_MODULE(_C, m) {
  if (_import_array() < 0) throw nb::python_error();
  onyx_python::InitDtypes();
  onyx_python::BindErrors(m);
  onyx_python::BindValueObject(m);
  onyx_python::BindOptions(m);
  onyx_python::BindSession(m);
  m.attr("__version__") = ONYX_VERSION;
}
