// q8_pool_sum.h's variant: the ISA the SGEMM runs now (so ForceIsa / ONYX_LINALG_ISA test each).
#include <string>

#include "linalg/gemm.h"
#include "linalg/q8_pool_sum.h"

namespace onyx::linalg {

void Q8PlaneSumsU8Scalar(const uint8_t* x, int64_t planes, int64_t image, int32_t* sums);
void Q8PlaneSumsS8Scalar(const int8_t* x, int64_t planes, int64_t image, int32_t* sums);
#if defined(__x86_64__)
void Q8PlaneSumsU8Avx2(const uint8_t* x, int64_t planes, int64_t image, int32_t* sums);
void Q8PlaneSumsS8Avx2(const int8_t* x, int64_t planes, int64_t image, int32_t* sums);
void Q8PlaneSumsU8Avx512(const uint8_t* x, int64_t planes, int64_t image, int32_t* sums);
void Q8PlaneSumsS8Avx512(const int8_t* x, int64_t planes, int64_t image, int32_t* sums);
#endif

void Q8PlaneSumsU8(const uint8_t* x, int64_t planes, int64_t image, int32_t* sums) {
  auto fn = &Q8PlaneSumsU8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8PlaneSumsU8Avx512;
  if (isa == "avx2") fn = &Q8PlaneSumsU8Avx2;
#endif
  fn(x, planes, image, sums);
}

void Q8PlaneSumsS8(const int8_t* x, int64_t planes, int64_t image, int32_t* sums) {
  auto fn = &Q8PlaneSumsS8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8PlaneSumsS8Avx512;
  if (isa == "avx2") fn = &Q8PlaneSumsS8Avx2;
#endif
  fn(x, planes, image, sums);
}

}  // namespace onyx::linalg
