// What the CPU running us can do, read once.
#pragma once

namespace onyx {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512vnni = false;
  bool avx_vnni = false;
  bool avx512_bf16 = false;  // vdpbf16ps (AVX512_BF16)
  // AMX-TILE + AMX-INT8 in CPUID and the tile state enabled by the OS (XCR0). Linux still wants
  // each process to ask before its first tile instruction: RequestAmxPermission.
  bool amx_int8 = false;
  bool amx_bf16 = false;  // AMX-TILE + AMX-BF16 (TDPBF16PS), the same OS and permission rules
  int physical_cores = 1;
  int logical_cores = 1;
};

const CpuFeatures& GetCpuFeatures();

// Asks Linux, once per process, for the AMX tile data state (arch_prctl ARCH_REQ_XCOMP_PERM);
// true when granted, and always false without amx_int8 or amx_bf16. The kernel refuses when a thread's
// alternate signal stack is too small for the larger signal frame (AMX's 8 KiB of tile data).
bool RequestAmxPermission();

}  // namespace onyx
