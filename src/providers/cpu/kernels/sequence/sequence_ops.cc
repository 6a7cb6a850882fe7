// The basic sequence ops (all opset 11): SequenceEmpty, SequenceConstruct, SequenceInsert,
// SequenceAt, SequenceErase, SequenceLength. Sequences are immutable values: the ops build new
// element lists that share the tensors' bytes.
#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// Element type of a sequence: its first element's, else the type it was declared with.
DataType ElementType(const Value& seq) {
  const auto& elems = seq.sequence();
  if (!elems.empty() && elems[0].is_tensor()) return elems[0].tensor().dtype();
  if (seq.type() && seq.type()->kind == TypeInfo::Kind::kTensor) return seq.type()->elem_type;
  return DataType::kUndefined;
}

const Value& RequiredSequence(const KernelContext& ctx, size_t i) {
  const Value* v = ctx.input_value(i);
  if (v == nullptr) ctx.Fail(StrCat("required input ", i, " is missing"));
  if (!v->is_sequence()) ctx.Fail(StrCat("input ", i, " must be a sequence, got ", v->Describe()));
  return *v;
}

// A position input: a scalar (or one-element) int32/int64 tensor.
int64_t ReadPosition(const KernelContext& ctx, const Tensor& t) {
  if (t.size() != 1 || t.rank() > 1 || (t.dtype() != DataType::kInt32 && t.dtype() != DataType::kInt64))
    ctx.Fail(StrCat("position must be an int32 or int64 scalar, got ", t.Describe()));
  return t.dtype() == DataType::kInt64 ? *t.data<int64_t>() : *t.data<int32_t>();
}

Value MakeSequence(std::vector<Value> elems, DataType dtype) {
  return Value::Sequence(std::move(elems), TypeInfo::Tensor(dtype));
}

class SequenceEmpty final : public OpKernel {
 public:
  explicit SequenceEmpty(const KernelInfo& info) {
    const int64_t dt = info.GetIntOr("dtype", static_cast<int64_t>(DataType::kFloat));
    if (!IsValidDataType(static_cast<int32_t>(dt)) || dt == 0) info.Fail(StrCat("dtype ", dt, " is not a tensor type"));
    dtype_ = static_cast<DataType>(dt);
  }
  void Compute(KernelContext& ctx) const override { ctx.SetOutput(0, MakeSequence({}, dtype_)); }

 private:
  DataType dtype_;
};

class SequenceConstruct final : public OpKernel {
 public:
  explicit SequenceConstruct(const KernelInfo&) {}
  void Compute(KernelContext& ctx) const override {
    if (ctx.num_inputs() == 0) ctx.Fail("SequenceConstruct needs at least one input");
    std::vector<Value> elems;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.required_input(i);
      if (t.dtype() != ctx.required_input(0).dtype())
        ctx.Fail(StrCat("all inputs must have the same element type; input ", i, " is ", t.Describe()));
      elems.emplace_back(t);
    }
    ctx.SetOutput(0, MakeSequence(std::move(elems), ctx.required_input(0).dtype()));
  }
};

class SequenceInsert final : public OpKernel {
 public:
  explicit SequenceInsert(const KernelInfo&) {}
  void Compute(KernelContext& ctx) const override {
    const Value& seq = RequiredSequence(ctx, 0);
    const Tensor& t = ctx.required_input(1);
    const DataType dt = ElementType(seq);
    if (dt != DataType::kUndefined && dt != t.dtype())
      ctx.Fail(StrCat("cannot insert a ", DataTypeName(t.dtype()), " tensor into a sequence of ", DataTypeName(dt)));
    std::vector<Value> elems = seq.sequence();
    const int64_t n = static_cast<int64_t>(elems.size());
    int64_t pos = n;
    if (const Tensor* p = ctx.input(2)) {
      pos = ReadPosition(ctx, *p);
      if (pos < -n || pos > n) ctx.Fail(StrCat("position ", pos, " is outside [", -n, ", ", n, "]"));
      if (pos < 0) pos += n;
    }
    elems.insert(elems.begin() + pos, Value(t));
    ctx.SetOutput(0, MakeSequence(std::move(elems), t.dtype()));
  }
};

class SequenceAt final : public OpKernel {
 public:
  explicit SequenceAt(const KernelInfo&) {}
  void Compute(KernelContext& ctx) const override {
    const Value& seq = RequiredSequence(ctx, 0);
    const int64_t n = static_cast<int64_t>(seq.sequence().size());
    int64_t pos = ReadPosition(ctx, ctx.required_input(1));
    if (pos < -n || pos >= n) ctx.Fail(StrCat("position ", pos, " is outside [", -n, ", ", n - 1, "]"));
    if (pos < 0) pos += n;
    ctx.SetOutput(0, seq.sequence()[pos]);
  }
};

class SequenceErase final : public OpKernel {
 public:
  explicit SequenceErase(const KernelInfo&) {}
  void Compute(KernelContext& ctx) const override {
    const Value& seq = RequiredSequence(ctx, 0);
    std::vector<Value> elems = seq.sequence();
    const int64_t n = static_cast<int64_t>(elems.size());
    int64_t pos = n - 1;
    if (const Tensor* p = ctx.input(1)) {
      pos = ReadPosition(ctx, *p);
      if (pos < -n || pos >= n) ctx.Fail(StrCat("position ", pos, " is outside [", -n, ", ", n - 1, "]"));
      if (pos < 0) pos += n;
    }
    if (n == 0) ctx.Fail("cannot erase from an empty sequence");
    elems.erase(elems.begin() + pos);
    ctx.SetOutput(0, MakeSequence(std::move(elems), ElementType(seq)));
  }
};

class SequenceLength final : public OpKernel {
 public:
  explicit SequenceLength(const KernelInfo&) {}
  void Compute(KernelContext& ctx) const override {
    const Value& seq = RequiredSequence(ctx, 0);
    Tensor& out = ctx.AllocateOutput(0, DataType::kInt64, {});
    *out.data<int64_t>() = static_cast<int64_t>(seq.sequence().size());
  }
};

ONYX_CPU_KERNEL("SequenceEmpty", 11, kOpsetMax, SequenceEmpty);
ONYX_CPU_KERNEL("SequenceConstruct", 11, kOpsetMax, SequenceConstruct);
ONYX_CPU_KERNEL("SequenceInsert", 11, kOpsetMax, SequenceInsert);
ONYX_CPU_KERNEL("SequenceAt", 11, kOpsetMax, SequenceAt);
ONYX_CPU_KERNEL("SequenceErase", 11, kOpsetMax, SequenceErase);
ONYX_CPU_KERNEL("SequenceLength", 11, kOpsetMax, SequenceLength);

}  // namespace
}  // namespace onyx
