// Element conversion between ONNX element types (every type but complex), shared by Cast,
// CastLike and the quantization kernels. Values travel as one of three exact carriers: double
// (every floating type), int64 (signed integers and bool) or uint64 (unsigned integers); each
// target rounds once from its carrier. Sub-byte types are packed, low bits first.
#pragma once

#include <cstdint>
#include <string>

#include "base/float_types.h"
#include "onyx/tensor.h"

namespace onyx {

class ThreadPool;

struct ConvertOptions {
  bool saturate = true;                         // float8 and float8e8m0 targets (Cast's tables)
  E8M0Rounding round_mode = E8M0Rounding::kUp;  // float8e8m0 targets
};

enum class ValueCarrier { kDouble, kInt64, kUInt64, kString, kNone };
ValueCarrier CarrierOf(DataType t);

// Elements per byte: 2 for 4-bit types, 4 for 2-bit types, 1 otherwise.
int ElementsPerByte(DataType t);

// Bulk reads of elements [begin, begin + n) of a numeric tensor into a carrier. Any numeric
// source works with any carrier: floats truncate toward zero into integers (see
// DoubleToInt64), integers convert to double (int64 beyond 2^53 rounds).
void LoadDoubles(const Tensor& t, int64_t begin, int64_t n, double* out);
void LoadInt64s(const Tensor& t, int64_t begin, int64_t n, int64_t* out);

// Bulk writes into elements [begin, begin + n) of a numeric tensor. Floating targets round to
// nearest even (float8/e8m0 per `opts`); integer targets keep the low bits (two's complement
// wrap, as ONNX's Cast says for integers); bool is value != 0. Packed targets are
// read-modify-written byte by byte: callers that write in parallel must split at multiples of
// ElementsPerByte.
void StoreDoubles(Tensor& t, int64_t begin, int64_t n, const double* v, const ConvertOptions& opts);
void StoreInt64s(Tensor& t, int64_t begin, int64_t n, const int64_t* v, const ConvertOptions& opts);
void StoreUInt64s(Tensor& t, int64_t begin, int64_t n, const uint64_t* v, const ConvertOptions& opts);

// Float to integer as Cast does it: truncation toward zero; NaN gives 0 and values beyond the
// int64 range saturate (ONNX leaves both undefined).
int64_t DoubleToInt64(double d);
uint64_t DoubleToUInt64(double d);  // negative values wrap through int64, as a C cast would

// v rounded (to nearest even) to a value of floating type t (float, double, float16 or
// bfloat16), returned as double.
double RoundToType(double v, DataType t);

// Converts all of src into dst (same element count, any two castable types), in parallel.
// Throws Error(kInvalidArgument) naming the first string that is not a number.
void ConvertTensor(const Tensor& src, Tensor& dst, const ConvertOptions& opts, ThreadPool* pool);

// Text of a number as numpy prints it (and so as the ONNX reference's Cast to string does):
// the shortest digits that read back to the same value of the source type, positional for
// 1e-4 <= |v| < 1e16 ("0.5", "100.0"), scientific otherwise ("1e-05", "1.5e+20"); "nan",
// "inf", "-inf". Independent of the C locale.
std::string FormatFloat(double value, DataType source_type);
// Parses a number locale-independently: plain or scientific decimal, optional sign, and
// "inf"/"infinity"/"nan" in any case. Surrounding spaces are allowed. False when not a number.
bool ParseDouble(const std::string& s, double* out);
bool ParseFloat(const std::string& s, float* out);

}  // namespace onyx
