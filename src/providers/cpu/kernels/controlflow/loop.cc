// Loop: runs `body` while the trip count and the condition allow, threading loop-carried values
// through the iterations and stacking the per-iteration scan outputs along a new axis 0.
// Opsets differ in what loop-carried values may be: tensors (1-12), also sequences (13-15), also
// optionals (16+); the later versions only widen the element types.
#include "base/type_traits.h"
#include "providers/cpu/kernels/sequence/tensor_pieces.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// Reads a single-element integer or bool tensor.
int64_t ScalarInt(const Tensor& t) {
  int64_t v = 0;
  Dispatch(TypeList<int64_t, int32_t, bool>{}, t.dtype(), "Loop scalar", [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = static_cast<int64_t>(*t.data<T>());
  });
  return v;
}

class Loop final : public OpKernel {
 public:
  explicit Loop(const KernelInfo& info) : body_(info.GetSubgraph("body")), opset_(info.opset()) {
    if (info.num_inputs() < 2) info.Fail("Loop takes at least the inputs M and cond (either may be empty)");
    num_carried_ = info.num_inputs() - 2;
    const size_t body_inputs = body_.input_names().size();
    const size_t body_outputs = body_.output_names().size();
    if (body_inputs != num_carried_ + 2)
      info.Fail(StrCat("body has ", body_inputs, " inputs; expected 2 + ", num_carried_, " loop-carried values"));
    if (body_outputs < num_carried_ + 1)
      info.Fail(StrCat("body has ", body_outputs, " outputs; expected at least 1 + ", num_carried_));
    num_scan_ = body_outputs - 1 - num_carried_;
    if (info.num_outputs() != num_carried_ + num_scan_)
      info.Fail(StrCat("the node has ", info.num_outputs(), " outputs; its body gives ", num_carried_,
                       " loop-carried values and ", num_scan_, " scan outputs"));
    has_trip_count_ = info.has_input(0);
    has_cond_ = info.has_input(1);
    // For scan outputs of a loop that runs zero times: the element type and per-iteration shape
    // the body declares, when it declares them.
    const auto& graph_outputs = body_.graph().outputs;
    for (size_t k = 0; k < num_scan_; ++k) {
      EmptyScan e;
      const auto& type = graph_outputs[1 + num_carried_ + k].type;
      if (type && type->kind == TypeInfo::Kind::kTensor) {
        e.dtype = type->elem_type;
        if (type->shape) {
          for (const Dim& d : *type->shape) e.shape.push_back(d.known() ? d.value : 0);
        }
      }
      if (e.dtype == DataType::kUndefined) {
        const auto out_type = info.OutputType(num_carried_ + k);
        e.dtype = out_type && out_type->kind == TypeInfo::Kind::kTensor ? out_type->elem_type : DataType::kFloat;
      }
      e.shape.insert(e.shape.begin(), 0);
      empty_scans_.push_back(std::move(e));
    }
  }

  void Compute(KernelContext& ctx) const override {
    int64_t trip_count = -1;  // unbounded
    if (const Tensor* m = ctx.input(0)) {
      if (m->size() != 1 || (m->dtype() != DataType::kInt64 && m->dtype() != DataType::kInt32))
        ctx.Fail("M must be an int64 tensor with a single element");
      trip_count = ScalarInt(*m);
      if (trip_count < 0) trip_count = 0;
    }
    bool cond = true;
    if (const Tensor* c = ctx.input(1)) {
      if (c->size() != 1 || c->dtype() != DataType::kBool) ctx.Fail("cond must be a bool tensor with a single element");
      cond = *c->data<bool>();
    }
    if (!has_trip_count_ && !has_cond_) ctx.Fail("Loop has neither a trip count M nor a condition: it would never end");

    std::vector<Value> carried(num_carried_);
    for (size_t i = 0; i < num_carried_; ++i) {
      const Value* v = ctx.input_value(2 + i);
      carried[i] = v ? *v : Value::None();
      CheckKind(ctx, carried[i], StrCat("loop-carried input ", i));
    }
    std::vector<std::vector<Tensor>> scans(num_scan_);

    for (int64_t iter = 0; (trip_count < 0 || iter < trip_count) && cond; ++iter) {
      std::vector<Value> inputs;
      inputs.reserve(2 + num_carried_);
      inputs.emplace_back(Tensor::Scalar<int64_t>(DataType::kInt64, iter));
      inputs.emplace_back(Tensor::Scalar<bool>(DataType::kBool, cond));
      for (auto& v : carried) inputs.push_back(std::move(v));
      std::vector<Value> outputs = ctx.RunSubgraph(body_, std::move(inputs));
      if (has_cond_) {
        const Value& c = outputs[0];
        if (!c.is_tensor() || c.tensor().dtype() != DataType::kBool || c.tensor().size() != 1)
          ctx.Fail(StrCat("body's condition output must be a bool tensor with one element, got ", c.Describe()));
        cond = *c.tensor().data<bool>();
      }
      for (size_t i = 0; i < num_carried_; ++i) {
        carried[i] = std::move(outputs[1 + i]);
        CheckKind(ctx, carried[i], StrCat("loop-carried body output ", i));
      }
      for (size_t k = 0; k < num_scan_; ++k) {
        const Value& s = outputs[1 + num_carried_ + k];
        if (!s.is_tensor()) ctx.Fail(StrCat("scan output ", k, " must be a tensor, got ", s.Describe()));
        if (!scans[k].empty() &&
            (s.tensor().shape() != scans[k][0].shape() || s.tensor().dtype() != scans[k][0].dtype()))
          ctx.Fail(StrCat("scan output ", k, " is ", s.tensor().Describe(), " in iteration ", iter, " but ",
                          scans[k][0].Describe(), " before: every iteration must give the same shape"));
        scans[k].push_back(s.tensor());
      }
    }

    for (size_t i = 0; i < num_carried_; ++i) ctx.SetOutput(i, std::move(carried[i]));
    for (size_t k = 0; k < num_scan_; ++k) {
      if (scans[k].empty()) {
        ctx.SetOutput(num_carried_ + k, Value(Tensor::Zeros(empty_scans_[k].dtype, empty_scans_[k].shape)));
      } else {
        ctx.SetOutput(num_carried_ + k, Value(StackAlongAxis(scans[k], 0)));
      }
    }
  }

 private:
  struct EmptyScan {
    DataType dtype = DataType::kUndefined;
    Shape shape;
  };

  void CheckKind(const KernelContext& ctx, const Value& v, const std::string& what) const {
    if (v.is_map()) ctx.Fail(StrCat(what, " is a map; Loop does not carry maps"));
    if (opset_ < 13 && !v.is_tensor())
      ctx.Fail(StrCat(what, " is ", v.Describe(), "; Loop-", opset_, " carries tensors only"));
    if (opset_ < 16 && v.is_none())
      ctx.Fail(StrCat(what, " is an empty optional; Loop-", opset_, " does not carry optionals"));
  }

  const Subgraph& body_;
  int opset_;
  size_t num_carried_ = 0;
  size_t num_scan_ = 0;
  bool has_trip_count_ = false;
  bool has_cond_ = false;
  std::vector<EmptyScan> empty_scans_;
};

ONYX_CPU_KERNEL("Loop", 1, 10, Loop);
ONYX_CPU_KERNEL("Loop", 11, 12, Loop);
ONYX_CPU_KERNEL("Loop", 13, 15, Loop);
ONYX_CPU_KERNEL("Loop", 16, kOpsetMax, Loop);

}  // namespace
}  // namespace onyx
