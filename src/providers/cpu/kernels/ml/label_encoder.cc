// LabelEncoder (ai.onnx.ml): maps each element through a key -> value table.
//   opset 1:   classes_strings; string -> its index (or default_int64), int64 -> the string at
//              that index (or default_string).
//   opset 2-3: keys_{strings,int64s,floats} -> values_{strings,int64s,floats}, default_*.
//   opset 4+:  also keys_tensor / values_tensor / default_tensor (string, int64, int32, int16,
//              float, double). A NaN key matches a NaN input.
#include <cstring>
#include <unordered_map>

#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

using EncoderTypes = TypeList<std::string, int64_t, int32_t, int16_t, float, double>;

bool IsIntegral(DataType t) { return t == DataType::kInt64 || t == DataType::kInt32 || t == DataType::kInt16; }
bool IsReal(DataType t) { return t == DataType::kFloat || t == DataType::kDouble; }

// One key table: strings, integers or reals (NaN folded to one key).
class KeyTable {
 public:
  void Add(const std::string& s, int64_t index) { strings_.emplace(s, index); }
  void Add(int64_t v, int64_t index) { ints_.emplace(v, index); }
  void Add(double v, int64_t index) { reals_.emplace(Bits(v), index); }

  int64_t Find(const std::string& s) const { return Lookup(strings_, s); }
  int64_t Find(int64_t v) const { return Lookup(ints_, v); }
  int64_t Find(double v) const { return Lookup(reals_, Bits(v)); }

 private:
  static uint64_t Bits(double v) {
    if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
    if (v == 0.0) v = 0.0;  // -0 and +0 are the same key
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  }
  template <typename Map, typename K>
  static int64_t Lookup(const Map& m, const K& k) {
    auto it = m.find(k);
    return it == m.end() ? -1 : it->second;
  }
  std::unordered_map<std::string, int64_t> strings_;
  std::unordered_map<int64_t, int64_t> ints_;
  std::unordered_map<uint64_t, int64_t> reals_;
};

class LabelEncoder final : public OpKernel {
 public:
  explicit LabelEncoder(const KernelInfo& info) {
    if (info.opset() < 2) InitOpset1(info);
    else InitKeysValues(info);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (opset1_) return ComputeOpset1(ctx, x);
    if (x.dtype() != key_type_)
      ctx.Fail(StrCat("input X is ", DataTypeName(x.dtype()), " but the keys are ", DataTypeName(key_type_)));
    Tensor& y = ctx.AllocateOutput(0, values_.dtype(), x.shape());
    Dispatch(EncoderTypes{}, values_.dtype(), ctx.node(), [&](auto vtag) {
      using V = typename decltype(vtag)::type;
      const V* values = values_.data<V>();
      const V& fallback = *default_.data<V>();
      V* py = y.data<V>();
      Dispatch(EncoderTypes{}, x.dtype(), ctx.node(), [&](auto ktag) {
        using K = typename decltype(ktag)::type;
        const K* px = x.data<K>();
        for (int64_t i = 0; i < x.size(); ++i) {
          int64_t idx;
          if constexpr (std::is_same_v<K, std::string>) idx = table_.Find(px[i]);
          else if constexpr (std::is_integral_v<K>) idx = table_.Find(static_cast<int64_t>(px[i]));
          else idx = table_.Find(static_cast<double>(px[i]));
          py[i] = idx < 0 ? fallback : values[idx];
        }
      });
    });
  }

 private:
  // Opset 1 is one table read in either direction; the input's type picks which.
  void ComputeOpset1(KernelContext& ctx, const Tensor& x) const {
    if (x.dtype() == DataType::kString) {
      Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, x.shape());
      const std::string* px = x.data<std::string>();
      int64_t* py = y.data<int64_t>();
      for (int64_t i = 0; i < x.size(); ++i) {
        const int64_t idx = table_.Find(px[i]);
        py[i] = idx < 0 ? default_int_ : idx;
      }
    } else if (x.dtype() == DataType::kInt64) {
      Tensor& y = ctx.AllocateOutput(0, DataType::kString, x.shape());
      const int64_t* px = x.data<int64_t>();
      std::string* py = y.data<std::string>();
      for (int64_t i = 0; i < x.size(); ++i)
        py[i] = px[i] >= 0 && px[i] < static_cast<int64_t>(classes_.size()) ? classes_[px[i]] : default_string_;
    } else {
      ctx.Fail("input X must be string or int64");
    }
  }

  void InitOpset1(const KernelInfo& info) {
    opset1_ = true;
    classes_ = info.GetStringsOr("classes_strings", {});
    // A repeated class name maps to its last index (as ONNX Runtime's table does).
    for (size_t i = classes_.size(); i-- > 0;) table_.Add(classes_[i], static_cast<int64_t>(i));
    default_int_ = info.GetIntOr("default_int64", -1);
    default_string_ = info.GetStringOr("default_string", "_Unused");
  }

  void InitKeysValues(const KernelInfo& info) {
    // Keys.
    int64_t num_keys = 0;
    auto add_keys = [&](auto&& list, DataType t) {
      key_type_ = t;
      num_keys = static_cast<int64_t>(list.size());
      for (size_t i = 0; i < list.size(); ++i) table_.Add(list[i], static_cast<int64_t>(i));
    };
    const int n_key_attrs = info.HasAttr("keys_strings") + info.HasAttr("keys_int64s") + info.HasAttr("keys_floats") +
                            (info.opset() >= 4 && info.HasAttr("keys_tensor"));
    if (n_key_attrs != 1) info.Fail("exactly one of keys_strings, keys_int64s, keys_floats, keys_tensor must be set");
    if (info.HasAttr("keys_strings")) {
      add_keys(info.GetStrings("keys_strings"), DataType::kString);
    } else if (info.HasAttr("keys_int64s")) {
      add_keys(info.GetInts("keys_int64s"), DataType::kInt64);
    } else if (info.HasAttr("keys_floats")) {
      const auto f = info.GetFloats("keys_floats");
      add_keys(std::vector<double>(f.begin(), f.end()), DataType::kFloat);
    } else {
      const Tensor& t = info.GetTensor("keys_tensor");
      if (!TryDispatch(EncoderTypes{}, t.dtype(), [&](auto tag) {
            using K = typename decltype(tag)::type;
            const K* p = t.data<K>();
            for (int64_t i = 0; i < t.size(); ++i) {
              if constexpr (std::is_same_v<K, std::string>) table_.Add(p[i], i);
              else if constexpr (std::is_integral_v<K>) table_.Add(static_cast<int64_t>(p[i]), i);
              else table_.Add(static_cast<double>(p[i]), i);
            }
          }))
        info.Fail(StrCat("keys_tensor has unsupported element type ", DataTypeName(t.dtype())));
      key_type_ = t.dtype();
      num_keys = t.size();
    }
    // Values.
    const int n_value_attrs = info.HasAttr("values_strings") + info.HasAttr("values_int64s") +
                              info.HasAttr("values_floats") + (info.opset() >= 4 && info.HasAttr("values_tensor"));
    if (n_value_attrs != 1)
      info.Fail("exactly one of values_strings, values_int64s, values_floats, values_tensor must be set");
    if (info.HasAttr("values_strings")) {
      const auto v = info.GetStrings("values_strings");
      values_ = Tensor::FromVector(DataType::kString, {static_cast<int64_t>(v.size())}, v);
    } else if (info.HasAttr("values_int64s")) {
      const auto v = info.GetInts("values_int64s");
      values_ = Tensor::FromVector(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
    } else if (info.HasAttr("values_floats")) {
      const auto v = info.GetFloats("values_floats");
      values_ = Tensor::FromVector(DataType::kFloat, {static_cast<int64_t>(v.size())}, v);
    } else {
      const Tensor& t = info.GetTensor("values_tensor");
      if (!TryDispatch(EncoderTypes{}, t.dtype(), [](auto) {}))
        info.Fail(StrCat("values_tensor has unsupported element type ", DataTypeName(t.dtype())));
      values_ = t.Reshaped({t.size()});
    }
    if (values_.size() != num_keys)
      info.Fail(StrCat(num_keys, " keys but ", values_.size(), " values; they must pair up"));
    // Default.
    const DataType vt = values_.dtype();
    if (info.opset() >= 4 && info.HasAttr("default_tensor")) {
      const Tensor& t = info.GetTensor("default_tensor");
      if (t.dtype() != vt || t.size() != 1)
        info.Fail(StrCat("default_tensor must hold one ", DataTypeName(vt), ", got ", t.Describe()));
      default_ = t.Reshaped({});
    } else if (vt == DataType::kString) {
      default_ = Tensor::Scalar(vt, info.GetStringOr("default_string", "_Unused"));
    } else if (IsIntegral(vt)) {
      const int64_t d = info.GetIntOr("default_int64", -1);
      default_ = Tensor(vt, {});
      TryDispatch(TypeList<int64_t, int32_t, int16_t>{}, vt,
                  [&](auto tag) { *default_.data<typename decltype(tag)::type>() = static_cast<typename decltype(tag)::type>(d); });
    } else if (IsReal(vt)) {
      const float d = info.GetFloatOr("default_float", -0.0f);
      default_ = Tensor(vt, {});
      if (vt == DataType::kFloat) *default_.data<float>() = d;
      else *default_.data<double>() = d;
    }
  }

  DataType key_type_ = DataType::kUndefined;
  bool opset1_ = false;
  std::vector<std::string> classes_;  // opset 1
  int64_t default_int_ = -1;          // opset 1
  std::string default_string_;        // opset 1
  KeyTable table_;
  Tensor values_;   // 1-D, the output type
  Tensor default_;  // scalar, the output type
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "LabelEncoder", 1, 1, LabelEncoder);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "LabelEncoder", 2, 3, LabelEncoder);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "LabelEncoder", 4, kOpsetMax, LabelEncoder);

}  // namespace
}  // namespace onyx::ml
