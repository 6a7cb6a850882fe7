// q8_gemv.h's product compiled for AVX2 (q8_gemv_impl.h).
#if defined(__x86_64__)
#include "linalg/q8_gemv_impl.h"

namespace onyx::linalg {

void Q8GemvPanelsAvx2(const uint8_t* a, const int8_t* packed, int64_t kp, int64_t panels, int32_t* sums) {
  Q8GemvPanelsImpl(a, packed, kp, panels, sums);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
