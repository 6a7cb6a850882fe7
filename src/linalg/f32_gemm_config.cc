// The f32 GEMM selection chain: best first, scalar last (XNNPACK's config pattern). ForceIsa and
// ONYX_LINALG_ISA let tests and benchmarks run a smaller ISA on a bigger machine.
#include <atomic>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/f32_gemm_kernel.h"
#include "linalg/gemm.h"
#include "platform/cpu_features.h"

namespace onyx::linalg {
namespace {

struct Candidate {
  const F32GemmKernel* kernel;
  bool (*supported)(const CpuFeatures& cpu);
};

constexpr Candidate kChain[] = {
#if defined(__x86_64__)
    {&kF32GemmAvx512_14x32, [](const CpuFeatures& f) { return f.avx512f && f.avx512bw && f.avx512vl; }},
    {&kF32GemmAvx2_6x16, [](const CpuFeatures& f) { return f.avx2 && f.fma; }},
#endif
    {&kF32GemmScalar4x8, [](const CpuFeatures&) { return true; }},
};

const F32GemmKernel* Find(std::string_view isa) {
  for (const Candidate& c : kChain)
    if (isa == c.kernel->isa && c.supported(GetCpuFeatures())) return c.kernel;
  return nullptr;
}

const F32GemmKernel* Best() {
  if (const char* env = std::getenv("ONYX_LINALG_ISA"))
    if (const F32GemmKernel* forced = Find(env)) return forced;
  for (const Candidate& c : kChain)
    if (c.supported(GetCpuFeatures())) return c.kernel;
  return &kF32GemmScalar4x8;
}

std::atomic<const F32GemmKernel*> g_forced{nullptr};

}  // namespace

const F32GemmKernel& SelectedF32GemmKernel() {
  if (const F32GemmKernel* forced = g_forced.load(std::memory_order_acquire)) return *forced;
  static const F32GemmKernel* const best = Best();
  return *best;
}

bool ForceIsa(std::string_view isa) {
  if (isa.empty() || isa == "auto") {
    g_forced.store(nullptr, std::memory_order_release);
    return true;
  }
  const F32GemmKernel* kernel = Find(isa);
  if (kernel == nullptr) return false;
  g_forced.store(kernel, std::memory_order_release);
  return true;
}

std::string SgemmIsa() { return SelectedF32GemmKernel().isa; }

std::string SgemmKernelName() { return SelectedF32GemmKernel().name; }

std::vector<std::string> SupportedSgemmIsas() {
  std::vector<std::string> out;
  for (const Candidate& c : kChain)
    if (c.supported(GetCpuFeatures())) out.emplace_back(c.kernel->isa);
  return out;
}

}  // namespace onyx::linalg
