// ONNX's comparison rule for test outputs: |got - expected| <= atol + rtol * |expected| for
// floating-point elements (NaN equals NaN, infinities must match), exact for integers, bools
// and strings; shapes, element types and value kinds must match exactly.
#pragma once

#include <string>

#include "onyx/value.h"

namespace onyx::testing {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Empty when equal; otherwise a one-line description of the first difference.
std::string CompareValues(const Value& expected, const Value& got, const Tolerance& tol = {});
std::string CompareTensors(const Tensor& expected, const Tensor& got, const Tolerance& tol = {});

// Element i of a tensor widened to double (for any numeric or narrow-float type).
double ElementAsDouble(const Tensor& t, int64_t i);

}  // namespace onyx::testing
