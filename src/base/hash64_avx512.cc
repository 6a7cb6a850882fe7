// Hash64's stripes with AVX-512F: all eight lanes in one register (hash64_kernel.h).
#include <immintrin.h>

#include "base/hash64_kernel.h"

// GCC 12 reports the deliberately undefined pass-through operand of the AVX-512 shift and rotate
// builtins as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace onyx::hash64 {

void StripesAvx512(uint64_t acc[kLanes], const uint8_t* p, size_t stripes) {
  __m512i a = _mm512_loadu_si512(acc);
  const __m512i key = _mm512_loadu_si512(kLaneKeys);
  for (size_t s = 0; s < stripes; ++s, p += kStripeBytes) {
    const __m512i d = _mm512_loadu_si512(p);
    const __m512i x = _mm512_xor_si512(d, key);
    const __m512i m = _mm512_mul_epu32(x, _mm512_srli_epi64(x, 32));  // lo32(x) * hi32(x)
    a = _mm512_add_epi64(_mm512_rol_epi64(_mm512_add_epi64(a, m), kLaneRotation), d);
  }
  _mm512_storeu_si512(acc, a);
}

}  // namespace onyx::hash64
