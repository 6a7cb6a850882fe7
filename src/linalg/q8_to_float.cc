// q8_to_float.h's dispatch and scalar reference.
#include "linalg/q8_to_float.h"

#include <cstring>
#include <string>

#include "linalg/gemm.h"
#include "linalg/no_fp_contract.h"

namespace onyx::linalg {

// Separate statements, and no contraction where the target has FMA: the graph's Mul and Add
// round one at a time.
ONYX_NO_CONTRACT void Q8ToFloatScalar(void* row, int64_t n, float scale, const float* bias, float lo, float hi) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  auto* p = static_cast<unsigned char*>(row);
  for (int64_t i = 0; i < n; ++i) {
    int32_t acc;
    std::memcpy(&acc, p + i * 4, 4);
    float v = static_cast<float>(acc) * scale;
    if (bias != nullptr) v = v + *bias;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    std::memcpy(p + i * 4, &v, 4);
  }
}

Q8ToFloatFn Q8ToFloatKernel() {
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") return &Q8ToFloatAvx512;
  if (isa == "avx2") return &Q8ToFloatAvx2;
#endif
  return &Q8ToFloatScalar;
}

void Q8ToFloat(void* row, int64_t n, float scale, const float* bias, float lo, float hi) {
  Q8ToFloatKernel()(row, n, scale, bias, lo, hi);
}

}  // namespace onyx::linalg
