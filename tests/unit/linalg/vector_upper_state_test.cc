// Every vector ISA variant returns with the upper halves of the YMM / ZMM registers clean
// (vzeroupper). Left dirty, the thread's next legacy-SSE code runs far slower on Intel cores: a
// loop calling libm's sinf per element took 5-40x as long. GCC adds the vzeroupper only under
// -fexpensive-optimizations (on from -O2), so the sanitize preset's -O1 build left it out until
// cmake/onyx_layers.cmake asked for it; the inter-op lane that had run the AVX-512 Add then ran
// its next branch 8x slower (docs/threading.md). The state is read back with XGETBV(1).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "linalg/gemm.h"
#include "linalg/vector_math.h"
#include "linalg/vector_test_util.h"
#include "platform/cpu_features.h"

namespace onyx::linalg {
namespace {

#if defined(__x86_64__)
// XGETBV with ECX = 1 (XINUSE) is there: CPUID.(EAX=0DH, ECX=1):EAX bit 2.
bool CanReadStateInUse() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 0xd) return false;
  __cpuid_count(0xd, 1, eax, ebx, ecx, edx);
  return ((eax >> 2) & 1) != 0 && GetCpuFeatures().avx2;
}

// XINUSE bits 2 (the upper 128 bits of YMM0-15) and 6 (the upper 256 bits of ZMM0-15): the state
// that legacy SSE code pays for. (ZMM16-31, bit 7, are out of SSE's reach, and glibc's EVEX
// string functions leave them in use anyway.)
uint64_t DirtyUpperHalves() {
  uint32_t lo = 0, hi = 0;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return ((uint64_t{hi} << 32) | lo) & ((1u << 2) | (1u << 6));
}

// Clean state first (this file is compiled without AVX, so nothing here dirties it again), then
// the kernel, then the state it left.
template <typename Fn>
uint64_t StateAfter(Fn&& kernel) {
  asm volatile("vzeroupper" ::: "memory");
  if (DirtyUpperHalves() != 0) return ~uint64_t{0};  // could not clean: report as a failure
  kernel();
  return DirtyUpperHalves();
}
#endif

class UpperStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__x86_64__)
    if (!CanReadStateInUse()) GTEST_SKIP() << "no AVX2 or no XGETBV(1) on this CPU: nothing to check";
#else
    GTEST_SKIP() << "x86-64 only";
#endif
  }
};

TEST_F(UpperStateTest, VectorKernelsOfEveryIsaReturnWithCleanUpperHalves) {
#if defined(__x86_64__)
  constexpr size_t kN = 1000;  // vector bodies and tails
  std::vector<float> x(kN), b(kN), y(kN), scale(kN, 1.5f), bias(kN, 0.25f);
  for (size_t i = 0; i < kN; ++i) {
    x[i] = static_cast<float>(i % 97) * 0.03f - 1.2f;
    b[i] = static_cast<float>(i % 13) * 0.5f + 0.5f;
  }
  std::vector<double> acc(kN);
  float mean = 0, inv = 0;
  const struct {
    const char* name;
    std::function<void()> run;
  } kernels[] = {
      {"VecExp", [&] { VecExp(x.data(), y.data(), kN); }},
      {"VecTanh", [&] { VecTanh(x.data(), y.data(), kN); }},
      {"VecGeluErf", [&] { VecGeluErf(x.data(), y.data(), kN); }},
      {"VecBinary add", [&] { VecBinary(BinaryOp::kAdd, x.data(), b.data(), y.data(), kN); }},
      {"VecBinaryScalar mul", [&] { VecBinaryScalar(BinaryOp::kMul, x.data(), 3.0f, y.data(), kN); }},
      {"VecScalarBinary div", [&] { VecScalarBinary(BinaryOp::kDiv, 1.0f, b.data(), y.data(), kN); }},
      {"ReduceSum", [&] { (void)ReduceSum(x.data(), kN); }},
      {"ReduceMax", [&] { (void)ReduceMax(x.data(), kN); }},
      {"AccumulateSum", [&] { AccumulateSum(x.data(), acc.data(), kN); }},
      {"SoftmaxRow", [&] { SoftmaxRow(x.data(), y.data(), kN); }},
      {"LayerNormRow", [&] { LayerNormRow(x.data(), y.data(), kN, scale.data(), bias.data(), 1e-5f, &mean, &inv); }},
      {"RmsNormRow", [&] { RmsNormRow(x.data(), y.data(), kN, scale.data(), 1e-5f, &inv); }},
  };
  for (const std::string& isa : SupportedVectorIsas()) {
    testing::VectorIsaGuard guard(isa);
    ASSERT_TRUE(guard.ok()) << isa;
    for (const auto& k : kernels)
      EXPECT_EQ(StateAfter(k.run), 0u) << k.name << " on " << isa << " left the upper vector halves in use";
  }
#endif
}

TEST_F(UpperStateTest, SgemmOfEveryIsaReturnsWithCleanUpperHalves) {
#if defined(__x86_64__)
  constexpr int64_t kM = 37, kN = 45, kK = 29;  // microkernel tiles and edges
  std::vector<float> a(kM * kK, 0.5f), b(kK * kN, -0.25f), c(kM * kN);
  for (const std::string& isa : SupportedSgemmIsas()) {
    ASSERT_TRUE(ForceIsa(isa)) << isa;
    for (bool trans_b : {false, true}) {
      const uint64_t state = StateAfter([&] {
        Sgemm(false, trans_b, kM, kN, kK, 1.0f, a.data(), kK, b.data(), trans_b ? kK : kN, 0.0f, c.data(), kN,
              nullptr);
      });
      EXPECT_EQ(state, 0u) << SgemmKernelName() << (trans_b ? " (B transposed)" : "")
                           << " left the upper vector halves in use";
    }
  }
  ForceIsa("auto");
#endif
}

}  // namespace
}  // namespace onyx::linalg
