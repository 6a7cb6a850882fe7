// Q8DepthwiseChannel's and Q8Requantize's variant: the ISA the SGEMM runs now (so ForceIsa / ONYX_LINALG_ISA test
// each one).
#include <string>

#include "linalg/gemm.h"
#include "linalg/q8_dwconv.h"

namespace onyx::linalg {

void Q8DepthwiseChannelScalar(const Q8DepthwiseShape& s, const uint8_t* x, bool x_signed, int32_t x_zp,
                              const int32_t* w, int32_t* plane, int32_t* acc);
void Q8RequantizeScalar(const int32_t* acc, int64_t count, int32_t bias, float scale, int32_t zero_point,
                        bool out_signed, uint8_t* out);
#if defined(__x86_64__)
void Q8RequantizeAvx2(const int32_t* acc, int64_t count, int32_t bias, float scale, int32_t zero_point,
                      bool out_signed, uint8_t* out);
void Q8RequantizeAvx512(const int32_t* acc, int64_t count, int32_t bias, float scale, int32_t zero_point,
                        bool out_signed, uint8_t* out);
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
