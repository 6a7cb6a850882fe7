// Integer helpers every layer uses.
#pragma once

#include <cstdint>

namespace onyx {

// ceil(a / b) for b > 0 and a of either sign (window arithmetic starts in the padding).
inline int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

}  // namespace onyx
