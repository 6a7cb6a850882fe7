// The float copy HalfBodyToFloat makes of a float16 or bfloat16 initializer (exact; a MatMul
// weight on small pages): declared here for its unit test.
#pragma once

#include "onyx/tensor.h"

namespace onyx {

// small_pages: on small pages (a copy that lives only until its kernel packs it).
Tensor WidenHalfToFloat(const Tensor& half, bool small_pages = false);

}  // namespace onyx
