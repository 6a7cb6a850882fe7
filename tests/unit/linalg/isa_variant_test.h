// Test fixtures forcing a linalg ISA: LinalgIsaVariant, parameterized by an ISA name ("avx512",
// "avx2", "scalar"), forces it for the vector kernel families (ForceIsa); Q8VnniTest forces the
// int8 family's AVX-512 VNNI variant (the weight-stationary kernels exist only there). Both skip
// when the CPU lacks the ISA.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "linalg/gemm.h"
#include "linalg/q8_gemm.h"

namespace onyx::linalg {

class LinalgIsaVariant : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto isas = SupportedSgemmIsas();
    if (std::find(isas.begin(), isas.end(), GetParam()) == isas.end())
      GTEST_SKIP() << GetParam() << " is not supported by this CPU";
    ASSERT_TRUE(ForceIsa(GetParam()));
  }
  void TearDown() override { ForceIsa("auto"); }
};

class Q8VnniTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto isas = SupportedQ8Isas();
    if (std::find(isas.begin(), isas.end(), "avx512vnni") == isas.end()) GTEST_SKIP() << "no AVX-512 VNNI";
    ASSERT_TRUE(ForceQ8Isa("avx512vnni"));
    ASSERT_TRUE(Q8GemmWAvailable());
  }
  void TearDown() override { ForceQ8Isa("auto"); }
};

}  // namespace onyx::linalg
