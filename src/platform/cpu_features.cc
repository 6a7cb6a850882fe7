#include "platform/cpu_features.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace onyx {
namespace {

// Physical cores = distinct (physical id, core id) pairs among the CPUs we may run on.
int CountPhysicalCores(int logical) {
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string line, phys = "0";
  while (std::getline(in, line)) {
    auto value = [&] { return line.substr(line.find(':') + 1); };
    if (line.rfind("physical id", 0) == 0) phys = value();
    if (line.rfind("core id", 0) == 0) cores.insert({phys, value()});
  }
  if (cores.empty()) return logical;
  return std::min<int>(static_cast<int>(cores.size()), logical);
}

#if defined(__x86_64__)
// XCR0 bits 17 (XTILECFG) and 18 (XTILEDATA): the OS saves the tile state (OSXSAVE first, or
// xgetbv faults).
bool OsEnabledAmx() {
  unsigned eax, ebx, ecx, edx;
  __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(1), "c"(0));
  if (((ecx >> 27) & 1u) == 0) return false;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((lo >> 17) & 3u) == 3u;
}
#endif

CpuFeatures Detect() {
  CpuFeatures f;
#if defined(__x86_64__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
  unsigned eax, ebx, ecx, edx;
  __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(1), "c"(0));
  f.f16c = (ecx >> 29) & 1u;
  __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7), "c"(1));
  f.avx_vnni = (eax >> 4) & 1u;
  f.avx512_bf16 = f.avx512f && f.avx512bw && f.avx512vl && ((eax >> 5) & 1u);
  __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7), "c"(0));
  const bool amx_cpuid = ((edx >> 24) & 1u) && ((edx >> 25) & 1u);  // AMX-TILE, AMX-INT8
  f.amx_int8 = amx_cpuid && OsEnabledAmx();
  f.amx_bf16 = ((edx >> 24) & 1u) && ((edx >> 22) & 1u) && OsEnabledAmx();  // AMX-TILE, AMX-BF16
#endif
  cpu_set_t set;
  CPU_ZERO(&set);
  f.logical_cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
                                                                 : static_cast<int>(std::thread::hardware_concurrency());
  if (f.logical_cores < 1) f.logical_cores = 1;
  f.physical_cores = CountPhysicalCores(f.logical_cores);
  return f;
}

}  // namespace

const CpuFeatures& GetCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

bool RequestAmxPermission() {
  static std::once_flag once;
  static bool granted = false;
  std::call_once(once, [] {
#if defined(__x86_64__) && defined(__linux__)
    if (!GetCpuFeatures().amx_int8 && !GetCpuFeatures().amx_bf16) return;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtileData = 18;
    granted = syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtileData) == 0;
#endif
  });
  return granted;
}

}  // namespace onyx
