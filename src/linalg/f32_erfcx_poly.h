// The scaled complementary error function as a polynomial of t = 1 / (1 + z / 2), for the
// vector-math GELU (GeluErf in f32_vmath_impl.h, which the GEMM epilogue runs too):
//   erfc(z) exp(z^2) = R(t) = kErfcxR[0] + kErfcxR[1] t + ... on z in [0, 9.76] (t in [0.17, 1]).
// A minimax fit of the relative error (Lawson's algorithm in double) made for Onyx: 3.7e-8 in
// exact arithmetic, 2.4 ulps evaluated by Horner's rule with float FMAs. Plain data, so it may
// be included by files compiled for any ISA.
#pragma once

namespace onyx::linalg {

inline constexpr float kErfcxR[] = {-7.619585630891379e-06f, 0.28225699067115784f, 0.28076469898223877f,
                                    0.25153061747550964f,    0.17570558190345764f, 0.028356317430734634f,
                                    0.20652568340301514f,    -0.42968857288360596f, 0.2585701644420624f,
                                    -0.05401391163468361f};

}  // namespace onyx::linalg
