// BitCast (opset 26): reinterprets the bytes of a tensor as another element type of the same
// bit width (strings excluded). The output shares the input's bytes; only a bool target is
// copied, because a byte other than 0 or 1 is not a bool any later kernel can read.
#include "providers/kernel.h"

namespace onyx {
namespace {

class BitCast final : public OpKernel {
 public:
  explicit BitCast(const KernelInfo& info) {
    const int64_t raw = info.GetInt("to");
    if (raw < 0 || raw > kMaxDataType || !IsValidDataType(static_cast<int32_t>(raw)))
      info.Fail(StrCat("attribute 'to' is ", raw, ", not an ONNX element type"));
    to_ = static_cast<DataType>(raw);
    if (to_ == DataType::kString) info.Fail("cannot bitcast to string");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() == DataType::kString) ctx.Fail("cannot bitcast from string");
    if (DataTypeBits(x.dtype()) != DataTypeBits(to_))
      ctx.Fail(StrCat("cannot bitcast ", DataTypeName(x.dtype()), " (", DataTypeBits(x.dtype()), " bits) to ",
                      DataTypeName(to_), " (", DataTypeBits(to_), " bits): the widths differ"));
    if (to_ == DataType::kBool) {
      Tensor& y = ctx.AllocateOutput(0, to_, x.shape());
      const auto* in = static_cast<const uint8_t*>(x.raw_data());
      auto* out = static_cast<uint8_t*>(y.raw_data());
      for (int64_t i = 0; i < x.size(); ++i) out[i] = in[i] != 0 ? 1 : 0;
      return;
    }
    ctx.SetOutput(0, Tensor::View(to_, x.shape(), const_cast<void*>(x.raw_data()), x.holder(), x.device()));
  }

 private:
  DataType to_ = DataType::kUndefined;
};

ONYX_CPU_KERNEL("BitCast", 26, kOpsetMax, BitCast);

}  // namespace
}  // namespace onyx
