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
  int physical_cores = 1;
  int logical_cores = 1;
};

const CpuFeatures& GetCpuFeatures();

}  // namespace onyx
