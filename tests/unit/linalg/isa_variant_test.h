// A test fixture parameterized by a linalg ISA name ("avx512", "avx2", "scalar"): it forces that
// ISA for the vector kernel families (ForceIsa) and skips when the CPU lacks it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "linalg/gemm.h"

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

}  // namespace onyx::linalg
