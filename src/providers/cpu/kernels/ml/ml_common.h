// Shared pieces of the ai.onnx.ml kernels: score post-transforms (as ONNX Runtime applies them,
// which the ML converters and their users rely on), reading numeric attributes that may come as
// lists or as tensors, and turning numeric inputs into float rows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/str_cat.h"
#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx::ml {

enum class PostTransform { kNone, kLogistic, kSoftmax, kSoftmaxZero, kProbit };

inline PostTransform ParsePostTransform(const KernelInfo& info, const std::string& text) {
  if (text == "NONE") return PostTransform::kNone;
  if (text == "LOGISTIC") return PostTransform::kLogistic;
  if (text == "SOFTMAX") return PostTransform::kSoftmax;
  if (text == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (text == "PROBIT") return PostTransform::kProbit;
  info.Fail(StrCat("post_transform '", text, "' is not one of NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO, PROBIT"));
}

inline float Logistic(float v) {
  // exp of a non-positive number only, so large |v| neither overflows nor loses the tail.
  const float e = 1.0f / (1.0f + std::exp(-std::abs(v)));
  return v < 0 ? 1.0f - e : e;
}

// Winitzki's approximation of erf^-1, the one the ML converters' reference (ONNX Runtime) uses.
inline float ErfInv(float x) {
  const float sgn = x < 0 ? -1.0f : 1.0f;
  x = (1 - x) * (1 + x);
  const float lg = std::log(x);
  const float v = 2 / (3.14159265358979323846f * 0.147f) + 0.5f * lg;
  const float v2 = 1 / 0.147f * lg;
  const float v3 = -v + std::sqrt(v * v - v2);
  return sgn * std::sqrt(v3);
}

inline float Probit(float v) { return 1.41421356237309504880f * ErfInv(2 * v - 1); }

template <typename T>
void SoftmaxInPlace(T* v, int64_t n) {
  float vmax = -std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) vmax = std::max(vmax, static_cast<float>(v[i]));
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    v[i] = static_cast<T>(std::exp(static_cast<float>(v[i]) - vmax));
    sum += static_cast<float>(v[i]);
  }
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<float>(v[i]) / sum);
}

// Softmax that leaves (near-)zero scores at zero: they stand for "no vote", not for exp(0).
template <typename T>
void SoftmaxZeroInPlace(T* v, int64_t n) {
  float vmax = -std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) vmax = std::max(vmax, static_cast<float>(v[i]));
  const float exp_neg_max = std::exp(-vmax);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = static_cast<float>(v[i]);
    if (x > 0.0000001f || x < -0.0000001f) {
      v[i] = static_cast<T>(std::exp(x - vmax));
      sum += static_cast<float>(v[i]);
    } else {
      v[i] = static_cast<T>(x * exp_neg_max);
    }
  }
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<float>(v[i]) / sum);
}

// Applies the transform to a row of n >= 2 scores.
template <typename T>
void TransformRow(PostTransform pt, T* v, int64_t n) {
  switch (pt) {
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(Probit(static_cast<float>(v[i])));
      break;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(Logistic(static_cast<float>(v[i])));
      break;
    case PostTransform::kSoftmax: SoftmaxInPlace(v, n); break;
    case PostTransform::kSoftmaxZero: SoftmaxZeroInPlace(v, n); break;
    case PostTransform::kNone: break;
  }
}

// How a single binary score becomes two columns.
enum class SecondClass {
  kNone = -1,          // keep one column
  kComplement = 0,     // [1 - s, s]
  kComplementNeg = 1,  // same, negative class won
  kMirror = 2,         // [-s, s] (or logistic(-s), logistic(s))
  kMirrorNeg = 3,      // same, negative class won
};

// Writes a row of scores with ONNX Runtime's rules: >= 2 scores get the transform; a single
// score gets PROBIT, or is expanded to two columns as `second` says. Returns columns written.
template <typename T>
int64_t WriteScores(std::vector<T>& scores, PostTransform pt, SecondClass second, T* out) {
  const int64_t n = static_cast<int64_t>(scores.size());
  if (n >= 2) {
    TransformRow(pt, scores.data(), n);
    std::copy(scores.begin(), scores.end(), out);
    return n;
  }
  if (n == 0) return 0;
  const T s = scores[0];
  if (pt == PostTransform::kProbit) {
    out[0] = static_cast<T>(Probit(static_cast<float>(s)));
    return 1;
  }
  switch (second) {
    case SecondClass::kComplement:
    case SecondClass::kComplementNeg:
      out[0] = static_cast<T>(1 - s);
      out[1] = s;
      return 2;
    case SecondClass::kMirror:
    case SecondClass::kMirrorNeg:
      if (pt == PostTransform::kLogistic) {
        out[0] = static_cast<T>(Logistic(static_cast<float>(-s)));
        out[1] = static_cast<T>(Logistic(static_cast<float>(s)));
      } else {
        out[0] = static_cast<T>(-s);
        out[1] = s;
      }
      return 2;
    case SecondClass::kNone: break;
  }
  out[0] = s;
  return 1;
}

// A numeric list attribute that may be given as `name` (floats/ints) or as `name_as_tensor`.
// Returns the values as double; sets *is_double when the tensor form holds doubles.
inline std::vector<double> GetNumbers(const KernelInfo& info, const std::string& name, bool* is_double = nullptr) {
  std::vector<double> out;
  const ir::Attribute* tensor_attr = info.FindAttr(name + "_as_tensor");
  const ir::Attribute* list_attr = info.FindAttr(name);
  if (tensor_attr != nullptr && list_attr != nullptr)
    info.Fail(StrCat("attributes '", name, "' and '", name, "_as_tensor' must not both be set"));
  if (tensor_attr != nullptr) {
    const Tensor& t = tensor_attr->t;
    if (t.dtype() == DataType::kDouble) {
      if (is_double) *is_double = true;
      out.assign(t.data<double>(), t.data<double>() + t.size());
    } else if (t.dtype() == DataType::kFloat) {
      out.assign(t.data<float>(), t.data<float>() + t.size());
    } else {
      info.Fail(StrCat("attribute '", name, "_as_tensor' must hold float or double, not ", DataTypeName(t.dtype())));
    }
    return out;
  }
  if (list_attr != nullptr) {
    if (list_attr->type == ir::AttrType::kFloats) {
      out.assign(list_attr->floats.begin(), list_attr->floats.end());
    } else if (list_attr->type == ir::AttrType::kFloat) {
      out.push_back(list_attr->f);
    } else if (list_attr->type == ir::AttrType::kTensor) {
      // ai.onnx.ml opset 5 gives tensors under the plain name.
      const Tensor& t = list_attr->t;
      if (t.dtype() == DataType::kDouble) {
        if (is_double) *is_double = true;
        out.assign(t.data<double>(), t.data<double>() + t.size());
      } else if (t.dtype() == DataType::kFloat) {
        out.assign(t.data<float>(), t.data<float>() + t.size());
      } else if (t.dtype() == DataType::kFloat16) {
        for (int64_t i = 0; i < t.size(); ++i) out.push_back(static_cast<float>(t.data<Float16>()[i]));
      } else {
        info.Fail(StrCat("attribute '", name, "' must hold float, double or float16, not ", DataTypeName(t.dtype())));
      }
    } else {
      info.Fail(StrCat("attribute '", name, "' has type ", ir::AttrTypeName(list_attr->type), ", expected floats"));
    }
  }
  return out;
}

// Rows and columns of a feature input: [C] is one row, [N, C] is N rows.
struct RowsCols {
  int64_t rows = 0;
  int64_t cols = 0;
};

inline RowsCols FeatureRows(const KernelContext& ctx, const Tensor& x) {
  if (x.rank() == 1) return {1, x.dim(0)};
  if (x.rank() == 2) return {x.dim(0), x.dim(1)};
  ctx.Fail(StrCat("input X must be 1-D [C] or 2-D [N, C], got shape ", ShapeToString(x.shape())));
}

using MlNumericTypes = TypeList<float, double, int64_t, int32_t>;

// The input's elements as float (the ML ops score in float like the converters' runtime).
inline std::vector<float> InputAsFloat(const KernelContext& ctx, const Tensor& x) {
  std::vector<float> out(static_cast<size_t>(x.size()));
  if (!TryDispatch(MlNumericTypes{}, x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* p = x.data<T>();
        for (int64_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(p[i]);
      }))
    ctx.Fail(StrCat("input X has element type ", DataTypeName(x.dtype()), "; expected float, double, int64 or int32"));
  return out;
}

}  // namespace onyx::ml
