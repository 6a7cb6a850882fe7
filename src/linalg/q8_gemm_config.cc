// The int8 GEMM selection chain, best first, scalar last. By default it stays within the SGEMM's
// ISA (so ForceIsa / ONYX_LINALG_ISA run the int8 kernels of a smaller machine too); ForceQ8Isa
// picks one kernel by name.
#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_gemm_kernel.h"
#include "platform/cpu_features.h"

namespace onyx::linalg {
namespace {

struct Candidate {
  const Q8GemmKernel* kernel;
  const char* sgemm_isa;  // the SGEMM ISA this kernel belongs to
  bool (*supported)(const CpuFeatures& cpu);
};

constexpr Candidate kChain[] = {
#if defined(__x86_64__)
    {&kQ8GemmAvx512Vnni8x32, "avx512",
     [](const CpuFeatures& f) { return f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni; }},
    {&kQ8GemmAvx2_6x16, "avx2", [](const CpuFeatures& f) { return f.avx2; }},
#endif
    {&kQ8GemmScalar4x16, "scalar", [](const CpuFeatures&) { return true; }},
};

// Position of an SGEMM ISA in the chain's order (smaller is wider).
int Rank(std::string_view sgemm_isa) {
  if (sgemm_isa == "avx512") return 0;
  if (sgemm_isa == "avx2") return 1;
  return 2;
}

std::atomic<const Q8GemmKernel*> g_forced{nullptr};

}  // namespace

const Q8GemmKernel& SelectedQ8GemmKernel() {
  if (const Q8GemmKernel* forced = g_forced.load(std::memory_order_acquire)) return *forced;
  const int limit = Rank(SgemmIsa());
  for (const Candidate& c : kChain)
    if (Rank(c.sgemm_isa) >= limit && c.supported(GetCpuFeatures())) return *c.kernel;
  return kQ8GemmScalar4x16;
}

bool ForceQ8Isa(std::string_view isa) {
  if (isa.empty() || isa == "auto") {
    g_forced.store(nullptr, std::memory_order_release);
    return true;
  }
  for (const Candidate& c : kChain)
    if (isa == c.kernel->isa && c.supported(GetCpuFeatures())) {
      g_forced.store(c.kernel, std::memory_order_release);
      return true;
    }
  return false;
}

std::string Q8GemmKernelName() { return SelectedQ8GemmKernel().name; }

std::vector<std::string> SupportedQ8Isas() {
  std::vector<std::string> out;
  for (const Candidate& c : kChain)
    if (c.supported(GetCpuFeatures())) out.emplace_back(c.kernel->isa);
  return out;
}

}  // namespace onyx::linalg
