// Portable f32 GEMM microkernel, 4 rows x 8 columns of plain floats: the last link of the
// selection chain (any CPU; the compiler may still vectorize it for the baseline ISA).
#include <cmath>
#include <cstdint>
#include <cstring>

namespace onyx::linalg {
namespace {

// The SIMD wrapper the shared microkernel is written over, with one lane.
struct Scalar {
  using V = float;
  using M = bool;
  static constexpr int kLanes = 1;

  static V Zero() { return 0.0f; }
  static V Set1(float x) { return x; }
  static V Load(const float* p) { return *p; }
  static V LoadN(const float* p, int n) { return n >= 1 ? *p : 0.0f; }
  static void StoreN(float* p, V v, int n) {
    if (n >= 1) *p = v;
  }
  static V Broadcast(const float* p) { return *p; }
  static V Add(V a, V b) { return a + b; }
  static V Sub(V a, V b) { return a - b; }
  static V Mul(V a, V b) { return a * b; }
  static V Div(V a, V b) { return a / b; }
  static V Reciprocal(V a) { return 1.0f / a; }
  static V Fma(V a, V b, V c) { return a * b + c; }
  static V Fnma(V a, V b, V c) { return c - a * b; }
  static V SquareLo(V x, V hi) { return static_cast<float>(static_cast<double>(x) * x - hi); }
  static V Max(V a, V b) { return a > b ? a : b; }  // NaN in b propagates, as in SIMD max
  static V Min(V a, V b) { return a < b ? a : b; }
  static V Abs(V a) { return std::fabs(a); }
  static V Round(V a) { return std::nearbyint(a); }
  static V Pow2i(V n) {
    const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
    float out;
    std::memcpy(&out, &bits, sizeof(out));
    return out;
  }
  static M Less(V a, V b) { return a < b; }
  static V Select(M m, V yes, V no) { return m ? yes : no; }
  static void Transpose(V*) {}  // 1 x 1
};

}  // namespace
}  // namespace onyx::linalg

#include "linalg/f32_gemm_tile_impl.h"

namespace onyx::linalg {

constexpr F32GemmKernel kF32GemmScalar4x8 = {
    "scalar", "f32_gemm_scalar_4x8", 4, 8, 256, &Tile<Scalar, 4, 8>, &PackA<Scalar, 4>, &PackB<Scalar, 8>,
    /*cold_b_panel_outer=*/false,
};

}  // namespace onyx::linalg
