// Portable f32 GEMM microkernel, 4 rows x 8 columns of plain floats: the last link of the
// selection chain (any CPU; the compiler may still vectorize it for the baseline ISA).
#include <cstddef>
#include <cstdint>

#include "linalg/f32_gemm_kernel.h"
#include "linalg/f32_vector_kernels.h"

namespace onyx::linalg {
namespace {

// The SIMD wrapper the shared microkernel is written over, with one lane. It needs no vector
// math: ActivateRow finishes the transcendental activations.
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
  static V Fma(V a, V b, V c) { return a * b + c; }
  static V Max(V a, V b) { return a > b ? a : b; }  // NaN in b propagates, as in SIMD max
  static V Min(V a, V b) { return a < b ? a : b; }
  static M Less(V a, V b) { return a < b; }
  static V Select(M m, V yes, V no) { return m ? yes : no; }
  static void Transpose(V*) {}  // 1 x 1
  // The transcendental epilogues run the scalar vector-math kernels in place, row by row, so
  // that a fused activation gives the bits of the standalone one.
  static void ActivateRow(int activation, float* row, int n) {
    TranscendentalActivation(kF32VUnaryScalar, activation)(row, row, static_cast<size_t>(n));
  }
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
