// Q8Lookup's dispatch (q8_lut.h) and the scalar reference.
#include "linalg/q8_lut.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "linalg/f32_gemm_kernel.h"
#include "linalg/q8_quantize.h"
#include "linalg/vector_math.h"

namespace onyx::linalg {

void Q8SigmoidTable(bool is_signed, float sx, int32_t zx, float sy, int32_t zy, uint8_t* table) {
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  float sigmoid[256];
  for (int i = 0; i < 256; ++i) sigmoid[i] = sx * static_cast<float>((is_signed ? static_cast<int8_t>(i) : i) - zx);
  VecSigmoidAsOnnxRuntime(sigmoid, sigmoid, 256);  // ONNX Runtime builds its table with this logistic
  for (int i = 0; i < 256; ++i) {
    const float f = sigmoid[i];
    // MlasQuantizeLinear: clamp to the range less the zero point, round half to even, add it.
    const float q = std::clamp(f / sy, static_cast<float>(lo - zy), static_cast<float>(hi - zy));
    table[i] = static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(q)) + zy);
  }
}

void Q8SiluTable(bool is_signed, float sx, int32_t zx, float sy, int32_t zy, float sc, int32_t zc, uint8_t* table) {
  uint8_t codes[256], sig[256];
  for (int i = 0; i < 256; ++i) codes[i] = static_cast<uint8_t>(i);
  Q8SigmoidTable(is_signed, sx, zx, sy, zy, sig);
  const float ratio = sx * sy / sc;  // QLinearMul's order: sa * sb / sc
  if (is_signed)
    Q8MulS8(reinterpret_cast<const int8_t*>(codes), zx, reinterpret_cast<const int8_t*>(sig), 1, zy, ratio, zc, 256,
            reinterpret_cast<int8_t*>(table));
  else
    Q8MulU8(codes, zx, sig, 1, zy, ratio, zc, 256, table);
}

void Q8LookupScalar(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

void Q8Lookup(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y) {
  auto fn = &Q8LookupScalar;
#if defined(__x86_64__)
  // Called per row of a channels-last concat (tens of codes): the ISA read without a string copy.
  const std::string_view isa = SelectedF32GemmKernel().isa;
  static const bool vbmi = Q8LookupVbmiSupported();
  if (isa == "avx512") fn = vbmi ? &Q8LookupAvx512Vbmi : &Q8LookupAvx512;
  if (isa == "avx2") fn = &Q8LookupAvx2;
#endif
  fn(table, x, n, y);
}

}  // namespace onyx::linalg
