// The constants of ONNX Runtime's (MLAS's) logistic, erf and tanh, which Onyx computes in a
// quantized graph so that the codes after them are ONNX Runtime's (vector_math.h,
// Vec*AsOnnxRuntime). One copy for the vector forms (f32_vmath_impl.h) and the scalar reference
// (f32_vunary_scalar.cc); the unit test keeps its own copy on purpose, as an independent check.
// Polynomials are lowest order first: c[0] + c[1] x + ... + c[N-1] x^(N-1).
#pragma once

namespace onyx::linalg::onnxruntime_math {

// Logistic (Eigen's coefficients): x clamped to [-kLogisticClamp, kLogisticClamp], then
// x P(x^2) / Q(x^2) + 1/2, clamped to [0, 1].
constexpr float kLogisticClamp = 18.0f;
constexpr float kLogisticP[] = {2.48287947061529e-01f, 8.51377133304701e-03f, 6.08574864600143e-05f,
                                1.15627324459942e-07f, 4.37031012579801e-11f};
constexpr float kLogisticQ[] = {9.93151921023180e-01f, 1.16817656904453e-01f, 1.70198817374094e-03f,
                                6.29106785017040e-06f, 5.76102136993427e-09f, 6.10247389755681e-13f};

// Erf: |x| <= kErfSplit: |x| + |x| Small(x^2); beyond: 1 - exp(-(|x| + |x| Big(|x|))), the
// exponent floored at kErfExpFloor, that exp as 2^r Exp(f) with r = round(t log2(e)) (adding
// and subtracting kErfRoundShift) and f = t + r kErfLn2Hi + r kErfLn2Lo.
constexpr float kErfSplit = 0.921875f;
constexpr float kErfSmall[] = {1.28379151e-1f, -3.76124859e-1f, 1.12818025e-1f,
                               -2.67667342e-2f, 4.99339588e-3f,  -5.99104969e-4f};
constexpr float kErfBig[] = {1.28717512e-1f, 6.34846687e-1f,  1.06777847e-1f, -2.42545605e-2f,
                             3.88393435e-3f, -3.83208680e-4f, 1.72948930e-5f};
constexpr float kErfExp[] = {1.0f,           1.0f,           4.99999851e-1f, 1.66664466e-1f,
                             4.16689515e-2f, 8.37550033e-3f, 1.38319808e-3f};
constexpr float kErfExpFloor = -88.3762626647949f;
constexpr float kErfRoundShift = 1.25829120e+7f;  // 1.5 * 2^23
constexpr float kErfLog2e = 1.44269504088896341f;
constexpr float kErfLn2Hi = -6.93145752e-1f;
constexpr float kErfLn2Lo = -1.42860677e-6f;

// Tanh (Eigen's coefficients): x clamped to [-kTanhClamp, kTanhClamp], then x P(x^2) / Q(x^2).
constexpr float kTanhClamp = 9.0f;
constexpr float kTanhP[] = {4.89352455891786e-03f, 6.37261928875436e-04f, 1.48572235717979e-05f,
                            5.12229709037114e-08f, -8.60467152213735e-11f, 2.00018790482477e-13f,
                            -2.76076847742355e-16f};
constexpr float kTanhQ[] = {4.89352518554385e-03f, 2.26843463243900e-03f, 1.18534705686654e-04f,
                            1.19825839466702e-06f};

}  // namespace onyx::linalg::onnxruntime_math
