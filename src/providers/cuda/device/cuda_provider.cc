// The CUDA execution provider (name "CUDA", device kCuda): ONNX Runtime's CUDA options, a device
// arena over cudaMalloc, copies between the host and the device on the provider's stream, and
// the kernels registered for provider "CUDA". Without a usable device, creating it is an error
// naming cudaGetDeviceCount's result; in placement-only mode it claims nodes without a device.
#include <cstring>
#include <memory>

#include "providers/cuda/cuda_options.h"
#include "providers/cuda/device/cuda_call.h"
#include "providers/cuda/device/cuda_kernel.h"
#include "providers/cuda/device_capability.h"

namespace onyx {
namespace {

// "" when a CUDA device can be used, else why not.
std::string CudaUnavailableReason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error
    return StrCat("cudaGetDeviceCount returned ", CudaErrorText(e));
  }
  if (count == 0) return "cudaGetDeviceCount found 0 CUDA devices";
  return "";
}

class CudaDeviceMemory final : public DeviceMemory {
 public:
  explicit CudaDeviceMemory(int device_id) : device_id_(device_id) {}
  void* Reserve(size_t bytes) override {
    void* p = nullptr;
    if (cudaSetDevice(device_id_) != cudaSuccess || cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void Release(void* p) override { cudaFree(p); }
  Device device() const override { return Device{DeviceType::kCuda, static_cast<int16_t>(device_id_)}; }

 private:
  int device_id_;
};

class CudaProvider final : public ExecutionProvider {
 public:
  CudaProvider(const ProviderOptions& provider_options, bool placement_only)
      : options_(ParseCudaOptions(provider_options)), placement_only_(placement_only) {
    context_.device_id = options_.device_id;
    context_.use_tf32 = options_.use_tf32;
    if (placement_only_) return;
    const std::string why = CudaUnavailableReason();
    ONYX_CHECK(why.empty(), kFail, "CUDAExecutionProvider cannot be created: no usable CUDA device: ", why);
    int count = 0;
    ONYX_CUDA_CALL(cudaGetDeviceCount(&count));
    ONYX_CHECK(options_.device_id < count, kInvalidArgument, "CUDAExecutionProvider option device_id=",
               options_.device_id, ": this machine has ", count, " CUDA device(s)");
    ONYX_CUDA_CALL(cudaSetDevice(options_.device_id));
    if (options_.user_compute_stream != nullptr) {
      context_.stream = static_cast<cudaStream_t>(options_.user_compute_stream);
    } else {
      ONYX_CUDA_CALL(cudaStreamCreateWithFlags(&context_.stream, cudaStreamNonBlocking));
      owns_stream_ = true;
    }
    ONYX_CUBLAS_CALL(cublasLtCreate(&context_.cublas_lt));
    arena_ = std::make_shared<DeviceArena>(std::make_unique<CudaDeviceMemory>(options_.device_id),
                                           options_.gpu_mem_limit, options_.arena_extend_strategy);
  }
  ~CudaProvider() override {
    if (context_.stream != nullptr) cudaStreamSynchronize(context_.stream);
    arena_.reset();
    if (context_.cublas_lt != nullptr) cublasLtDestroy(context_.cublas_lt);
    if (owns_stream_) cudaStreamDestroy(context_.stream);
  }

  const std::string& name() const override { return name_; }
  Device device() const override { return Device{DeviceType::kCuda, static_cast<int16_t>(options_.device_id)}; }
  Allocator* allocator() const override { return arena_.get(); }

  std::vector<NodeClaim> GetCapability(const ir::Graph& graph) const override { return DeviceCapability(graph, *this); }

  std::unique_ptr<OpKernel> CreateKernel(const KernelInfo& info) const override {
    ONYX_CHECK(!placement_only_, kFail, "the CUDA provider of a placement-only session creates no kernels");
    std::unique_ptr<OpKernel> kernel = ExecutionProvider::CreateKernel(info);
    if (auto* cuda_kernel = dynamic_cast<CudaKernel*>(kernel.get())) cuda_kernel->SetContext(&context_);
    return kernel;
  }

  bool InputOnCpu(const ir::Node& node, size_t input) const override {
    const KernelTypes* types = FindKernelTypes(name_, node.domain, node.op_type);
    if (types == nullptr) return false;
    for (size_t i : types->host_inputs)
      if (i == input) return true;
    return false;
  }

  // Copies on the compute stream (do_copy_in_default_stream), waiting for the result whenever
  // the host reads it or may free its source.
  void CopyTensor(const Tensor& src, Tensor& dst) const override {
    ONYX_CHECK(src.dtype() == dst.dtype() && src.size() == dst.size() && src.dtype() != DataType::kString,
               kInvalidArgument, "CUDA copy of ", src.Describe(), " into ", dst.Describe());
    const bool from_device = src.device().type == DeviceType::kCuda;
    const bool to_device = dst.device().type == DeviceType::kCuda;
    if (!from_device && !to_device) return ExecutionProvider::CopyTensor(src, dst);
    const cudaMemcpyKind kind = from_device && to_device ? cudaMemcpyDeviceToDevice
                                : from_device            ? cudaMemcpyDeviceToHost
                                                         : cudaMemcpyHostToDevice;
    const size_t bytes = static_cast<size_t>(src.byte_size());
    if (bytes == 0) return;
    ONYX_CUDA_CALL(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), bytes, kind, context_.stream));
    ONYX_CUDA_CALL(cudaStreamSynchronize(context_.stream));
  }

 private:
  std::string name_ = "CUDA";
  CudaOptions options_;
  bool placement_only_;
  CudaContext context_;
  bool owns_stream_ = false;
  std::shared_ptr<DeviceArena> arena_;
};

const ProviderRegistrar kRegisterCuda(
    "CUDA", ProviderFactory{[](const ProviderOptions& options, bool placement_only) -> std::unique_ptr<ExecutionProvider> {
                              return std::make_unique<CudaProvider>(options, placement_only);
                            },
                            [] { return CudaUnavailableReason(); }});

}  // namespace
}  // namespace onyx
