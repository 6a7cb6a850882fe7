// NCHWc pooling microkernels in plain C++: one lane at a time, any block.
#include "linalg/f32_pool_nchwc_impl.h"

namespace onyx::linalg {
namespace {

struct ScalarLane {
  using V = float;
  static constexpr int kLanes = 1;
  static constexpr const char* kIsa = "scalar";
  static V Zero() { return 0.0f; }
  static V Set1(float x) { return x; }
  static V Load(const float* p) { return *p; }
  static void Store(float* p, V v) { *p = v; }
  static V Add(V a, V b) { return a + b; }
  static V Mul(V a, V b) { return a * b; }
  static V Max(V a, V b) { return a > b ? a : b; }  // b when either is NaN, as the SIMD max
};

}  // namespace

const NchwcPoolKernels kF32PoolNchwcScalar = MakePoolNchwcKernels<ScalarLane>();

}  // namespace onyx::linalg
