// Q8Depthwise's and Q8Requantize's variant: the ISA the SGEMM runs now (so ForceIsa / ONYX_LINALG_ISA test
// each one).
#include <string>

#include "linalg/gemm.h"
#include "linalg/q8_dwconv.h"
#include "linalg/q8_dwconv_impl.h"
#include "platform/cpu_features.h"

namespace onyx::linalg {

#define ONYX_Q8_DWCONV_DECLARE(Isa)                                                                               \
  void Q8Depthwise##Isa(const Q8DepthwiseShape& s, int64_t count, const uint8_t* x, bool x_signed, int32_t x_zp, \
                        const int32_t* w, const Q8DepthwiseRequant* rq, void* out, int32_t* scratch);            \
  void Q8Requantize##Isa(const int32_t* acc, int64_t count, int32_t bias, float scale, int32_t zero_point,        \
                         bool out_signed, uint8_t* out);
ONYX_Q8_DWCONV_DECLARE(Scalar)
#if defined(__x86_64__)
ONYX_Q8_DWCONV_DECLARE(Avx2)
ONYX_Q8_DWCONV_DECLARE(Avx512)
void Q8DepthwiseAvx512Vnni(const Q8DepthwiseShape& s, int64_t count, const uint8_t* x, bool x_signed, int32_t x_zp,
                           const int32_t* w, const Q8DepthwiseRequant* rq, void* out, int32_t* scratch);
#endif
#undef ONYX_Q8_DWCONV_DECLARE

namespace {

// A dimension with one output position reads one window whatever its stride: stride 1 there, so
// the stride phases of the plane stay within its size (a stride of 2^63 - 1 would not).
Q8DepthwiseShape Normalized(Q8DepthwiseShape s) {
  if (s.oh == 1) s.sy = 1;
  if (s.ow == 1) s.sx = 1;
  return s;
}

}  // namespace

int64_t Q8DepthwiseScratchSize(const Q8DepthwiseShape& shape) { return Q8DepthwiseLayout(Normalized(shape)).scratch; }

void Q8Depthwise(const Q8DepthwiseShape& shape, int64_t count, const uint8_t* x, bool x_signed, int32_t x_zp,
                 const int32_t* w, const Q8DepthwiseRequant* rq, void* out, int32_t* scratch) {
  const Q8DepthwiseShape s = Normalized(shape);
  auto fn = &Q8DepthwiseScalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = GetCpuFeatures().avx512vnni ? &Q8DepthwiseAvx512Vnni : &Q8DepthwiseAvx512;
  if (isa == "avx2") fn = &Q8DepthwiseAvx2;
#endif
  fn(s, count, x, x_signed, x_zp, w, rq, out, scratch);
}

void Q8Requantize(const int32_t* acc, int64_t count, int32_t bias, float scale, int32_t zero_point, bool out_signed,
                  uint8_t* out) {
  auto fn = &Q8RequantizeScalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8RequantizeAvx512;
  if (isa == "avx2") fn = &Q8RequantizeAvx2;
#endif
  fn(acc, count, bias, scale, zero_point, out_signed, out);
}

}  // namespace onyx::linalg
