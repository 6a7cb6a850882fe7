// Optional, OptionalHasElement, OptionalGetElement. A present optional is its payload (tensor or
// sequence); an empty one is Value::None.
//  - Optional (15): wraps its input, or makes an empty optional of attribute `type`.
//  - OptionalHasElement / OptionalGetElement 15: the input must be an optional.
//  - 18: the input may also be a plain tensor or sequence (then it is "present"), and
//    OptionalHasElement's input may be omitted (then false).
#include "providers/kernel.h"

namespace onyx {
namespace {

class Optional final : public OpKernel {
 public:
  explicit Optional(const KernelInfo& info) {
    if (const ir::Attribute* a = info.FindAttr("type")) {
      if (a->types.empty()) info.Fail("attribute 'type' holds no type");
      type_ = a->types[0];
    }
    if (!info.has_input(0) && !type_) info.Fail("an Optional without input needs the 'type' attribute");
  }
  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    if (v == nullptr) {
      ctx.SetOutput(0, Value::None(type_));
      return;
    }
    if (v->is_map()) ctx.Fail("Optional holds tensors and sequences only");
    ctx.SetOutput(0, *v);
  }

 private:
  std::shared_ptr<const TypeInfo> type_;
};

// Opset 15 takes optionals only; the static type tells, when the model declares it.
void RequireOptionalType(const KernelInfo& info) {
  if (!info.has_input(0)) info.Fail("the input is required before opset 18");
  const auto type = info.InputType(0);
  if (type && type->kind != TypeInfo::Kind::kOptional && type->kind != TypeInfo::Kind::kUnknown)
    info.Fail(StrCat("the input is ", type->ToString(), "; before opset 18 it must be an optional"));
}

class OptionalHasElement final : public OpKernel {
 public:
  explicit OptionalHasElement(const KernelInfo& info) {
    if (info.opset() < 18) RequireOptionalType(info);
  }
  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    Tensor& out = ctx.AllocateOutput(0, DataType::kBool, {});
    *out.data<bool>() = v != nullptr && !v->is_none();
  }
};

class OptionalGetElement final : public OpKernel {
 public:
  explicit OptionalGetElement(const KernelInfo& info) {
    if (info.opset() < 18) RequireOptionalType(info);
  }
  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    if (v == nullptr) ctx.Fail("the input is missing");
    if (v->is_none()) ctx.Fail("the optional is empty");
    ctx.SetOutput(0, *v);
  }
};

ONYX_CPU_KERNEL("Optional", 15, kOpsetMax, Optional);
ONYX_CPU_KERNEL("OptionalHasElement", 15, 17, OptionalHasElement);
ONYX_CPU_KERNEL("OptionalHasElement", 18, kOpsetMax, OptionalHasElement);
ONYX_CPU_KERNEL("OptionalGetElement", 15, 17, OptionalGetElement);
ONYX_CPU_KERNEL("OptionalGetElement", 18, kOpsetMax, OptionalGetElement);

}  // namespace
}  // namespace onyx
