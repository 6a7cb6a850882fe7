// SequenceMap (opset 17): runs `body` once per element of the input sequence. Additional inputs
// that are sequences contribute their element at the same position (they must be as long);
// tensors are passed whole to every iteration. Each body output collects into a sequence.
#include "providers/kernel.h"

namespace onyx {
namespace {

class SequenceMap final : public OpKernel {
 public:
  explicit SequenceMap(const KernelInfo& info) : body_(info.GetSubgraph("body")) {
    if (body_.input_names().size() != info.num_inputs())
      info.Fail(StrCat("body has ", body_.input_names().size(), " inputs but the node has ", info.num_inputs()));
    if (body_.output_names().size() != info.num_outputs())
      info.Fail(StrCat("body has ", body_.output_names().size(), " outputs but the node has ", info.num_outputs()));
    for (const auto& out : body_.graph().outputs) {
      const auto& type = out.type;
      declared_.push_back(type && type->kind == TypeInfo::Kind::kTensor ? type->elem_type : DataType::kUndefined);
    }
  }

  void Compute(KernelContext& ctx) const override {
    std::vector<const Value*> inputs(ctx.num_inputs());
    for (size_t i = 0; i < inputs.size(); ++i) {
      inputs[i] = ctx.input_value(i);
      if (inputs[i] == nullptr) ctx.Fail(StrCat("input ", i, " is missing"));
    }
    if (!inputs[0]->is_sequence()) ctx.Fail("input 0 must be a sequence");
    const size_t n = inputs[0]->sequence().size();
    for (size_t i = 1; i < inputs.size(); ++i)
      if (inputs[i]->is_sequence() && inputs[i]->sequence().size() != n)
        ctx.Fail(StrCat("input ", i, " is a sequence of ", inputs[i]->sequence().size(), " elements; expected ", n));
    std::vector<std::vector<Value>> results(ctx.num_outputs());
    for (size_t k = 0; k < n; ++k) {
      std::vector<Value> args;
      args.reserve(inputs.size());
      for (const Value* v : inputs) args.push_back(v->is_sequence() ? v->sequence()[k] : *v);
      std::vector<Value> outs = ctx.RunSubgraph(body_, std::move(args));
      for (size_t j = 0; j < outs.size(); ++j) {
        if (!outs[j].is_tensor()) ctx.Fail(StrCat("body output ", j, " must be a tensor, got ", outs[j].Describe()));
        results[j].push_back(std::move(outs[j]));
      }
    }
    for (size_t j = 0; j < results.size(); ++j) {
      const DataType dt = results[j].empty() ? declared_[j] : results[j][0].tensor().dtype();
      ctx.SetOutput(j, Value::Sequence(std::move(results[j]), TypeInfo::Tensor(dt)));
    }
  }

 private:
  const Subgraph& body_;
  std::vector<DataType> declared_;
};

ONYX_CPU_KERNEL("SequenceMap", 17, kOpsetMax, SequenceMap);

}  // namespace
}  // namespace onyx
