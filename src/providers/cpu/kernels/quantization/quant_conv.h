// QLinearConv (opset 10) and com.microsoft.QLinearConv: N-d grouped convolution of uint8/int8
// data with zero points, accumulated exactly in int32 (quant_conv_compute.h), plus the int32
// bias, requantized with x_scale * w_scale / y_scale (w_scale / w_zero_point per output channel
// or per tensor). The class is the base of the fused channels-last forms (qlinear_conv_fused.cc),
// which add a lookup table or a residual add to its output stage.
#pragma once

#include <cstdint>

#include "linalg/q8_conv_nhwc.h"
#include "providers/cpu/kernels/quantization/quant_conv_geometry.h"
#include "providers/cpu/kernels/quantization/quant_conv_weights.h"
#include "providers/kernel.h"

namespace onyx {
namespace quant_conv {

// Also com.microsoft.QLinearConv (MsQLinearConv), whose channels_last = 1 reads X and writes Y
// as [N, H, W, C] (2-D, group 1: what the optimizer's QdqNhwcLayout makes).
class QLinearConv : public OpKernel {
 public:
  explicit QLinearConv(const KernelInfo& info, bool channels_last = false)
      : attrs_(ReadConvAttrs(info)),
        channels_last_(channels_last),
        packed_w_(PrepackWeights(info, 3, 5, attrs_.group, channels_last)) {}

  void Compute(KernelContext& ctx) const override;

 private:
  ConvAttrs attrs_;
  bool channels_last_;
  QuantWeights packed_w_;

 protected:
  // channels_last: a table every output code is replaced by (into `local` when made here), or null.
  virtual const uint8_t* Lut(KernelContext&, uint8_t* /*local*/) const { return nullptr; }
  // channels_last: whether the output is summed with another image (`add`, for output y, whose
  // conv codes have scale ys and zero point yz).
  virtual bool Addend(KernelContext&, const Tensor& /*y*/, float /*ys*/, int32_t /*yz*/,
                      linalg::Q8ConvAddend& /*add*/) const {
    return false;
  }
};

}  // namespace quant_conv
}  // namespace onyx
