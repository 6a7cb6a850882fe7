// The vector-math selection chains, one per family, best first and scalar last (XNNPACK's
// config pattern). All families follow one ISA choice: ForceVectorIsa, else the environment
// variable ONYX_VECTOR_ISA or, failing that, ONYX_LINALG_ISA (read once), else the best the CPU
// supports.
#include <atomic>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/f32_vector_kernels.h"
#include "linalg/vector_math.h"
#include "platform/cpu_features.h"

namespace onyx::linalg {
namespace {

struct Isa {
  const char* name;
  bool (*supported)(const CpuFeatures& cpu);
};

// Every chain below lists its tables in this order.
constexpr Isa kIsas[] = {
#if defined(__x86_64__)
    {"avx512", [](const CpuFeatures& f) { return f.avx512f && f.avx512bw && f.avx512vl; }},
    {"avx2", [](const CpuFeatures& f) { return f.avx2 && f.fma; }},
#endif
    {"scalar", [](const CpuFeatures&) { return true; }},
};
constexpr int kNumIsas = static_cast<int>(sizeof(kIsas) / sizeof(kIsas[0]));

#if defined(__x86_64__)
constexpr const F32VUnaryKernels* kVUnaryChain[] = {&kF32VUnaryAvx512, &kF32VUnaryAvx2, &kF32VUnaryScalar};
constexpr const F32VBinaryKernels* kVBinaryChain[] = {&kF32VBinaryAvx512, &kF32VBinaryAvx2, &kF32VBinaryScalar};
constexpr const F32ReduceKernels* kReduceChain[] = {&kF32ReduceAvx512, &kF32ReduceAvx2, &kF32ReduceScalar};
constexpr const F32SoftmaxKernels* kSoftmaxChain[] = {&kF32SoftmaxAvx512, &kF32SoftmaxAvx2, &kF32SoftmaxScalar};
constexpr const F32NormKernels* kNormChain[] = {&kF32NormAvx512, &kF32NormAvx2, &kF32NormScalar};
constexpr const X32TransposeKernels* kTransposeChain[] = {&kX32TransposeAvx512, &kX32TransposeAvx2,
                                                          &kX32TransposeScalar};
#else
constexpr const F32VUnaryKernels* kVUnaryChain[] = {&kF32VUnaryScalar};
constexpr const F32VBinaryKernels* kVBinaryChain[] = {&kF32VBinaryScalar};
constexpr const F32ReduceKernels* kReduceChain[] = {&kF32ReduceScalar};
constexpr const F32SoftmaxKernels* kSoftmaxChain[] = {&kF32SoftmaxScalar};
constexpr const F32NormKernels* kNormChain[] = {&kF32NormScalar};
constexpr const X32TransposeKernels* kTransposeChain[] = {&kX32TransposeScalar};
#endif

int Find(std::string_view name) {
  for (int i = 0; i < kNumIsas; ++i)
    if (name == kIsas[i].name && kIsas[i].supported(GetCpuFeatures())) return i;
  return -1;
}

int Best() {
  for (const char* name : {"ONYX_VECTOR_ISA", "ONYX_LINALG_ISA"})
    if (const char* env = std::getenv(name))
      if (const int forced = Find(env); forced >= 0) return forced;
  for (int i = 0; i < kNumIsas; ++i)
    if (kIsas[i].supported(GetCpuFeatures())) return i;
  return kNumIsas - 1;
}

std::atomic<int> g_forced{-1};

int Current() {
  const int forced = g_forced.load(std::memory_order_relaxed);
  if (forced >= 0) return forced;
  static const int best = Best();
  return best;
}

}  // namespace

const F32VUnaryKernels& SelectedF32VUnary() { return *kVUnaryChain[Current()]; }
const F32VBinaryKernels& SelectedF32VBinary() { return *kVBinaryChain[Current()]; }
const F32ReduceKernels& SelectedF32Reduce() { return *kReduceChain[Current()]; }
const F32SoftmaxKernels& SelectedF32Softmax() { return *kSoftmaxChain[Current()]; }
const F32NormKernels& SelectedF32Norm() { return *kNormChain[Current()]; }
const X32TransposeKernels& SelectedX32Transpose() { return *kTransposeChain[Current()]; }

bool ForceVectorIsa(std::string_view isa) {
  if (isa.empty() || isa == "auto") {
    g_forced.store(-1, std::memory_order_relaxed);
    return true;
  }
  const int i = Find(isa);
  if (i < 0) return false;
  g_forced.store(i, std::memory_order_relaxed);
  return true;
}

std::string VectorIsa() { return kIsas[Current()].name; }

std::vector<std::string> SupportedVectorIsas() {
  std::vector<std::string> out;
  for (const Isa& isa : kIsas)
    if (isa.supported(GetCpuFeatures())) out.emplace_back(isa.name);
  return out;
}

}  // namespace onyx::linalg
