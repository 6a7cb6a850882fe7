// The ai.onnx.ml ops that take or make maps (Value::Map: 1-D keys and values tensors):
//   ZipMap (1):           float [N, C] -> sequence of N maps label -> score.
//   CastMap (1):          map(int64 -> string|float) -> [1, K] float/int64/string, DENSE (values
//                         in key order) or SPARSE (key k goes to column k, up to max_map).
//   DictVectorizer (1):   map(string|int64 -> T) -> [1, len(vocabulary)] T, 0 where absent.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <unordered_map>

#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

const Value& RequireMap(KernelContext& ctx) {
  const Value* v = ctx.input_value(0);
  if (v == nullptr || !v->is_map()) ctx.Fail(StrCat("input X must be a map, got ", v ? v->Describe() : "nothing"));
  if (v->map_keys().size() != v->map_values().size())
    ctx.Fail(StrCat("map has ", v->map_keys().size(), " keys but ", v->map_values().size(), " values"));
  return *v;
}

class ZipMap final : public OpKernel {
 public:
  explicit ZipMap(const KernelInfo& info) {
    const auto strings = info.GetStringsOr("classlabels_strings", {});
    const auto ints = info.GetIntsOr("classlabels_int64s", {});
    if (strings.empty() == ints.empty()) info.Fail("exactly one of classlabels_strings and classlabels_int64s must be given");
    if (!strings.empty()) labels_ = Tensor::FromVector(DataType::kString, {static_cast<int64_t>(strings.size())}, strings);
    else labels_ = Tensor::FromVector(DataType::kInt64, {static_cast<int64_t>(ints.size())}, ints);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() != DataType::kFloat) ctx.Fail("input X must be float");
    const RowsCols rc = FeatureRows(ctx, x);
    if (rc.cols != labels_.size())
      ctx.Fail(StrCat("input has ", rc.cols, " columns but there are ", labels_.size(), " class labels"));
    std::vector<Value> maps;
    maps.reserve(static_cast<size_t>(rc.rows));
    for (int64_t r = 0; r < rc.rows; ++r) {
      Tensor values(DataType::kFloat, {rc.cols});
      std::copy(x.data<float>() + r * rc.cols, x.data<float>() + (r + 1) * rc.cols, values.data<float>());
      maps.push_back(Value::Map(labels_, values));
    }
    ctx.SetOutput(0, Value::Sequence(std::move(maps), TypeInfo::Map(labels_.dtype(), TypeInfo::Tensor(DataType::kFloat))));
  }

 private:
  Tensor labels_;  // shared by every output map: values are immutable
};

enum class CastTo { kFloat, kString, kInt64 };

class CastMap final : public OpKernel {
 public:
  explicit CastMap(const KernelInfo& info) : max_map_(info.GetIntOr("max_map", 1)) {
    const std::string to = info.GetStringOr("cast_to", "TO_FLOAT");
    if (to == "TO_FLOAT") cast_to_ = CastTo::kFloat;
    else if (to == "TO_STRING") cast_to_ = CastTo::kString;
    else if (to == "TO_INT64") cast_to_ = CastTo::kInt64;
    else info.Fail(StrCat("cast_to '", to, "' is not one of TO_FLOAT, TO_STRING, TO_INT64"));
    const std::string form = info.GetStringOr("map_form", "DENSE");
    if (form == "DENSE") sparse_ = false;
    else if (form == "SPARSE") sparse_ = true;
    else info.Fail(StrCat("map_form '", form, "' is not DENSE or SPARSE"));
    if (sparse_ && max_map_ < 0) info.Fail(StrCat("max_map must not be negative, got ", max_map_));
  }

  void Compute(KernelContext& ctx) const override {
    const Value& m = RequireMap(ctx);
    const Tensor& keys = m.map_keys();
    const Tensor& values = m.map_values();
    if (keys.dtype() != DataType::kInt64) ctx.Fail("map keys must be int64");
    if (values.dtype() != DataType::kString && values.dtype() != DataType::kFloat)
      ctx.Fail("map values must be string or float");
    // Key order, first of equal keys kept (as a std::map would).
    const int64_t* pk = keys.data<int64_t>();
    std::vector<int64_t> order(static_cast<size_t>(keys.size()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return pk[a] < pk[b]; });
    order.erase(std::unique(order.begin(), order.end(), [&](int64_t a, int64_t b) { return pk[a] == pk[b]; }),
                order.end());
    const int64_t width = sparse_ ? max_map_ : static_cast<int64_t>(order.size());
    if (sparse_ && !order.empty() && pk[order[0]] < 0)
      ctx.Fail(StrCat("SPARSE map_form needs non-negative keys; found ", pk[order[0]]));
    const DataType out_type = cast_to_ == CastTo::kFloat    ? DataType::kFloat
                              : cast_to_ == CastTo::kInt64 ? DataType::kInt64
                                                           : DataType::kString;
    Tensor& y = ctx.AllocateOutput(0, out_type, {1, width});
    auto write = [&](int64_t col, int64_t src) {
      if (values.dtype() == DataType::kFloat) FromFloat(ctx, values.data<float>()[src], y, col);
      else FromString(ctx, values.data<std::string>()[src], y, col);
    };
    if (!sparse_) {
      for (int64_t c = 0; c < width; ++c) write(c, order[c]);
      return;
    }
    size_t next = 0;
    for (int64_t c = 0; c < width; ++c) {
      if (next < order.size() && pk[order[next]] == c) {
        write(c, order[next++]);
      } else if (cast_to_ == CastTo::kFloat) {
        y.data<float>()[c] = 0.0f;
      } else if (cast_to_ == CastTo::kInt64) {
        y.data<int64_t>()[c] = 0;
      } else {
        y.data<std::string>()[c] = "0.f";  // ONNX Runtime's pad text
      }
    }
  }

 private:
  void FromFloat(KernelContext& ctx, float v, Tensor& y, int64_t col) const {
    switch (cast_to_) {
      case CastTo::kFloat: y.data<float>()[col] = v; break;
      case CastTo::kInt64:
        if (!std::isfinite(v) || std::fabs(v) >= 9.2233720368547758e18f) ctx.Fail(StrCat("cannot cast ", v, " to int64"));
        y.data<int64_t>()[col] = static_cast<int64_t>(v);
        break;
      case CastTo::kString: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%f", static_cast<double>(v));  // std::to_string's format
        y.data<std::string>()[col] = buf;
        break;
      }
    }
  }

  void FromString(KernelContext& ctx, const std::string& s, Tensor& y, int64_t col) const {
    char* end = nullptr;
    errno = 0;
    switch (cast_to_) {
      case CastTo::kString: y.data<std::string>()[col] = s; return;
      case CastTo::kFloat: {
        const float v = std::strtof(s.c_str(), &end);
        if (end == s.c_str() || errno == ERANGE) ctx.Fail(StrCat("cannot read '", s, "' as a float"));
        y.data<float>()[col] = v;
        return;
      }
      case CastTo::kInt64: {
        const long long v = std::strtoll(s.c_str(), &end, 10);
        if (end == s.c_str() || errno == ERANGE) ctx.Fail(StrCat("cannot read '", s, "' as an int64"));
        y.data<int64_t>()[col] = v;
        return;
      }
    }
  }

  CastTo cast_to_ = CastTo::kFloat;
  bool sparse_ = false;
  int64_t max_map_;
};

using DictValueTypes = TypeList<int64_t, float, double, std::string>;

class DictVectorizer final : public OpKernel {
 public:
  explicit DictVectorizer(const KernelInfo& info) {
    const auto strings = info.GetStringsOr("string_vocabulary", {});
    const auto ints = info.GetIntsOr("int64_vocabulary", {});
    if (strings.empty() == ints.empty()) info.Fail("exactly one of string_vocabulary and int64_vocabulary must be given");
    string_keys_ = !strings.empty();
    size_ = static_cast<int64_t>(string_keys_ ? strings.size() : ints.size());
    // Repeated vocabulary entries each get the key's value.
    for (int64_t i = 0; i < size_; ++i) {
      if (string_keys_) string_cols_[strings[i]].push_back(i);
      else int_cols_[ints[i]].push_back(i);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Value& m = RequireMap(ctx);
    const Tensor& keys = m.map_keys();
    const Tensor& values = m.map_values();
    if (string_keys_ != (keys.dtype() == DataType::kString))
      ctx.Fail(StrCat("map keys are ", DataTypeName(keys.dtype()), " but the vocabulary is ",
                      string_keys_ ? "string" : "int64"));
    Tensor& y = ctx.AllocateOutput(0, values.dtype(), {1, size_});
    if (!TryDispatch(DictValueTypes{}, values.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          T* py = y.data<T>();
          std::fill(py, py + size_, T());
          const T* pv = values.data<T>();
          for (int64_t i = 0; i < keys.size(); ++i) {
            const std::vector<int64_t>* cols = nullptr;
            if (string_keys_) {
              auto it = string_cols_.find(keys.data<std::string>()[i]);
              if (it != string_cols_.end()) cols = &it->second;
            } else {
              auto it = int_cols_.find(keys.data<int64_t>()[i]);
              if (it != int_cols_.end()) cols = &it->second;
            }
            if (cols)
              for (int64_t c : *cols) py[c] = pv[i];
          }
        }))
      ctx.Fail(StrCat("map values must be int64, float, double or string, not ", DataTypeName(values.dtype())));
  }

 private:
  bool string_keys_ = true;
  int64_t size_ = 0;
  std::unordered_map<std::string, std::vector<int64_t>> string_cols_;
  std::unordered_map<int64_t, std::vector<int64_t>> int_cols_;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "ZipMap", 1, kOpsetMax, ZipMap);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "CastMap", 1, kOpsetMax, CastMap);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "DictVectorizer", 1, kOpsetMax, DictVectorizer);

}  // namespace
}  // namespace onyx::ml
