// The activation of the blocked convolutions (NchwcConv's `activation` / `activation_params`,
// FusedConv's names plus Silu and HardSwish), read from attributes with a prefix: "" for the
// conv's own, "dw_" for the depthwise fused in front of NchwcDepthwisePointwiseConv.
#pragma once

#include <string>
#include <vector>

#include "linalg/conv.h"
#include "providers/kernel.h"

namespace onyx::nn {

inline linalg::ConvActivation ParseConvActivation(const KernelInfo& info, const std::string& prefix) {
  using linalg::ConvActivation;
  ConvActivation act;
  const std::string attr = prefix + "activation";
  if (!info.HasAttr(attr)) return act;
  const std::string name = info.GetString(attr);
  size_t params = 0;
  if (name == "Relu") act.kind = ConvActivation::kRelu;
  else if (name == "Tanh") act.kind = ConvActivation::kTanh;
  else if (name == "Sigmoid") act.kind = ConvActivation::kSigmoid;
  else if (name == "Silu") act.kind = ConvActivation::kSilu;
  else if (name == "HardSwish") act.kind = ConvActivation::kHardSwish;
  else if (name == "LeakyRelu") act.kind = ConvActivation::kLeakyRelu, params = 1;
  else if (name == "Clip") act.kind = ConvActivation::kClip, params = 2;
  else if (name == "HardSigmoid") act.kind = ConvActivation::kHardSigmoid, params = 2;
  else info.Fail(StrCat(attr, " '", name, "' is not supported"));
  const std::vector<float> values = info.GetFloatsOr(attr + "_params", {});
  if (values.size() != params)
    info.Fail(StrCat(attr, " ", name, " needs ", params, " ", attr, "_params, got ", values.size()));
  if (params > 0) act.alpha = values[0];
  if (params > 1) act.beta = values[1];
  return act;
}

}  // namespace onyx::nn
