// com.onyx.QLinearLookup(X, Table) -> Y: Y[i] = Table[X[i]'s stored byte]. X is uint8 or int8,
// Table 256 codes of Y's type (uint8 or int8). The optimizer's QLinearLookupFusion makes it from
// a chain of per-element ops whose 8-bit result depends on one 8-bit input's code alone (a
// quantized GELU: DQ -> Div -> Erf -> Q -> QLinearAdd -> QLinearMul -> QLinearMul), the table
// computed by those ops' own kernels on the 256 codes: one pass over the bytes where the chain
// read and wrote the tensor once per op, mostly in float.
#include "linalg/q8_lut.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx::quant {
namespace {

// uint8 or int8: the codes a table maps from and to.
bool IsCodeType(DataType dt) { return dt == DataType::kUInt8 || dt == DataType::kInt8; }

class QLinearLookup final : public OpKernel {
 public:
  explicit QLinearLookup(const KernelInfo& info) {
    if (info.num_inputs() != 2) info.Fail("inputs must be X and Table");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& table = ctx.required_input(1);
    if (!IsCodeType(x.dtype()))
      ctx.Fail(StrCat("X's element type ", DataTypeName(x.dtype()), " is not supported (uint8 or int8)"));
    if (!IsCodeType(table.dtype()) || table.size() != 256)
      ctx.Fail(StrCat("Table must hold 256 uint8 or int8 codes, not ", DataTypeName(table.dtype()), " ",
                      ShapeToString(table.shape())));
    Tensor& y = ctx.AllocateOutput(0, table.dtype(), x.shape());
    const auto* codes = static_cast<const uint8_t*>(table.raw_data());
    const auto* xd = static_cast<const uint8_t*>(x.raw_data());
    auto* yd = static_cast<uint8_t*>(y.raw_data());
    ThreadPool::For(ctx.thread_pool(), x.size(), 1.0, [&](int64_t begin, int64_t end) {
      linalg::Q8Lookup(codes, xd + begin, end - begin, yd + begin);
    });
  }
};

}  // namespace

ONYX_REGISTER_KERNEL("CPU", "com.onyx", "QLinearLookup", 1, kOpsetMax, QLinearLookup);

}  // namespace onyx::quant
