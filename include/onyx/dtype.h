// Element types of tensors. The numbering is ONNX's TensorProto.DataType, so a value read from a
// model can be cast directly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace onyx {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

constexpr int32_t kMaxDataType = 26;

// Bits one element occupies in memory (sub-byte types are packed, low bits first).
// 0 for kUndefined; strings report sizeof(std::string) * 8.
int DataTypeBits(DataType t);
// ONNX's spelling: "float", "int64", "float8e4m3fn", ...
std::string_view DataTypeName(DataType t);
// Inverse of DataTypeName; kUndefined when the name is unknown.
DataType DataTypeFromName(std::string_view name);
bool IsValidDataType(int32_t raw);
bool IsFloatingPoint(DataType t);  // float, double, float16, bfloat16, float8/4 types
bool IsSignedInteger(DataType t);
bool IsUnsignedInteger(DataType t);
bool IsSubByte(DataType t);  // int4, uint4, float4e2m1, int2, uint2
// Bytes needed for `count` elements of type t (rounded up for packed types).
int64_t StorageBytes(DataType t, int64_t count);

}  // namespace onyx
