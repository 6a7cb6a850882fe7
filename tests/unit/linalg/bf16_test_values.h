// Inputs of the bf16 GEMM tests (every variant's and the AMX variant's own): uniform values in
// [-1, 1) from a seed, and the bfloat16 value a float rounds to.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "linalg/bf16_gemm.h"

namespace onyx::linalg::bf16_test {

inline std::vector<float> Random(size_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(gen);
  return v;
}

inline float Bf16Value(float f) {
  const uint32_t bits = static_cast<uint32_t>(RoundToBf16Bits(f)) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

}  // namespace onyx::linalg::bf16_test
