// Reshape, Flatten, Squeeze and Unsqueeze on CUDA: views of their input with another shape, as on
// the CPU, so they reuse the CPU kernels (which touch no element) with the shape and axes
// inputs kept on the host (KernelTypes::host_inputs).
#include "providers/cuda/kernels/kernel_util.h"

namespace onyx::cuda {
namespace {

const std::vector<DataType> kAnyFixedSize = {
    DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kDouble, DataType::kInt8,  DataType::kUInt8,
    DataType::kInt16, DataType::kUInt16,  DataType::kInt32,    DataType::kUInt32, DataType::kInt64, DataType::kUInt64,
    DataType::kBool};

std::unique_ptr<OpKernel> ViewOnCpuKernel(const KernelInfo& info) {
  const ir::Node& node = info.node();
  const KernelDef* def = KernelRegistry::Global().Find("CPU", node.domain, node.op_type, node.opset);
  if (def == nullptr) info.Fail("no CPU kernel computes this view's shape");
  return def->factory(info);
}

ONYX_REGISTER_KERNEL_FN(kCudaProvider, "", "Reshape", 5, kOpsetMax, ViewOnCpuKernel);
ONYX_REGISTER_KERNEL_FN(kCudaProvider, "", "Flatten", 1, kOpsetMax, ViewOnCpuKernel);
ONYX_REGISTER_KERNEL_FN(kCudaProvider, "", "Squeeze", 1, kOpsetMax, ViewOnCpuKernel);
ONYX_REGISTER_KERNEL_FN(kCudaProvider, "", "Unsqueeze", 1, kOpsetMax, ViewOnCpuKernel);
const KernelTypesRegistrar kReshapeTypes(kCudaProvider, "", "Reshape", KernelTypes{kAnyFixedSize, 0, {1}, nullptr});
const KernelTypesRegistrar kFlattenTypes(kCudaProvider, "", "Flatten", KernelTypes{kAnyFixedSize, 0, {}, nullptr});
const KernelTypesRegistrar kSqueezeTypes(kCudaProvider, "", "Squeeze", KernelTypes{kAnyFixedSize, 0, {1}, nullptr});
const KernelTypesRegistrar kUnsqueezeTypes(kCudaProvider, "", "Unsqueeze", KernelTypes{kAnyFixedSize, 0, {1}, nullptr});

}  // namespace
}  // namespace onyx::cuda
