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

Q8PoolRows Q8PoolRowLayout(const Q8PoolGeometry& g) {
  auto round_up = [](int64_t v) { return (v + kQ8PoolBlock - 1) / kQ8PoolBlock * kQ8PoolBlock; };
  Q8PoolRows r;
  // Positions an output starts on, and outputs packed at stride 2, in whole blocks; at stride 2
  // the span covers every position the packing reads, so no code of the scratch is read unset.
  r.packed = round_up(g.out_w);
  r.span = std::max(round_up((g.out_w - 1) * g.stride_w + 1), g.stride_w == 2 ? 2 * r.packed : 0);
  // The row holds the input after its left padding and every tap read for the span.
  r.row = std::max(g.pad_left + g.in_w, r.span + (g.kernel_w - 1) * g.dilation_w);
  r.wide = r.span;
  return r;
}

int64_t Q8MaxPool2dScratch(const Q8PoolGeometry& g) {
  const Q8PoolRows r = Q8PoolRowLayout(g);
  return kQ8PoolBatch * (r.row + r.wide) + r.packed;
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
