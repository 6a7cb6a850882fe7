// Q8DepthwiseChannel's variant: the ISA the SGEMM runs now (so ForceIsa / ONYX_LINALG_ISA test
// each one).
#include <string>

#include "linalg/gemm.h"
#include "linalg/q8_dwconv.h"

namespace onyx::linalg {

void Q8DepthwiseChannelScalar(const Q8DepthwiseShape& s, const uint8_t* x, bool x_signed, int32_t x_zp,
                              const int32_t* w, int32_t* plane, int32_t* acc);
#if defined(__x86_64__)
void Q8DepthwiseChannelAvx2(const Q8DepthwiseShape& s, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* w,
                            int32_t* plane, int32_t* acc);
void Q8DepthwiseChannelAvx512(const Q8DepthwiseShape& s, const uint8_t* x, bool x_signed, int32_t x_zp,
                              const int32_t* w, int32_t* plane, int32_t* acc);
#endif

int64_t Q8DepthwisePlaneSize(const Q8DepthwiseShape& s) {
  return ((s.oh - 1) * s.sy + (s.kh - 1) * s.dy + 1) * ((s.ow - 1) * s.sx + (s.kw - 1) * s.dx + 1);
}

void Q8DepthwiseChannel(const Q8DepthwiseShape& s, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* w,
                        int32_t* plane, int32_t* acc) {
  auto fn = &Q8DepthwiseChannelScalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q8DepthwiseChannelAvx512;
  if (isa == "avx2") fn = &Q8DepthwiseChannelAvx2;
#endif
  fn(s, x, x_signed, x_zp, w, plane, acc);
}

}  // namespace onyx::linalg
