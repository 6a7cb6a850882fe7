// Reading a normalization's small parameter tensors (scale, bias, mean, variance).
#pragma once

#include <cstdint>
#include <vector>

#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx::nn {

// A float-type tensor's values in double; other element types fail naming the node.
inline std::vector<double> ParamsAsDouble(const Tensor& t, const KernelContext& ctx) {
  std::vector<double> out(static_cast<size_t>(t.size()));
  Dispatch(FloatTypes{}, t.dtype(), ctx.node(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.size(); ++i) out[i] = static_cast<double>(ToCompute(p[i]));
  });
  return out;
}

}  // namespace onyx::nn
