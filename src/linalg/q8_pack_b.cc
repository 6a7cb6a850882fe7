// q8_pack_b.h's PackBGroupsOf4: the AVX2 kernel when the SGEMM runs AVX2 or AVX-512 (ForceIsa /
// ONYX_LINALG_ISA = "scalar" leave every column to the caller's portable loop).
#include "linalg/q8_pack_b.h"

#include <string>

#include "linalg/gemm.h"

namespace onyx::linalg {

int PackBGroupsOf4(const uint8_t* b, int64_t ldb, int64_t groups, int cols, uint8_t flip, uint8_t* out,
                   int64_t out_group_stride, uint32_t* sums) {
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx2" || isa == "avx512")
    return PackBGroupsOf4Avx2(b, ldb, groups, cols, flip, out, out_group_stride, sums);
#endif
  (void)b, (void)ldb, (void)groups, (void)cols, (void)flip, (void)out, (void)out_group_stride, (void)sums;
  return 0;
}

}  // namespace onyx::linalg
