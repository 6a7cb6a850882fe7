// q8_pool.h's Q8MaxPool2d compiled for avx512 (q8_pool_impl.h).
#if defined(__x86_64__)
#include "linalg/q8_pool_impl.h"

namespace onyx::linalg {

void Q8MaxPool2dU8Avx512(const Q8PoolGeometry& g, const uint8_t* x, uint8_t* y, uint8_t* scratch) {
  Q8MaxPool2dImpl(g, x, y, scratch);
}

void Q8MaxPool2dS8Avx512(const Q8PoolGeometry& g, const int8_t* x, int8_t* y, int8_t* scratch) {
  Q8MaxPool2dImpl(g, x, y, scratch);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
