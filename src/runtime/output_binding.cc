#include "runtime/output_binding.h"

#include <cstring>

#include "base/check.h"

namespace onyx {

std::vector<Tensor> BindOutputBuffers(const std::string& model_label, const std::vector<ir::ValueInfo>& outputs,
                                      const std::vector<size_t>& picks, const std::vector<Value>& preallocated) {
  ONYX_CHECK(preallocated.size() == picks.size(), kInvalidArgument, model_label, ": ", preallocated.size(),
             " preallocated outputs for ", picks.size(), " requested outputs");
  std::vector<Tensor> buffers(outputs.size());
  for (size_t k = 0; k < picks.size(); ++k) {
    const Value& given = preallocated[k];
    if (given.is_none() || (given.is_tensor() && !given.tensor().defined())) continue;
    const ir::ValueInfo& out = outputs[picks[k]];
    const std::string want = out.type ? out.type->ToString() : "unknown";
    ONYX_CHECK(given.is_tensor(), kInvalidArgument, model_label, ": output '", out.name, "' (", want,
               ") cannot be written into a preallocated ", given.Describe(), ": only tensors can");
    const Tensor& t = given.tensor();
    ONYX_CHECK(t.device().type == DeviceType::kCpu, kInvalidArgument, model_label, ": output '", out.name,
               "': the preallocated ", t.Describe(), " is on ", t.device().ToString(), ", not the CPU");
    const TypeInfo* type = out.type.get();
    if (type != nullptr && type->kind == TypeInfo::Kind::kTensor) {
      ONYX_CHECK(type->elem_type == DataType::kUndefined || type->elem_type == t.dtype(), kInvalidArgument,
                 model_label, ": output '", out.name, "' is ", want, ", the preallocated buffer is ", t.Describe());
      if (type->shape) {
        bool fits = type->shape->size() == t.rank();
        for (size_t d = 0; fits && d < t.rank(); ++d)
          fits = !(*type->shape)[d].known() || (*type->shape)[d].value == t.dim(d);
        ONYX_CHECK(fits, kInvalidArgument, model_label, ": output '", out.name, "' is ", want,
                   ", the preallocated buffer is ", t.Describe());
      }
    }
    // A second buffer for the same output is filled by a copy after the Run.
    if (!buffers[picks[k]].defined()) buffers[picks[k]] = t;
  }
  return buffers;
}

Value FillOutputBuffer(const std::string& model_label, const std::string& name, const Value& produced,
                       const Tensor& buffer, const Logger& logger) {
  if (!buffer.defined()) return produced;
  ONYX_CHECK(produced.is_tensor(), kInvalidArgument, model_label, ": output '", name, "' is ", produced.Describe(),
             ", which cannot be written into the preallocated ", buffer.Describe());
  const Tensor& t = produced.tensor();
  if (t.raw_data() == buffer.raw_data() && t.dtype() == buffer.dtype() && t.shape() == buffer.shape())
    return Value(buffer);
  ONYX_CHECK(t.dtype() == buffer.dtype() && t.shape() == buffer.shape(), kInvalidArgument, model_label,
             ": output '", name, "' is ", t.Describe(), ", the preallocated buffer is ", buffer.Describe());
  logger.Info(model_label, ": output '", name, "' is not made in its preallocated buffer (it is an input, a ",
              "constant or a view of another value): copied into it");
  Tensor target = buffer;
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.size(); ++i) target.data<std::string>()[i] = t.data<std::string>()[i];
  } else if (t.byte_size() > 0) {
    std::memmove(target.raw_data(), t.raw_data(), static_cast<size_t>(t.byte_size()));
  }
  return Value(target);
}

}  // namespace onyx
