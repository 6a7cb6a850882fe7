// The int8 GEMM selection chain, best first, scalar last. By default it stays within the SGEMM's
// ISA (so ForceIsa / ONYX_LINALG_ISA run the int8 kernels of a smaller machine too); ForceQ8Isa,
// or ONYX_Q8_ISA for a whole process, picks one kernel by name.
#include <atomic>
#include <cstdlib>
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
    // AMX also needs Linux's per-process permission; refused (or no AMX), VNNI runs.
    {&kQ8GemmAmx32x32, "avx512",
     [](const CpuFeatures& f) { return f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni && RequestAmxPermission(); }},
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

const Q8GemmKernel* Find(std::string_view isa) {
  for (const Candidate& c : kChain)
    if (isa == c.kernel->isa && c.supported(GetCpuFeatures())) return c.kernel;
  return nullptr;
}

// ONYX_Q8_ISA naming a supported kernel (e.g. avx512vnni on an AMX machine, to compare the two
// on whole models); read once.
const Q8GemmKernel* EnvForced() {
  static const Q8GemmKernel* const kernel = [] {
    const char* env = std::getenv("ONYX_Q8_ISA");
    return env != nullptr ? Find(env) : nullptr;
  }();
  return kernel;
}

std::atomic<const Q8GemmKernel*> g_forced{nullptr};

}  // namespace

const Q8GemmKernel& SelectedQ8GemmKernel() {
  if (const Q8GemmKernel* forced = g_forced.load(std::memory_order_acquire)) return *forced;
  if (const Q8GemmKernel* env = EnvForced()) return *env;
  const int limit = Rank(SgemmIsa());
  for (const Candidate& c : kChain)
    if (Rank(c.sgemm_isa) >= limit && c.supported(GetCpuFeatures())) return *c.kernel;
  return kQ8GemmScalar4x16;
}

const char* SelectedQ8VectorIsa() {
  const Q8GemmKernel& kr = SelectedQ8GemmKernel();
  return kr.vector_isa != nullptr ? kr.vector_isa : kr.isa;
}

bool ForceQ8Isa(std::string_view isa) {
  if (isa.empty() || isa == "auto") {
    g_forced.store(nullptr, std::memory_order_release);
    return true;
  }
  const Q8GemmKernel* kernel = Find(isa);
  if (kernel == nullptr) return false;
  g_forced.store(kernel, std::memory_order_release);
  return true;
}

std::string Q8GemmKernelName() { return SelectedQ8GemmKernel().name; }

std::vector<std::string> SupportedQ8Isas() {
  std::vector<std::string> out;
  for (const Candidate& c : kChain)
    if (c.supported(GetCpuFeatures())) out.emplace_back(c.kernel->isa);
  return out;
}

}  // namespace onyx::linalg
