// Reading and writing NumPy .npy files (format versions 1-3, little-endian, C order).
// Types NumPy lacks are written as their storage: bfloat16 as uint16 bits, float8 types as
// uint8 bits, int4/int2 unpacked to int8, uint4/uint2 unpacked to uint8. Strings use NumPy's
// fixed-width unicode ('<U'), converted from and to UTF-8.
#pragma once

#include <string>

#include "onyx/tensor.h"

namespace onyx {

Tensor ReadNpy(const std::string& path);
void WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace onyx
