// The fixture of the int8 kernels' per-ISA tests: the parameter names an ISA of the int8
// selection ("amx", "avx512vnni", "avx2", "scalar"); the test is skipped, saying so, where the
// CPU lacks it, runs with it forced, and the default selection is restored after.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "linalg/q8_gemm.h"

namespace onyx::linalg {

class ForcedQ8IsaTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto isas = SupportedQ8Isas();
    if (std::find(isas.begin(), isas.end(), GetParam()) == isas.end())
      GTEST_SKIP() << GetParam() << " is not supported by this CPU";
    ASSERT_TRUE(ForceQ8Isa(GetParam()));
  }
  void TearDown() override { ForceQ8Isa("auto"); }
};

}  // namespace onyx::linalg
