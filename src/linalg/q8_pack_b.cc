// q8_pack_b.h's SelectedPackBGroupsOf4: the AVX2 kernel when the SGEMM runs AVX2 or AVX-512.
#include "linalg/q8_pack_b.h"

#include <string>

#include "linalg/gemm.h"

namespace onyx::linalg {

PackBGroupsOf4Fn SelectedPackBGroupsOf4() {
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx2" || isa == "avx512") return &PackBGroupsOf4Avx2;
#endif
  return nullptr;
}

}  // namespace onyx::linalg
