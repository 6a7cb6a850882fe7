#include "providers/cpu/kernels/cast/element_convert.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

#include "base/check.h"
#include "base/type_traits.h"
#include "platform/thread_pool.h"

namespace onyx {
namespace {

// Elements converted per step: small enough for the carrier buffers to stay in L1, and a
// multiple of every ElementsPerByte so packed targets split on byte boundaries.
constexpr int64_t kChunk = 256;

uint32_t BitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float FloatOfBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Double to float rounding to odd: the truncated value with its lowest bit set when inexact.
// Rounding that to any format at least two bits narrower (all of ours) gives the correctly
// rounded result of the double, so double sources round once.
float ToFloatRoundToOdd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return FloatOfBits(BitsOf(f) | 1u);
}

// The same for an integer magnitude (exact, without going through double).
float UIntToFloatRoundToOdd(uint64_t mag) {
  if (mag < (uint64_t{1} << 24)) return static_cast<float>(mag);
  const int high = 63 - __builtin_clzll(mag);
  const int shift = high - 23;
  uint64_t top = mag >> shift;
  if (mag & ((uint64_t{1} << shift) - 1)) top |= 1u;
  return std::ldexp(static_cast<float>(top), shift);
}

float IntToFloatRoundToOdd(int64_t v) {
  const uint64_t mag = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  const float f = UIntToFloatRoundToOdd(mag);
  return v < 0 ? -f : f;
}

// Reads packed element i (bits wide) as its unsigned field.
inline uint32_t PackedField(const uint8_t* p, int64_t i, int bits) {
  const int per = 8 / bits;
  return (p[i / per] >> ((i % per) * bits)) & ((1u << bits) - 1);
}

inline void SetPackedField(uint8_t* p, int64_t i, int bits, uint32_t v) {
  const int per = 8 / bits;
  const int shift = static_cast<int>(i % per) * bits;
  const uint32_t mask = ((1u << bits) - 1) << shift;
  p[i / per] = static_cast<uint8_t>((p[i / per] & ~mask) | ((v << shift) & mask));
}

inline int64_t SignExtend(uint32_t field, int bits) {
  const int64_t v = field;
  return (field >> (bits - 1)) ? v - (int64_t{1} << bits) : v;
}

// Calls fn(i, value) for elements [begin, begin + n) with the element's natural carrier value:
// double for floating types, int64 for signed integers and bool, uint64 for unsigned ones.
template <typename Fn>
void ForEachElement(const Tensor& t, int64_t begin, int64_t n, Fn&& fn) {
  const void* raw = t.raw_data();
  auto each = [&](auto get) {
    for (int64_t k = 0; k < n; ++k) fn(k, get(begin + k));
  };
  const auto* bytes = static_cast<const uint8_t*>(raw);
  const DataType dt = t.dtype();
  switch (dt) {
    case DataType::kFloat: return each([&](int64_t i) { return static_cast<double>(static_cast<const float*>(raw)[i]); });
    case DataType::kDouble: return each([&](int64_t i) { return static_cast<const double*>(raw)[i]; });
    case DataType::kFloat16:
      return each([&](int64_t i) { return static_cast<double>(HalfBitsToFloat(static_cast<const uint16_t*>(raw)[i])); });
    case DataType::kBFloat16:
      return each(
          [&](int64_t i) { return static_cast<double>(BFloat16BitsToFloat(static_cast<const uint16_t*>(raw)[i])); });
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      return each([&](int64_t i) { return static_cast<double>(MinifloatToFloat(bytes[i], dt)); });
    case DataType::kFloat8E8M0: return each([&](int64_t i) { return static_cast<double>(E8M0ToFloat(bytes[i])); });
    case DataType::kFloat4E2M1:
      return each([&](int64_t i) {
        return static_cast<double>(MinifloatToFloat(static_cast<uint8_t>(PackedField(bytes, i, 4)), dt));
      });
    case DataType::kInt8: return each([&](int64_t i) { return int64_t{static_cast<const int8_t*>(raw)[i]}; });
    case DataType::kInt16: return each([&](int64_t i) { return int64_t{static_cast<const int16_t*>(raw)[i]}; });
    case DataType::kInt32: return each([&](int64_t i) { return int64_t{static_cast<const int32_t*>(raw)[i]}; });
    case DataType::kInt64: return each([&](int64_t i) { return static_cast<const int64_t*>(raw)[i]; });
    case DataType::kBool: return each([&](int64_t i) { return int64_t{bytes[i] != 0}; });
    case DataType::kInt4: return each([&](int64_t i) { return SignExtend(PackedField(bytes, i, 4), 4); });
    case DataType::kInt2: return each([&](int64_t i) { return SignExtend(PackedField(bytes, i, 2), 2); });
    case DataType::kUInt8: return each([&](int64_t i) { return uint64_t{bytes[i]}; });
    case DataType::kUInt16: return each([&](int64_t i) { return uint64_t{static_cast<const uint16_t*>(raw)[i]}; });
    case DataType::kUInt32: return each([&](int64_t i) { return uint64_t{static_cast<const uint32_t*>(raw)[i]}; });
    case DataType::kUInt64: return each([&](int64_t i) { return static_cast<const uint64_t*>(raw)[i]; });
    case DataType::kUInt4: return each([&](int64_t i) { return uint64_t{PackedField(bytes, i, 4)}; });
    case DataType::kUInt2: return each([&](int64_t i) { return uint64_t{PackedField(bytes, i, 2)}; });
    default: ONYX_THROW(kNotImplemented, "element conversion: cannot read ", DataTypeName(dt), " as a number");
  }
}

// Conversions of one carrier value to the raw bits of each target.
inline int64_t AsInt64(double v) { return DoubleToInt64(v); }
inline int64_t AsInt64(int64_t v) { return v; }
inline int64_t AsInt64(uint64_t v) { return static_cast<int64_t>(v); }  // wraps, as the target keeps low bits
inline uint64_t AsUInt64(double v) { return DoubleToUInt64(v); }
inline uint64_t AsUInt64(int64_t v) { return static_cast<uint64_t>(v); }
inline uint64_t AsUInt64(uint64_t v) { return v; }
inline float AsOddFloat(double v) { return ToFloatRoundToOdd(v); }
inline float AsOddFloat(int64_t v) { return IntToFloatRoundToOdd(v); }
inline float AsOddFloat(uint64_t v) { return UIntToFloatRoundToOdd(v); }
inline bool IsNonZero(double v) { return v != 0.0 || std::isnan(v); }
inline bool IsNonZero(int64_t v) { return v != 0; }
inline bool IsNonZero(uint64_t v) { return v != 0; }

template <typename V>
void StoreCarrier(Tensor& t, int64_t begin, int64_t n, const V* v, const ConvertOptions& opts) {
  void* raw = t.raw_data();
  auto* bytes = static_cast<uint8_t*>(raw);
  const DataType dt = t.dtype();
  auto each = [&](auto put) {
    for (int64_t k = 0; k < n; ++k) put(begin + k, v[k]);
  };
  switch (dt) {
    case DataType::kFloat:
      // float from double or int64 by the hardware's one rounding (RNE).
      return each([&](int64_t i, V x) { static_cast<float*>(raw)[i] = static_cast<float>(x); });
    case DataType::kDouble: return each([&](int64_t i, V x) { static_cast<double*>(raw)[i] = static_cast<double>(x); });
    case DataType::kFloat16:
      return each([&](int64_t i, V x) { static_cast<uint16_t*>(raw)[i] = FloatToHalfBits(AsOddFloat(x)); });
    case DataType::kBFloat16:
      return each([&](int64_t i, V x) { static_cast<uint16_t*>(raw)[i] = FloatToBFloat16Bits(AsOddFloat(x)); });
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      return each([&](int64_t i, V x) { bytes[i] = FloatToMinifloat(AsOddFloat(x), dt, opts.saturate); });
    case DataType::kFloat8E8M0:
      return each([&](int64_t i, V x) { bytes[i] = FloatToE8M0(AsOddFloat(x), opts.saturate, opts.round_mode); });
    case DataType::kFloat4E2M1:
      return each(
          [&](int64_t i, V x) { SetPackedField(bytes, i, 4, FloatToMinifloat(AsOddFloat(x), dt, true)); });
    case DataType::kInt8:
      return each([&](int64_t i, V x) { static_cast<int8_t*>(raw)[i] = static_cast<int8_t>(AsInt64(x)); });
    case DataType::kInt16:
      return each([&](int64_t i, V x) { static_cast<int16_t*>(raw)[i] = static_cast<int16_t>(AsInt64(x)); });
    case DataType::kInt32:
      return each([&](int64_t i, V x) { static_cast<int32_t*>(raw)[i] = static_cast<int32_t>(AsInt64(x)); });
    case DataType::kInt64: return each([&](int64_t i, V x) { static_cast<int64_t*>(raw)[i] = AsInt64(x); });
    case DataType::kUInt8:
      return each([&](int64_t i, V x) { bytes[i] = static_cast<uint8_t>(AsUInt64(x)); });
    case DataType::kUInt16:
      return each([&](int64_t i, V x) { static_cast<uint16_t*>(raw)[i] = static_cast<uint16_t>(AsUInt64(x)); });
    case DataType::kUInt32:
      return each([&](int64_t i, V x) { static_cast<uint32_t*>(raw)[i] = static_cast<uint32_t>(AsUInt64(x)); });
    case DataType::kUInt64: return each([&](int64_t i, V x) { static_cast<uint64_t*>(raw)[i] = AsUInt64(x); });
    case DataType::kBool: return each([&](int64_t i, V x) { bytes[i] = IsNonZero(x) ? 1 : 0; });
    case DataType::kInt4:
    case DataType::kUInt4:
      return each([&](int64_t i, V x) { SetPackedField(bytes, i, 4, static_cast<uint32_t>(AsUInt64(x))); });
    case DataType::kInt2:
    case DataType::kUInt2:
      return each([&](int64_t i, V x) { SetPackedField(bytes, i, 2, static_cast<uint32_t>(AsUInt64(x))); });
    default: ONYX_THROW(kNotImplemented, "element conversion: cannot write ", DataTypeName(dt));
  }
}

std::string_view Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' || s[e - 1] == '\r')) --e;
  return std::string_view(s).substr(b, e - b);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// from_chars reports out-of-range decimals without a value: decide between 0 and Inf from the
// decimal exponent of the first significant digit.
template <typename F>
F OutOfRangeValue(std::string_view body) {
  int64_t point_pos = -1, first_digit = -1, exp = 0;
  size_t i = 0;
  for (; i < body.size() && body[i] != 'e' && body[i] != 'E'; ++i) {
    if (body[i] == '.') point_pos = static_cast<int64_t>(i);
    else if (first_digit < 0 && body[i] >= '1' && body[i] <= '9') first_digit = static_cast<int64_t>(i);
  }
  if (first_digit < 0) return F(0);
  if (i < body.size()) {
    int64_t e = 0;
    std::from_chars(body.data() + i + 1 + (body[i + 1] == '+'), body.data() + body.size(), e);
    exp = e;
  }
  const int64_t int_end = point_pos < 0 ? static_cast<int64_t>(i) : point_pos;
  const int64_t magnitude = first_digit < int_end ? int_end - first_digit - 1 + exp : int_end - first_digit + exp;
  return magnitude > 0 ? std::numeric_limits<F>::infinity() : F(0);
}

template <typename F>
bool ParseReal(const std::string& s, F* out) {
  std::string_view body = Trim(s);
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) return false;
  }
  if (body.empty()) return false;
  if (EqualsIgnoreCase(body, "inf") || EqualsIgnoreCase(body, "infinity")) {
    *out = negative ? -std::numeric_limits<F>::infinity() : std::numeric_limits<F>::infinity();
    return true;
  }
  if (EqualsIgnoreCase(body, "nan")) {
    *out = std::numeric_limits<F>::quiet_NaN();
    return true;
  }
  // Only plain decimal text from here: from_chars would also take "nan(...)" and hex forms.
  for (char c : body)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return false;
  F value{};
  const auto r = std::from_chars(body.data(), body.data() + body.size(), value, std::chars_format::general);
  if (r.ptr != body.data() + body.size()) return false;
  if (r.ec == std::errc::result_out_of_range) value = OutOfRangeValue<F>(body);
  else if (r.ec != std::errc()) return false;
  *out = negative ? -value : value;
  return true;
}

// Integers parse exactly when written as integers; other numbers ("100.5", "1e3") truncate.
bool ParseInt64(const std::string& s, int64_t* out) {
  std::string_view body = Trim(s);
  if (!body.empty() && body[0] == '+') body.remove_prefix(1);
  const auto r = std::from_chars(body.data(), body.data() + body.size(), *out);
  if (r.ec == std::errc() && r.ptr == body.data() + body.size() && !body.empty()) return true;
  double d;
  if (!ParseDouble(s, &d)) return false;
  *out = DoubleToInt64(d);
  return true;
}

bool ParseUInt64(const std::string& s, uint64_t* out) {
  std::string_view body = Trim(s);
  if (!body.empty() && body[0] == '+') body.remove_prefix(1);
  const auto r = std::from_chars(body.data(), body.data() + body.size(), *out);
  if (r.ec == std::errc() && r.ptr == body.data() + body.size() && !body.empty()) return true;
  int64_t v;
  if (!ParseInt64(s, &v)) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

bool ParseBool(const std::string& s, int64_t* out) {
  const std::string_view body = Trim(s);
  if (EqualsIgnoreCase(body, "true")) return (*out = 1), true;
  if (EqualsIgnoreCase(body, "false")) return (*out = 0), true;
  double d;
  if (!ParseDouble(s, &d)) return false;
  *out = IsNonZero(d) ? 1 : 0;
  return true;
}

// Converts strings [begin, end) into a numeric target; the index of the first bad one, or -1.
int64_t ParseRange(const Tensor& src, Tensor& dst, int64_t begin, int64_t end, const ConvertOptions& opts) {
  const std::string* s = src.data<std::string>();
  const DataType to = dst.dtype();
  const ValueCarrier carrier = to == DataType::kBool ? ValueCarrier::kInt64 : CarrierOf(to);
  double dv[kChunk];
  int64_t iv[kChunk];
  uint64_t uv[kChunk];
  for (int64_t c = begin; c < end; c += kChunk) {
    const int64_t n = std::min(kChunk, end - c);
    for (int64_t k = 0; k < n; ++k) {
      const std::string& text = s[c + k];
      bool ok;
      if (to == DataType::kFloat) {
        float f;
        ok = ParseFloat(text, &f);  // float parses directly: no double rounding
        dv[k] = f;
      } else if (to == DataType::kBool) {
        ok = ParseBool(text, &iv[k]);
      } else if (carrier == ValueCarrier::kDouble) {
        ok = ParseDouble(text, &dv[k]);
      } else if (carrier == ValueCarrier::kInt64) {
        ok = ParseInt64(text, &iv[k]);
      } else {
        ok = ParseUInt64(text, &uv[k]);
      }
      if (!ok) return c + k;
    }
    if (carrier == ValueCarrier::kDouble) StoreDoubles(dst, c, n, dv, opts);
    else if (carrier == ValueCarrier::kInt64) StoreInt64s(dst, c, n, iv, opts);
    else StoreUInt64s(dst, c, n, uv, opts);
  }
  return -1;
}

void FormatRange(const Tensor& src, Tensor& dst, int64_t begin, int64_t end) {
  std::string* out = dst.data<std::string>();
  const DataType from = src.dtype();
  if (from == DataType::kBool) {
    const auto* b = src.data<uint8_t>();
    for (int64_t i = begin; i < end; ++i) out[i] = b[i] ? "True" : "False";  // numpy's spelling
    return;
  }
  char buf[32];
  ForEachElement(src, begin, end - begin, [&](int64_t k, auto v) {
    if constexpr (std::is_same_v<decltype(v), double>) {
      out[begin + k] = FormatFloat(v, from);
    } else {
      const auto r = std::to_chars(buf, buf + sizeof(buf), v);
      out[begin + k].assign(buf, r.ptr);
    }
  });
}

// Whether `text` (scientific) reads back to exactly `value` in `type`.
bool RoundTrips(const char* text, size_t len, double value, DataType type) {
  double back = 0;
  std::from_chars(text, text + len, back);
  Tensor a(type, {1}), b(type, {1});
  std::memset(a.raw_data(), 0, static_cast<size_t>(a.byte_size()));
  std::memset(b.raw_data(), 0, static_cast<size_t>(b.byte_size()));
  // Without saturation and with nearest rounding, so that only the value itself matches.
  const ConvertOptions opts{false, E8M0Rounding::kNearest};
  StoreDoubles(a, 0, 1, &back, opts);
  StoreDoubles(b, 0, 1, &value, opts);
  return std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.byte_size())) == 0;
}

// Direct loops for the common pairs of byte-aligned types, with the same rules as the carrier
// path (float -> integer truncates and wraps through int64; NaN -> 0): the element types with a
// C++ type of their own (no float16, bfloat16, float8 or strings).
using NativeTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
                             bool>;

template <typename To, typename From>
inline To NativeConvert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);  // NaN is true
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if constexpr (std::is_same_v<To, uint64_t>) return DoubleToUInt64(static_cast<double>(v));
    else return static_cast<To>(DoubleToInt64(static_cast<double>(v)));
  } else {
    return static_cast<To>(v);  // integer wrap, or the hardware's one rounding
  }
}

template <typename Fn>
bool WithNative(DataType t, Fn&& fn) {
  return TryDispatch(NativeTypes{}, t, std::forward<Fn>(fn));
}

bool IsByteFloat8(DataType t) {
  return t == DataType::kFloat8E4M3FN || t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2 ||
         t == DataType::kFloat8E5M2FNUZ;
}

// Runs the direct loop for [begin, end) when both types have one; false otherwise.
bool DirectRange(const Tensor& src, Tensor& dst, int64_t begin, int64_t end, const ConvertOptions& opts) {
  const DataType from = src.dtype(), to = dst.dtype();
  if (from == DataType::kFloat && IsByteFloat8(to)) {
    const float* in = src.data<float>();
    auto* out = static_cast<uint8_t*>(dst.raw_data());
    for (int64_t i = begin; i < end; ++i) out[i] = FloatToMinifloat(in[i], to, opts.saturate);
    return true;
  }
  if (IsByteFloat8(from) && to == DataType::kFloat) {
    const auto* in = static_cast<const uint8_t*>(src.raw_data());
    float* out = dst.data<float>();
    for (int64_t i = begin; i < end; ++i) out[i] = MinifloatToFloat(in[i], from);
    return true;
  }
  if (from == DataType::kFloat && to == DataType::kFloat16) {
    const float* in = src.data<float>();
    auto* out = static_cast<uint16_t*>(dst.raw_data());
    for (int64_t i = begin; i < end; ++i) out[i] = FloatToHalfBits(in[i]);
    return true;
  }
  if (from == DataType::kFloat16 && to == DataType::kFloat) {
    const auto* in = static_cast<const uint16_t*>(src.raw_data());
    float* out = dst.data<float>();
    for (int64_t i = begin; i < end; ++i) out[i] = HalfBitsToFloat(in[i]);
    return true;
  }
  if (from == DataType::kFloat && to == DataType::kBFloat16) {
    const float* in = src.data<float>();
    auto* out = static_cast<uint16_t*>(dst.raw_data());
    for (int64_t i = begin; i < end; ++i) out[i] = FloatToBFloat16Bits(in[i]);
    return true;
  }
  if (from == DataType::kBFloat16 && to == DataType::kFloat) {
    const auto* in = static_cast<const uint16_t*>(src.raw_data());
    float* out = dst.data<float>();
    for (int64_t i = begin; i < end; ++i) out[i] = BFloat16BitsToFloat(in[i]);
    return true;
  }
  bool done = false;
  WithNative(from, [&](auto ftag) {
    WithNative(to, [&](auto ttag) {
      using F = typename decltype(ftag)::type;
      using T = typename decltype(ttag)::type;
      const F* in = static_cast<const F*>(src.raw_data());
      T* out = static_cast<T*>(dst.raw_data());
      if constexpr (std::is_same_v<F, bool>) {
        const auto* b = static_cast<const uint8_t*>(src.raw_data());  // any nonzero byte is true
        for (int64_t i = begin; i < end; ++i) out[i] = static_cast<T>(b[i] != 0);
      } else {
        for (int64_t i = begin; i < end; ++i) out[i] = NativeConvert<T>(in[i]);
      }
      done = true;
    });
  });
  return done;
}

}  // namespace

ValueCarrier CarrierOf(DataType t) {
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
    case DataType::kFloat4E2M1: return ValueCarrier::kDouble;
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt4:
    case DataType::kInt2:
    case DataType::kBool: return ValueCarrier::kInt64;
    case DataType::kUInt8:
    case DataType::kUInt16:
    case DataType::kUInt32:
    case DataType::kUInt64:
    case DataType::kUInt4:
    case DataType::kUInt2: return ValueCarrier::kUInt64;
    case DataType::kString: return ValueCarrier::kString;
    default: return ValueCarrier::kNone;
  }
}

int ElementsPerByte(DataType t) {
  const int bits = DataTypeBits(t);
  return bits > 0 && bits < 8 ? 8 / bits : 1;
}

int64_t DoubleToInt64(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (d < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

uint64_t DoubleToUInt64(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 18446744073709551616.0) return std::numeric_limits<uint64_t>::max();
  if (d >= 9223372036854775808.0) return static_cast<uint64_t>(d);
  return static_cast<uint64_t>(DoubleToInt64(d));
}

void LoadDoubles(const Tensor& t, int64_t begin, int64_t n, double* out) {
  ForEachElement(t, begin, n, [&](int64_t k, auto v) { out[k] = static_cast<double>(v); });
}

void LoadInt64s(const Tensor& t, int64_t begin, int64_t n, int64_t* out) {
  ForEachElement(t, begin, n, [&](int64_t k, auto v) { out[k] = AsInt64(v); });
}

void StoreDoubles(Tensor& t, int64_t begin, int64_t n, const double* v, const ConvertOptions& opts) {
  StoreCarrier(t, begin, n, v, opts);
}
void StoreInt64s(Tensor& t, int64_t begin, int64_t n, const int64_t* v, const ConvertOptions& opts) {
  StoreCarrier(t, begin, n, v, opts);
}
void StoreUInt64s(Tensor& t, int64_t begin, int64_t n, const uint64_t* v, const ConvertOptions& opts) {
  StoreCarrier(t, begin, n, v, opts);
}

double RoundToType(double v, DataType t) {
  switch (t) {
    case DataType::kFloat: return static_cast<float>(v);
    case DataType::kFloat16: return HalfBitsToFloat(FloatToHalfBits(ToFloatRoundToOdd(v)));
    case DataType::kBFloat16: return BFloat16BitsToFloat(FloatToBFloat16Bits(ToFloatRoundToOdd(v)));
    default: return v;
  }
}

bool ParseDouble(const std::string& s, double* out) { return ParseReal(s, out); }
bool ParseFloat(const std::string& s, float* out) { return ParseReal(s, out); }

std::string FormatFloat(double value, DataType source_type) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == 0.0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest scientific digits that read back to the same value of the source type.
  char sci[64];
  size_t len = 0;
  if (source_type == DataType::kFloat) {
    len = static_cast<size_t>(std::to_chars(sci, sci + sizeof(sci), static_cast<float>(value),
                                            std::chars_format::scientific).ptr - sci);
  } else if (source_type == DataType::kDouble) {
    len = static_cast<size_t>(std::to_chars(sci, sci + sizeof(sci), value, std::chars_format::scientific).ptr - sci);
  } else {
    for (int precision = 0; precision <= 17; ++precision) {
      len = static_cast<size_t>(
          std::to_chars(sci, sci + sizeof(sci), value, std::chars_format::scientific, precision).ptr - sci);
      if (RoundTrips(sci, len, value, source_type)) break;
    }
  }
  // Split "-d.ddde-XX" into sign, digits and exponent.
  const std::string_view text(sci, len);
  const size_t e_pos = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e_pos))
    if (c >= '0' && c <= '9') digits.push_back(c);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int exp10 = 0;
  std::from_chars(text.data() + e_pos + 1 + (text[e_pos + 1] == '+'), text.data() + len, exp10);
  std::string out = value < 0 ? "-" : "";
  const double mag = std::fabs(value);
  if (mag >= 1e-4 && mag < 1e16) {
    if (exp10 >= 0) {
      const size_t int_digits = static_cast<size_t>(exp10) + 1;
      out.append(digits, 0, int_digits);
      if (digits.size() < int_digits) out.append(int_digits - digits.size(), '0');
      out.push_back('.');
      if (digits.size() <= int_digits) out.push_back('0');
      else out.append(digits, int_digits, std::string::npos);
    } else {
      out.append("0.");
      out.append(static_cast<size_t>(-exp10 - 1), '0');
      out.append(digits);
    }
  } else {
    out.push_back(digits[0]);
    if (digits.size() > 1) {
      out.push_back('.');
      out.append(digits, 1, std::string::npos);
    }
    char ebuf[16];
    std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    out.append(ebuf);
  }
  return out;
}

void ConvertTensor(const Tensor& src, Tensor& dst, const ConvertOptions& opts, ThreadPool* pool) {
  ONYX_CHECK(src.size() == dst.size(), kInvalidArgument, "element conversion: ", src.Describe(), " into ",
             dst.Describe());
  const ValueCarrier from = CarrierOf(src.dtype()), to = CarrierOf(dst.dtype());
  ONYX_CHECK(from != ValueCarrier::kNone && to != ValueCarrier::kNone, kNotImplemented,
             "element conversion from ", DataTypeName(src.dtype()), " to ", DataTypeName(dst.dtype()),
             " is not supported");
  const int64_t n = src.size();
  if (n == 0) return;
  // Packed targets: clear the padding bits of the last byte too, so outputs are deterministic.
  if (DataTypeBits(dst.dtype()) < 8) std::memset(dst.raw_data(), 0, static_cast<size_t>(dst.byte_size()));
  const bool strings = from == ValueCarrier::kString || to == ValueCarrier::kString;
  if (from == ValueCarrier::kString && to == ValueCarrier::kString) {
    for (int64_t i = 0; i < n; ++i) dst.data<std::string>()[i] = src.data<std::string>()[i];
    return;
  }
  // Work in whole chunks so parallel ranges of packed targets never share a byte.
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::atomic<int64_t> first_bad{std::numeric_limits<int64_t>::max()};
  ThreadPool::For(pool, chunks, strings ? 200.0 * kChunk : 4.0 * kChunk, [&](int64_t cb, int64_t ce) {
    const int64_t begin = cb * kChunk, end = std::min(n, ce * kChunk);
    if (from == ValueCarrier::kString) {
      const int64_t bad = ParseRange(src, dst, begin, end, opts);
      if (bad >= 0) {
        int64_t cur = first_bad.load();
        while (bad < cur && !first_bad.compare_exchange_weak(cur, bad)) {
        }
      }
      return;
    }
    if (to == ValueCarrier::kString) return FormatRange(src, dst, begin, end);
    if (DirectRange(src, dst, begin, end, opts)) return;
    double dv[kChunk];
    int64_t iv[kChunk];
    uint64_t uv[kChunk];
    for (int64_t c = begin; c < end; c += kChunk) {
      const int64_t m = std::min(kChunk, end - c);
      switch (from) {
        case ValueCarrier::kDouble:
          ForEachElement(src, c, m, [&](int64_t k, auto v) { dv[k] = static_cast<double>(v); });
          StoreDoubles(dst, c, m, dv, opts);
          break;
        case ValueCarrier::kInt64:
          LoadInt64s(src, c, m, iv);
          StoreInt64s(dst, c, m, iv, opts);
          break;
        default:
          ForEachElement(src, c, m, [&](int64_t k, auto v) { uv[k] = AsUInt64(v); });
          StoreUInt64s(dst, c, m, uv, opts);
          break;
      }
    }
  });
  const int64_t bad = first_bad.load();
  if (bad != std::numeric_limits<int64_t>::max())
    ONYX_THROW(kInvalidArgument, "string element ", bad, " (\"", src.data<std::string>()[bad], "\") is not a number ",
               "that converts to ", DataTypeName(dst.dtype()));
}

}  // namespace onyx
