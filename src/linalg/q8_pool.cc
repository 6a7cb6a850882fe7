// q8_pool.h's variant: the ISA the SGEMM runs now (so ForceIsa / ONYX_LINALG_ISA test each).
#include <algorithm>
#include <string>

#include "linalg/gemm.h"
#include "linalg/q8_pool.h"

namespace onyx::linalg {

void Q8MaxPool2dU8Scalar(const Q8PoolGeometry& g, const uint8_t* x, uint8_t* y, uint8_t* scratch);
void Q8MaxPool2dS8Scalar(const Q8PoolGeometry& g, const int8_t* x, int8_t* y, int8_t* scratch);
#if defined(__x86_64__)
void Q8MaxPool2dU8Avx2(const Q8PoolGeometry& g, const uint8_t* x, uint8_t* y, uint8_t* scratch);
void Q8MaxPool2dS8Avx2(const Q8PoolGeometry& g, const int8_t* x, int8_t* y, int8_t* scratch);
void Q8MaxPool2dU8Avx512(const Q8PoolGeometry& g, const uint8_t* x, uint8_t* y, uint8_t* scratch);
void Q8MaxPool2dS8Avx512(const Q8PoolGeometry& g, const int8_t* x, int8_t* y, int8_t* scratch);
#endif

int64_t Q8MaxPool2dScratch(const Q8PoolGeometry& g) {
  // The padded row must hold the input row after its left padding and every tap of the last
  // output: (out_w - 1) * stride_w + (kernel_w - 1) * dilation_w.
  const int64_t reach = (g.out_w - 1) * g.stride_w + (g.kernel_w - 1) * g.dilation_w + 1;
  return 2 * std::max(g.pad_left + g.in_w, reach);
}

void Q8MaxPool2dU8(const Q8PoolGeometry& g, const uint8_t* x, uint8_t* y, uint8_t* scratch) {
  auto fn = &Q8MaxPool2dU8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8MaxPool2dU8Avx512;
  if (isa == "avx2") fn = &Q8MaxPool2dU8Avx2;
#endif
  fn(g, x, y, scratch);
}

void Q8MaxPool2dS8(const Q8PoolGeometry& g, const int8_t* x, int8_t* y, int8_t* scratch) {
  auto fn = &Q8MaxPool2dS8Scalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8MaxPool2dS8Avx512;
  if (isa == "avx2") fn = &Q8MaxPool2dS8Avx2;
#endif
  fn(g, x, y, scratch);
}

}  // namespace onyx::linalg
