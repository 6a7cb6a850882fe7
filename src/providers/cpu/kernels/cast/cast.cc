// Cast and CastLike between every pair of ONNX element types but complex: numbers, bool,
// strings, float16/bfloat16, the float8 types (saturate), float8e8m0 (saturate, round_mode),
// float4e2m1 and the packed int4/uint4/int2/uint2. The element rules live in
// element_convert.h.
#include <cctype>

#include "providers/cpu/kernels/cast/element_convert.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

bool IsCastable(DataType t) { return CarrierOf(t) != ValueCarrier::kNone; }

// Attributes shared by Cast and CastLike, read as the node's opset defines them.
ConvertOptions ParseOptions(const KernelInfo& info) {
  ConvertOptions opts;
  if (info.opset() >= 19) opts.saturate = info.GetIntOr("saturate", 1) != 0;
  if (info.opset() >= 24) {
    const std::string mode = info.GetStringOr("round_mode", "up");
    if (mode == "up") opts.round_mode = E8M0Rounding::kUp;
    else if (mode == "down") opts.round_mode = E8M0Rounding::kDown;
    else if (mode == "nearest") opts.round_mode = E8M0Rounding::kNearest;
    else info.Fail("round_mode must be \"up\", \"down\" or \"nearest\", not \"" + mode + "\"");
  }
  return opts;
}

void CastInto(KernelContext& ctx, const Tensor& x, DataType to, const ConvertOptions& opts) {
  if (!IsCastable(x.dtype()))
    ctx.Fail(StrCat("cannot cast from element type ", DataTypeName(x.dtype())));
  if (x.dtype() == to) {
    ctx.SetOutput(0, x);  // values are immutable: the output shares the input's bytes
    return;
  }
  Tensor& y = ctx.AllocateOutput(0, to, x.shape());
  try {
    ConvertTensor(x, y, opts, ctx.thread_pool());
  } catch (const Error& e) {
    ctx.Fail(e.what());  // e.g. a string that is not a number; Fail names the node
  }
}

class Cast final : public OpKernel {
 public:
  explicit Cast(const KernelInfo& info) : opts_(ParseOptions(info)) {
    const ir::Attribute* to = info.FindAttr("to");
    if (to == nullptr) info.Fail("attribute 'to' is required");
    if (to->type == ir::AttrType::kString) {
      // Cast-1 names the type as TensorProto spells it ("FLOAT", "INT64").
      std::string name = to->s;
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      to_ = DataTypeFromName(name);
      if (to_ == DataType::kUndefined) info.Fail("attribute 'to' names an unknown type \"" + to->s + "\"");
    } else {
      const int64_t raw = info.GetInt("to");
      if (raw < 0 || raw > kMaxDataType || !IsValidDataType(static_cast<int32_t>(raw)))
        info.Fail(StrCat("attribute 'to' is ", raw, ", not an ONNX element type"));
      to_ = static_cast<DataType>(raw);
    }
    if (!IsCastable(to_)) info.Fail(StrCat("cannot cast to element type ", DataTypeName(to_)));
  }

  void Compute(KernelContext& ctx) const override { CastInto(ctx, ctx.required_input(0), to_, opts_); }

 private:
  DataType to_ = DataType::kUndefined;
  ConvertOptions opts_;
};

class CastLike final : public OpKernel {
 public:
  explicit CastLike(const KernelInfo& info) : opts_(ParseOptions(info)) {}

  void Compute(KernelContext& ctx) const override {
    const DataType to = ctx.required_input(1).dtype();
    if (!IsCastable(to)) ctx.Fail(StrCat("cannot cast to element type ", DataTypeName(to)));
    CastInto(ctx, ctx.required_input(0), to, opts_);
  }

 private:
  ConvertOptions opts_;
};

// Cast-1 takes 'to' as a string; 6 an int; 9 adds strings; 13 bfloat16; 19 float8 and
// saturate; 21 int4/uint4; 23 float4e2m1; 24 float8e8m0 and round_mode; 25 int2/uint2.
// One kernel reads each opset's attributes (ParseOptions) and serves all types.
ONYX_CPU_KERNEL("Cast", 1, 5, Cast);
ONYX_CPU_KERNEL("Cast", 6, 18, Cast);
ONYX_CPU_KERNEL("Cast", 19, 23, Cast);
ONYX_CPU_KERNEL("Cast", 24, kOpsetMax, Cast);
ONYX_CPU_KERNEL("CastLike", 15, 18, CastLike);
ONYX_CPU_KERNEL("CastLike", 19, 23, CastLike);
ONYX_CPU_KERNEL("CastLike", 24, kOpsetMax, CastLike);

}  // namespace
}  // namespace onyx
