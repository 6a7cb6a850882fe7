#include "testing/value_compare.h"

#include <cmath>
#include <complex>

#include "base/float_types.h"
#include "base/str_cat.h"

namespace onyx::testing {

double ElementAsDouble(const Tensor& t, int64_t i) {
  const void* p = t.raw_data();
  auto sub_byte = [&](int bits, bool is_signed) {
    const int per_byte = 8 / bits;
    int v = (static_cast<const uint8_t*>(p)[i / per_byte] >> ((i % per_byte) * bits)) & ((1 << bits) - 1);
    if (is_signed && (v >> (bits - 1))) v -= 1 << bits;
    return v;
  };
  switch (t.dtype()) {
    case DataType::kFloat: return static_cast<const float*>(p)[i];
    case DataType::kDouble: return static_cast<const double*>(p)[i];
    case DataType::kFloat16: return HalfBitsToFloat(static_cast<const uint16_t*>(p)[i]);
    case DataType::kBFloat16: return BFloat16BitsToFloat(static_cast<const uint16_t*>(p)[i]);
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: return MinifloatToFloat(static_cast<const uint8_t*>(p)[i], t.dtype());
    case DataType::kFloat8E8M0: return E8M0ToFloat(static_cast<const uint8_t*>(p)[i]);
    case DataType::kFloat4E2M1: return MinifloatToFloat(static_cast<uint8_t>(sub_byte(4, false)), t.dtype());
    case DataType::kInt4: return sub_byte(4, true);
    case DataType::kUInt4: return sub_byte(4, false);
    case DataType::kInt2: return sub_byte(2, true);
    case DataType::kUInt2: return sub_byte(2, false);
    case DataType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DataType::kUInt8: return static_cast<const uint8_t*>(p)[i];
    case DataType::kUInt16: return static_cast<const uint16_t*>(p)[i];
    case DataType::kUInt32: return static_cast<const uint32_t*>(p)[i];
    case DataType::kUInt64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DataType::kBool: return static_cast<const uint8_t*>(p)[i] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

namespace {

bool IsApproxType(DataType t) {
  return IsFloatingPoint(t) || t == DataType::kComplex64 || t == DataType::kComplex128;
}

std::string Fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

bool Close(double e, double g, const Tolerance& tol) {
  if (std::isnan(e)) return std::isnan(g);
  if (std::isinf(e)) return e == g;
  if (std::isnan(g) || std::isinf(g)) return false;
  return std::fabs(g - e) <= tol.atol + tol.rtol * std::fabs(e);
}

}  // namespace

std::string CompareTensors(const Tensor& expected, const Tensor& got, const Tolerance& tol) {
  if (expected.dtype() != got.dtype())
    return StrCat("element type ", DataTypeName(got.dtype()), ", expected ", DataTypeName(expected.dtype()));
  if (expected.shape() != got.shape())
    return StrCat("shape ", ShapeToString(got.shape()), ", expected ", ShapeToString(expected.shape()));
  const int64_t n = expected.size();
  if (expected.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (expected.data<std::string>()[i] != got.data<std::string>()[i])
        return StrCat("element ", i, " is \"", got.data<std::string>()[i], "\", expected \"",
                      expected.data<std::string>()[i], "\"");
    return "";
  }
  if (expected.dtype() == DataType::kComplex64 || expected.dtype() == DataType::kComplex128) {
    const bool f32 = expected.dtype() == DataType::kComplex64;
    for (int64_t i = 0; i < 2 * n; ++i) {
      const double e = f32 ? expected.data<float>()[i] : expected.data<double>()[i];
      const double g = f32 ? got.data<float>()[i] : got.data<double>()[i];
      if (!Close(e, g, tol))
        return StrCat("component ", i, " is ", Fmt(g), ", expected ", Fmt(e), " (", n, " complex elements)");
    }
    return "";
  }
  const bool approx = IsApproxType(expected.dtype());
  int64_t bad = 0, first = -1;
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = ElementAsDouble(expected, i);
    const double g = ElementAsDouble(got, i);
    const bool ok = approx ? Close(e, g, tol) : e == g;
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
      if (std::isfinite(e) && std::isfinite(g)) worst = std::max(worst, std::fabs(g - e));
    }
  }
  if (bad == 0) return "";
  return StrCat(bad, " of ", n, " elements differ; first at ", first, ": got ", Fmt(ElementAsDouble(got, first)),
                ", expected ", Fmt(ElementAsDouble(expected, first)), " (max abs diff ", Fmt(worst), ")");
}

std::string CompareValues(const Value& expected, const Value& got, const Tolerance& tol) {
  if (expected.kind() != got.kind()) return StrCat("got ", got.Describe(), ", expected ", expected.Describe());
  switch (expected.kind()) {
    case Value::Kind::kNone: return "";
    case Value::Kind::kTensor: return CompareTensors(expected.tensor(), got.tensor(), tol);
    case Value::Kind::kSequence: {
      const auto& e = expected.sequence();
      const auto& g = got.sequence();
      if (e.size() != g.size()) return StrCat("sequence of ", g.size(), ", expected ", e.size());
      for (size_t i = 0; i < e.size(); ++i) {
        std::string d = CompareValues(e[i], g[i], tol);
        if (!d.empty()) return StrCat("sequence element ", i, ": ", d);
      }
      return "";
    }
    case Value::Kind::kMap: {
      std::string d = CompareTensors(expected.map_keys(), got.map_keys(), Tolerance{0, 0});
      if (!d.empty()) return "map keys: " + d;
      d = CompareTensors(expected.map_values(), got.map_values(), tol);
      return d.empty() ? "" : "map values: " + d;
    }
  }
  return "";
}

}  // namespace onyx::testing
