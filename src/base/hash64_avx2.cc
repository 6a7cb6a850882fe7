// Hash64's stripes with AVX2: lanes 0-3 and 4-7 in two registers (hash64_kernel.h).
#include <immintrin.h>

#include "base/hash64_kernel.h"

namespace onyx::hash64 {

namespace {

inline __m256i Step(__m256i acc, __m256i d, __m256i key) {
  const __m256i x = _mm256_xor_si256(d, key);
  const __m256i m = _mm256_mul_epu32(x, _mm256_srli_epi64(x, 32));  // lo32(x) * hi32(x)
  const __m256i s = _mm256_add_epi64(acc, m);
  const __m256i r = _mm256_or_si256(_mm256_slli_epi64(s, kLaneRotation), _mm256_srli_epi64(s, 64 - kLaneRotation));
  return _mm256_add_epi64(r, d);
}

}  // namespace

void StripesAvx2(uint64_t acc[kLanes], const uint8_t* p, size_t stripes) {
  __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc));
  __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + 4));
  const __m256i k0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLaneKeys));
  const __m256i k1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLaneKeys + 4));
  for (size_t s = 0; s < stripes; ++s, p += kStripeBytes) {
    a0 = Step(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), k0);
    a1 = Step(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), k1);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc), a0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + 4), a1);
}

}  // namespace onyx::hash64
