// NumPy's C API for the extension: one import (in module.cc, which defines ONYX_NUMPY_IMPORT), the
// other files share its function table.
#pragma once

#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL onyx_python_ARRAY_API
#ifndef ONYX_NUMPY_IMPORT
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
