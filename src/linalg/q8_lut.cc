// Q8Lookup's dispatch (q8_lut.h) and the scalar reference.
#include "linalg/q8_lut.h"

#include <string>

#include "linalg/gemm.h"

namespace onyx::linalg {

void Q8LookupScalar(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

void Q8Lookup(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y) {
  auto fn = &Q8LookupScalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = Q8LookupVbmiSupported() ? &Q8LookupAvx512Vbmi : &Q8LookupAvx512;
  if (isa == "avx2") fn = &Q8LookupAvx2;
#endif
  fn(table, x, n, y);
}

}  // namespace onyx::linalg
