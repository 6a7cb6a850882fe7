// Packing int8 B into 4-byte groups (4 consecutive rows of one column), the layout of the
// VNNI and AMX kernels' panels, with a vector kernel where the CPU has one.
#pragma once

#include <cstdint>

namespace onyx::linalg {

// For `groups` groups of 4 rows of B (row-major, ldb apart) and the first columns of [0, cols):
// out + q * out_group_stride + 4 c holds rows 4q .. 4q + 3 of column c, each code xor flip;
// sums[c] += the sum of those codes as int8. Returns how many leading columns it packed (a
// multiple of the vector width); the caller packs the rest.
using PackBGroupsOf4Fn = int (*)(const uint8_t* b, int64_t ldb, int64_t groups, int cols, uint8_t flip, uint8_t* out,
                                 int64_t out_group_stride, uint32_t* sums);

// The kernel for the ISA the SGEMM runs now (picked once per pack): AVX2 on AVX2 and AVX-512,
// null where there is none (ForceIsa / ONYX_LINALG_ISA = "scalar": the caller's portable loop).
PackBGroupsOf4Fn SelectedPackBGroupsOf4();

int PackBGroupsOf4Avx2(const uint8_t* b, int64_t ldb, int64_t groups, int cols, uint8_t flip, uint8_t* out,
                       int64_t out_group_stride, uint32_t* sums);

}  // namespace onyx::linalg
