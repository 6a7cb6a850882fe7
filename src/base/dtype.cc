#include "onyx/dtype.h"

#include <array>
#include <string>

#include "base/check.h"

namespace onyx {
namespace {

struct DataTypeRow {
  std::string_view name;
  int bits;
};

// Indexed by the enum's value.
constexpr std::array<DataTypeRow, kMaxDataType + 1> kRows = {{
    {"undefined", 0},
    {"float", 32},
    {"uint8", 8},
    {"int8", 8},
    {"uint16", 16},
    {"int16", 16},
    {"int32", 32},
    {"int64", 64},
    {"string", static_cast<int>(sizeof(std::string) * 8)},
    {"bool", 8},
    {"float16", 16},
    {"double", 64},
    {"uint32", 32},
    {"uint64", 64},
    {"complex64", 64},
    {"complex128", 128},
    {"bfloat16", 16},
    {"float8e4m3fn", 8},
    {"float8e4m3fnuz", 8},
    {"float8e5m2", 8},
    {"float8e5m2fnuz", 8},
    {"uint4", 4},
    {"int4", 4},
    {"float4e2m1", 4},
    {"float8e8m0", 8},
    {"uint2", 2},
    {"int2", 2},
}};

}  // namespace

bool IsValidDataType(int32_t raw) { return raw > 0 && raw <= kMaxDataType; }

int DataTypeBits(DataType t) {
  auto i = static_cast<int32_t>(t);
  return (i >= 0 && i <= kMaxDataType) ? kRows[i].bits : 0;
}

std::string_view DataTypeName(DataType t) {
  auto i = static_cast<int32_t>(t);
  return (i >= 0 && i <= kMaxDataType) ? kRows[i].name : std::string_view("invalid");
}

DataType DataTypeFromName(std::string_view name) {
  for (int32_t i = 1; i <= kMaxDataType; ++i)
    if (kRows[i].name == name) return static_cast<DataType>(i);
  return DataType::kUndefined;
}

bool IsFloatingPoint(DataType t) {
  switch (t) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1:
      return true;
    default:
      return false;
  }
}

bool IsSignedInteger(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32 || t == DataType::kInt64 ||
         t == DataType::kInt4 || t == DataType::kInt2;
}

bool IsUnsignedInteger(DataType t) {
  return t == DataType::kUInt8 || t == DataType::kUInt16 || t == DataType::kUInt32 || t == DataType::kUInt64 ||
         t == DataType::kUInt4 || t == DataType::kUInt2;
}

bool IsSubByte(DataType t) { return DataTypeBits(t) > 0 && DataTypeBits(t) < 8; }

int64_t StorageBytes(DataType t, int64_t count) {
  const int64_t bits = DataTypeBits(t);
  // A count too large to size saturates at INT64_MAX (never wraps), so every size limit refuses it.
  int64_t bytes = 0;
  if (bits >= 8) return __builtin_mul_overflow(count, bits / 8, &bytes) ? INT64_MAX : bytes;
  if (__builtin_mul_overflow(count, bits, &bytes) || bytes > INT64_MAX - 7) return INT64_MAX;
  return (bytes + 7) / 8;
}

}  // namespace onyx
