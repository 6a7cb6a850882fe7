// C++ type <-> DataType, and type-list dispatch: call a generic lambda with the C++ type that
// matches a runtime DataType.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "base/check.h"
#include "base/float_types.h"
#include "onyx/dtype.h"

namespace onyx {

template <typename T>
constexpr DataType DataTypeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::kFloat;
  else if constexpr (std::is_same_v<T, double>) return DataType::kDouble;
  else if constexpr (std::is_same_v<T, int8_t>) return DataType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>) return DataType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>) return DataType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return DataType::kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DataType::kUInt8;
  else if constexpr (std::is_same_v<T, uint16_t>) return DataType::kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return DataType::kUInt32;
  else if constexpr (std::is_same_v<T, uint64_t>) return DataType::kUInt64;
  else if constexpr (std::is_same_v<T, bool>) return DataType::kBool;
  else if constexpr (std::is_same_v<T, Float16>) return DataType::kFloat16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DataType::kBFloat16;
  else if constexpr (std::is_same_v<T, std::string>) return DataType::kString;
  else return DataType::kUndefined;
}

template <typename T>
struct TypeTag {
  using type = T;
};

template <typename... Ts>
struct TypeList {};

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using IntegerTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using SignedTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t>;
using NumericTypes =
    TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using AllTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                          uint32_t, uint64_t, bool, std::string>;

// Calls fn(TypeTag<T>{}) with the T of `list` whose DataType is dt; false when none matches.
template <typename... Ts, typename Fn>
bool TryDispatch(TypeList<Ts...>, DataType dt, Fn&& fn) {
  return ((dt == DataTypeOf<Ts>() ? (fn(TypeTag<Ts>{}), true) : false) || ...);
}

// What a dtype error names: a string as it is, or what.Describe() (a node), built only when the
// error is thrown: building a node's description on every call took about 7% of silero_vad's
// run time.
inline const std::string& DescribeForError(const std::string& what) { return what; }
inline const char* DescribeForError(const char* what) { return what; }
template <typename Described>
std::string DescribeForError(const Described& what) {
  return what.Describe();
}

// As TryDispatch, but throws Error(kNotImplemented) naming `what` (a string or a node) when no
// type matches: the kernel has no implementation for that element type.
template <typename List, typename What, typename Fn>
void Dispatch(List list, DataType dt, const What& what, Fn&& fn) {
  if (!TryDispatch(list, dt, std::forward<Fn>(fn)))
    ONYX_THROW(kNotImplemented, DescribeForError(what), ": element type ", DataTypeName(dt), " is not supported");
}

// Arithmetic helpers that treat Float16/BFloat16 as float (compute wide, round once).
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<Float16> {
  using type = float;
};
template <>
struct ComputeTypeOf<BFloat16> {
  using type = float;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

template <typename T>
inline ComputeType<T> ToCompute(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return static_cast<float>(v);
  else return v;
}
template <typename T>
inline T FromCompute(ComputeType<T> v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return T(v);
  else return static_cast<T>(v);
}

}  // namespace onyx
