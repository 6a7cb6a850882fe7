// The float copy HalfBodyToFloat makes of a float16 or bfloat16 initializer (exact, on small
// pages): declared here for its unit test.
#pragma once

#include "onyx/tensor.h"

namespace onyx {

Tensor WidenHalfToFloat(const Tensor& half);

}  // namespace onyx
