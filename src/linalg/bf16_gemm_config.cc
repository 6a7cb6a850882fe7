// The bf16 GEMM selection, best first: AMX-BF16 where the CPU has it and Linux grants the tile
// state (it runs by default); AVX-512 BF16 where vdpbf16ps outruns the SGEMM's FMA (measured once,
// Bf16GemmWorthIt); else nothing (callers keep their float32 path). The scalar variant runs only
// when a test forces it.
#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/bf16_gemm.h"
#include "linalg/bf16_gemm_kernel.h"
#include "platform/cpu_features.h"

namespace onyx::linalg {
namespace {

const Bf16GemmKernel* Avx512() {
#if defined(__x86_64__)
  static const bool has = GetCpuFeatures().avx512_bf16;
  if (has) return &kBf16GemmAvx512_14x32;
#endif
  return nullptr;
}

// AMX also needs Linux's per-process permission (RequestAmxPermission); refused, AVX-512 runs.
const Bf16GemmKernel* Amx() {
#if defined(__x86_64__)
  static const bool has = GetCpuFeatures().avx512_bf16 && GetCpuFeatures().amx_bf16 && RequestAmxPermission();
  if (has) return &kBf16GemmAmx32x32;
#endif
  return nullptr;
}

// ONYX_LINALG_ISA naming a smaller ISA (avx2, scalar) keeps the family off, as it keeps AVX-512
// off for the SGEMM; ONYX_BF16_GEMM overrides the speed rule.
const Bf16GemmKernel* Default() {
  if (const char* env = std::getenv("ONYX_LINALG_ISA")) {
    const std::string_view isa(env);
    if (!isa.empty() && isa != "auto" && isa != "avx512" && isa != "avx512bf16") return nullptr;
  }
  const char* env = std::getenv("ONYX_BF16_GEMM");
  if (const Bf16GemmKernel* amx = Amx()) return Bf16GemmWorthIt(env, amx->isa, 0.0) ? amx : nullptr;
  const Bf16GemmKernel* native = Avx512();
  if (native == nullptr) return nullptr;
  const std::string_view mode(env != nullptr ? env : "");
  double dot_over_fma = 0.0;  // measured only where the rule, not the variable, decides
#if defined(__x86_64__)
  if (mode.empty() || mode == "auto") dot_over_fma = MeasureBf16DotOverFmaRate();
#endif
  return Bf16GemmWorthIt(env, native->isa, dot_over_fma) ? native : nullptr;
}

std::atomic<const Bf16GemmKernel*> g_forced{nullptr};
std::atomic<bool> g_forced_set{false};

}  // namespace

const Bf16GemmKernel* SelectedBf16GemmKernel() {
  if (g_forced_set.load(std::memory_order_acquire)) return g_forced.load(std::memory_order_acquire);
  static const Bf16GemmKernel* const chosen = Default();
  return chosen;
}

bool ForceBf16Isa(std::string_view isa) {
  if (isa.empty() || isa == "auto") {
    g_forced_set.store(false, std::memory_order_release);
    return true;
  }
  const Bf16GemmKernel* kernel = nullptr;
  if (isa == "scalar") kernel = &kBf16GemmScalar4x32;
  else if (isa == "avx512bf16") kernel = Avx512();
  else if (isa == "amx") kernel = Amx();
  if (kernel == nullptr) return false;
  g_forced.store(kernel, std::memory_order_release);
  g_forced_set.store(true, std::memory_order_release);
  return true;
}

bool Bf16GemmAvailable() { return SelectedBf16GemmKernel() != nullptr; }

bool Bf16GemmWorthIt(const char* env, std::string_view isa, double dot_over_fma) {
  const std::string_view mode(env != nullptr ? env : "");
  if (mode == "on") return true;
  if (mode == "off") return false;
  if (!mode.empty() && mode != "auto")
    throw std::invalid_argument("ONYX_BF16_GEMM='" + std::string(mode) + "': expected on, off or auto");
  return isa == "amx" || dot_over_fma >= kBf16MinDotOverFmaRate;
}

std::vector<std::string> SupportedBf16Isas() {
  std::vector<std::string> out;
  if (Amx() != nullptr) out.emplace_back("amx");
  if (Avx512() != nullptr) out.emplace_back("avx512bf16");
  out.emplace_back("scalar");
  return out;
}

const char* Bf16GemmKernelName() {
  const Bf16GemmKernel* k = SelectedBf16GemmKernel();
  return k ? k->name : "";
}

}  // namespace onyx::linalg
