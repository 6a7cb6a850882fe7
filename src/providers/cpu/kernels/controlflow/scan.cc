// Scan: runs `body` once per element of the scan inputs' sequence axis, threading state values
// through and stacking the per-iteration scan outputs.
//  - opset 8: inputs are (sequence_lens?, states..., scan inputs...), all with a leading batch
//    axis; scan inputs are [batch, sequence, ...]. Each batch row runs on its own, for its own
//    sequence length; scan outputs past a row's length are zero.
//  - opset 9+: no batch axis and no sequence_lens; scan_input_axes / scan_input_directions /
//    scan_output_axes / scan_output_directions pick the axes and directions (negative axes
//    from 11; the later versions widen the element types).
#include <algorithm>

#include "ops/broadcast.h"
#include "providers/cpu/kernels/sequence/tensor_pieces.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

std::vector<int64_t> DirectionsOr(const KernelInfo& info, const std::string& name, size_t count) {
  std::vector<int64_t> d = info.GetIntsOr(name, std::vector<int64_t>(count, 0));
  if (d.size() != count) info.Fail(StrCat("attribute '", name, "' has ", d.size(), " entries; expected ", count));
  for (int64_t v : d)
    if (v != 0 && v != 1) info.Fail(StrCat("attribute '", name, "' entries must be 0 (forward) or 1 (reverse)"));
  return d;
}

// What the scans of one run share: the body and how to walk it.
struct ScanPlan {
  size_t num_states = 0;
  size_t num_scan_inputs = 0;
  size_t num_scan_outputs = 0;
};

// Runs the body `length` times. scan_inputs[j] are already arranged so that the sequence axis
// is `in_axes[j]`. Returns final states and, per scan output, the per-iteration tensors in
// iteration order.
void RunIterations(KernelContext& ctx, const Subgraph& body, const ScanPlan& plan, int64_t length,
                   std::vector<Value>& states, const std::vector<Tensor>& scan_inputs,
                   const std::vector<int64_t>& in_axes, const std::vector<int64_t>& in_dirs,
                   std::vector<std::vector<Tensor>>& per_iteration) {
  per_iteration.assign(plan.num_scan_outputs, {});
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Value> inputs;
    inputs.reserve(plan.num_states + plan.num_scan_inputs);
    for (auto& s : states) inputs.push_back(std::move(s));
    for (size_t j = 0; j < plan.num_scan_inputs; ++j) {
      const int64_t index = in_dirs[j] ? length - 1 - t : t;
      inputs.emplace_back(SliceAlongAxis(scan_inputs[j], in_axes[j], index));
    }
    std::vector<Value> outputs = ctx.RunSubgraph(body, std::move(inputs));
    for (size_t i = 0; i < plan.num_states; ++i) {
      if (!outputs[i].is_tensor())
        ctx.Fail(StrCat("state output ", i, " must be a tensor, got ", outputs[i].Describe()));
      states[i] = std::move(outputs[i]);
    }
    for (size_t k = 0; k < plan.num_scan_outputs; ++k) {
      const Value& v = outputs[plan.num_states + k];
      if (!v.is_tensor()) ctx.Fail(StrCat("scan output ", k, " must be a tensor, got ", v.Describe()));
      auto& list = per_iteration[k];
      if (!list.empty() && (list[0].shape() != v.tensor().shape() || list[0].dtype() != v.tensor().dtype()))
        ctx.Fail(StrCat("scan output ", k, " is ", v.tensor().Describe(), " in iteration ", t, " but ",
                        list[0].Describe(), " before: every iteration must give the same shape"));
      list.push_back(v.tensor());
    }
  }
}

// The per-iteration type a body declares for scan output k (for zero-length scans).
std::pair<DataType, Shape> DeclaredOutput(const Subgraph& body, size_t index) {
  const auto& type = body.graph().outputs[index].type;
  DataType dt = DataType::kFloat;
  Shape shape;
  if (type && type->kind == TypeInfo::Kind::kTensor) {
    if (type->elem_type != DataType::kUndefined) dt = type->elem_type;
    if (type->shape)
      for (const Dim& d : *type->shape) shape.push_back(d.known() ? d.value : 0);
  }
  return {dt, shape};
}

class Scan9 final : public OpKernel {
 public:
  explicit Scan9(const KernelInfo& info) : body_(info.GetSubgraph("body")), opset_(info.opset()) {
    const int64_t m = info.GetInt("num_scan_inputs");
    if (m < 1 || static_cast<size_t>(m) > info.num_inputs())
      info.Fail(StrCat("num_scan_inputs is ", m, " but the node has ", info.num_inputs(), " inputs"));
    plan_.num_scan_inputs = static_cast<size_t>(m);
    plan_.num_states = info.num_inputs() - plan_.num_scan_inputs;
    if (body_.input_names().size() != info.num_inputs())
      info.Fail(StrCat("body has ", body_.input_names().size(), " inputs; expected ", info.num_inputs()));
    if (body_.output_names().size() != info.num_outputs() || info.num_outputs() < plan_.num_states)
      info.Fail(StrCat("body has ", body_.output_names().size(), " outputs but the node has ", info.num_outputs()));
    plan_.num_scan_outputs = info.num_outputs() - plan_.num_states;
    in_axes_ = info.GetIntsOr("scan_input_axes", std::vector<int64_t>(plan_.num_scan_inputs, 0));
    out_axes_ = info.GetIntsOr("scan_output_axes", std::vector<int64_t>(plan_.num_scan_outputs, 0));
    if (in_axes_.size() != plan_.num_scan_inputs) info.Fail("scan_input_axes needs one entry per scan input");
    if (out_axes_.size() != plan_.num_scan_outputs) info.Fail("scan_output_axes needs one entry per scan output");
    if (opset_ < 11)
      for (int64_t a : in_axes_)
        if (a < 0) info.Fail(StrCat("negative scan axes need opset 11, got ", a));
    in_dirs_ = DirectionsOr(info, "scan_input_directions", plan_.num_scan_inputs);
    out_dirs_ = DirectionsOr(info, "scan_output_directions", plan_.num_scan_outputs);
  }

  void Compute(KernelContext& ctx) const override {
    std::vector<Value> states(plan_.num_states);
    for (size_t i = 0; i < plan_.num_states; ++i) states[i] = Value(ctx.required_input(i));
    std::vector<Tensor> scan_inputs;
    std::vector<int64_t> axes;
    int64_t length = -1;
    for (size_t j = 0; j < plan_.num_scan_inputs; ++j) {
      const Tensor& x = ctx.required_input(plan_.num_states + j);
      if (x.rank() == 0) ctx.Fail(StrCat("scan input ", j, " is a scalar; it needs a sequence axis"));
      const int64_t axis = NormalizeAxis(in_axes_[j], static_cast<int64_t>(x.rank()));
      const int64_t len = x.dim(static_cast<size_t>(axis));
      if (length >= 0 && len != length)
        ctx.Fail(StrCat("scan inputs have different sequence lengths (", length, " and ", len, ")"));
      length = len;
      scan_inputs.push_back(x);
      axes.push_back(axis);
    }
    std::vector<std::vector<Tensor>> per_iteration;
    RunIterations(ctx, body_, plan_, length, states, scan_inputs, axes, in_dirs_, per_iteration);
    for (size_t i = 0; i < plan_.num_states; ++i) ctx.SetOutput(i, std::move(states[i]));
    for (size_t k = 0; k < plan_.num_scan_outputs; ++k) {
      auto& list = per_iteration[k];
      if (out_dirs_[k]) std::reverse(list.begin(), list.end());
      Tensor out;
      if (list.empty()) {
        auto [dt, shape] = DeclaredOutput(body_, plan_.num_states + k);
        const int64_t axis = NormalizeAxis(out_axes_[k], static_cast<int64_t>(shape.size()) + 1);
        shape.insert(shape.begin() + axis, 0);
        out = Tensor::Zeros(dt, shape);
      } else {
        const int64_t axis = NormalizeAxis(out_axes_[k], static_cast<int64_t>(list[0].rank()) + 1);
        out = StackAlongAxis(list, axis);
      }
      ctx.SetOutput(plan_.num_states + k, Value(std::move(out)));
    }
  }

 private:
  const Subgraph& body_;
  int opset_;
  ScanPlan plan_;
  std::vector<int64_t> in_axes_, out_axes_, in_dirs_, out_dirs_;
};

class Scan8 final : public OpKernel {
 public:
  explicit Scan8(const KernelInfo& info) : body_(info.GetSubgraph("body")) {
    const int64_t m = info.GetInt("num_scan_inputs");
    if (info.num_inputs() < 1 || m < 1 || static_cast<size_t>(m) > info.num_inputs() - 1)
      info.Fail(StrCat("num_scan_inputs is ", m, " but the node has ", info.num_inputs(), " inputs"));
    plan_.num_scan_inputs = static_cast<size_t>(m);
    plan_.num_states = info.num_inputs() - 1 - plan_.num_scan_inputs;
    if (body_.input_names().size() != info.num_inputs() - 1)
      info.Fail(StrCat("body has ", body_.input_names().size(), " inputs; expected ", info.num_inputs() - 1));
    if (body_.output_names().size() != info.num_outputs() || info.num_outputs() < plan_.num_states)
      info.Fail(StrCat("body has ", body_.output_names().size(), " outputs but the node has ", info.num_outputs()));
    plan_.num_scan_outputs = info.num_outputs() - plan_.num_states;
    dirs_ = DirectionsOr(info, "directions", plan_.num_scan_inputs);
  }

  void Compute(KernelContext& ctx) const override {
    const size_t first_state = 1;
    const size_t first_scan = 1 + plan_.num_states;
    int64_t batch = -1, max_len = -1;
    auto check_batch = [&](const Tensor& t, const std::string& what) {
      if (t.rank() < 1) ctx.Fail(StrCat(what, " needs a leading batch axis"));
      if (batch >= 0 && t.dim(0) != batch) ctx.Fail(StrCat(what, " has batch size ", t.dim(0), ", expected ", batch));
      batch = t.dim(0);
    };
    for (size_t i = 0; i < plan_.num_states; ++i) check_batch(ctx.required_input(first_state + i), StrCat("state ", i));
    for (size_t j = 0; j < plan_.num_scan_inputs; ++j) {
      const Tensor& x = ctx.required_input(first_scan + j);
      check_batch(x, StrCat("scan input ", j));
      if (x.rank() < 2) ctx.Fail(StrCat("scan input ", j, " must be [batch, sequence, ...]"));
      if (max_len >= 0 && x.dim(1) != max_len)
        ctx.Fail(StrCat("scan inputs have different sequence lengths (", max_len, " and ", x.dim(1), ")"));
      max_len = x.dim(1);
    }
    std::vector<int64_t> lens(static_cast<size_t>(batch), max_len);
    if (const Tensor* sl = ctx.input(0)) {
      if ((sl->dtype() != DataType::kInt32 && sl->dtype() != DataType::kInt64) || sl->rank() != 1 ||
          sl->dim(0) != batch)
        ctx.Fail(StrCat("sequence_lens must be a 1-D int tensor of the batch size ", batch));
      for (int64_t b = 0; b < batch; ++b) {
        lens[b] = sl->dtype() == DataType::kInt64 ? sl->data<int64_t>()[b] : sl->data<int32_t>()[b];
        if (lens[b] < 0 || lens[b] > max_len)
          ctx.Fail(StrCat("sequence_lens[", b, "] = ", lens[b], " is outside [0, ", max_len, "]"));
      }
    }

    std::vector<std::vector<Tensor>> final_states(plan_.num_states);
    std::vector<std::vector<Tensor>> scan_rows(plan_.num_scan_outputs);  // [batch] of [max_len, ...]
    const std::vector<int64_t> axes(plan_.num_scan_inputs, 0);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Value> states(plan_.num_states);
      for (size_t i = 0; i < plan_.num_states; ++i)
        states[i] = Value(SliceAlongAxis(ctx.required_input(first_state + i), 0, b));
      std::vector<Tensor> inputs;
      for (size_t j = 0; j < plan_.num_scan_inputs; ++j) {
        // Only the first lens[b] steps of this row take part.
        Tensor row = SliceAlongAxis(ctx.required_input(first_scan + j), 0, b);
        if (lens[b] != max_len) row = SplitAlongAxis(row, 0, {lens[b], max_len - lens[b]})[0];
        inputs.push_back(std::move(row));
      }
      std::vector<std::vector<Tensor>> per_iteration;
      RunIterations(ctx, body_, plan_, lens[b], states, inputs, axes, dirs_, per_iteration);
      for (size_t i = 0; i < plan_.num_states; ++i) final_states[i].push_back(states[i].tensor());
      for (size_t k = 0; k < plan_.num_scan_outputs; ++k) {
        auto& list = per_iteration[k];
        if (list.empty()) {
          auto [dt, shape] = DeclaredOutput(body_, plan_.num_states + k);
          if (!scan_rows[k].empty()) {
            dt = scan_rows[k][0].dtype();
            shape.assign(scan_rows[k][0].shape().begin() + 1, scan_rows[k][0].shape().end());
          }
          for (int64_t t = 0; t < max_len; ++t) list.push_back(Tensor::Zeros(dt, shape));
        } else {
          while (static_cast<int64_t>(list.size()) < max_len)
            list.push_back(Tensor::Zeros(list[0].dtype(), list[0].shape()));
        }
        if (max_len == 0) {
          auto [dt, shape] = DeclaredOutput(body_, plan_.num_states + k);
          shape.insert(shape.begin(), 0);
          scan_rows[k].push_back(Tensor::Zeros(dt, shape));
        } else {
          scan_rows[k].push_back(StackAlongAxis(list, 0));
        }
      }
    }
    for (size_t i = 0; i < plan_.num_states; ++i) {
      if (batch == 0) {
        ctx.SetOutput(i, Value(ctx.required_input(first_state + i)));
      } else {
        ctx.SetOutput(i, Value(StackAlongAxis(final_states[i], 0)));
      }
    }
    for (size_t k = 0; k < plan_.num_scan_outputs; ++k) {
      if (batch == 0) {
        auto [dt, shape] = DeclaredOutput(body_, plan_.num_states + k);
        shape.insert(shape.begin(), {0, max_len});
        ctx.SetOutput(plan_.num_states + k, Value(Tensor::Zeros(dt, shape)));
      } else {
        ctx.SetOutput(plan_.num_states + k, Value(StackAlongAxis(scan_rows[k], 0)));
      }
    }
  }

 private:
  const Subgraph& body_;
  ScanPlan plan_;
  std::vector<int64_t> dirs_;
};

ONYX_CPU_KERNEL("Scan", 8, 8, Scan8);
ONYX_CPU_KERNEL("Scan", 9, 10, Scan9);
ONYX_CPU_KERNEL("Scan", 11, 15, Scan9);
ONYX_CPU_KERNEL("Scan", 16, kOpsetMax, Scan9);

}  // namespace
}  // namespace onyx
