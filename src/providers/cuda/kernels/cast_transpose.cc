// Cast (float, float16, bfloat16, int32, int64) and Transpose (any fixed-size dtype, rank <= 8)
// on CUDA (cast.cu, elementwise.cu's strided gather).
#include "providers/cuda/kernels/kernel_util.h"

namespace onyx::cuda {
namespace {

const std::vector<DataType> kCastTypes = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kInt32,
                                          DataType::kInt64};
const std::vector<DataType> kMoveTypes = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kDouble,
                                          DataType::kInt8,  DataType::kUInt8,   DataType::kInt16,    DataType::kUInt16,
                                          DataType::kInt32, DataType::kUInt32,  DataType::kInt64,    DataType::kUInt64,
                                          DataType::kBool};

class Cast final : public CudaKernel {
 public:
  explicit Cast(const KernelInfo& info) : to_(static_cast<DataType>(info.GetInt("to"))) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.AllocateOutput(0, to_, x.shape());
    LaunchCast(ToDtype(x.dtype()), ToDtype(to_), x.raw_data(), y.raw_data(), x.size(), stream());
    CheckLaunch(ctx);
  }

 private:
  DataType to_;
};

std::string CastCheck(const ir::Node& node) {
  const ir::Attribute* to = node.FindAttribute("to");
  if (to == nullptr) return "";
  const auto t = static_cast<DataType>(to->i);
  if (std::find(kCastTypes.begin(), kCastTypes.end(), t) != kCastTypes.end()) return "";
  return StrCat("unsupported dtype ", DataTypeName(t), " (attribute to): CUDA's Cast converts between float, float16, "
                "bfloat16, int32 and int64");
}

class Transpose final : public CudaKernel {
 public:
  explicit Transpose(const KernelInfo& info) : perm_(info.GetIntsOr("perm", {})) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const size_t rank = x.rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (size_t d = 0; d < rank; ++d) perm.push_back(static_cast<int64_t>(rank - 1 - d));
    if (perm.size() != rank) ctx.Fail(StrCat("perm has ", perm.size(), " entries for rank ", rank));
    if (rank > static_cast<size_t>(kMaxRank)) ctx.Fail(StrCat("CUDA's Transpose handles rank up to ", kMaxRank));
    std::vector<int64_t> in_strides(rank, 1);
    for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * x.dim(d);
    Shape shape(rank);
    Strided s;
    s.rank = static_cast<int>(rank);
    for (size_t d = 0; d < rank; ++d) {
      const int64_t p = perm[d] < 0 ? perm[d] + static_cast<int64_t>(rank) : perm[d];
      if (p < 0 || p >= static_cast<int64_t>(rank)) ctx.Fail(StrCat("perm entry ", perm[d], " is out of range"));
      shape[d] = x.dim(static_cast<size_t>(p));
      s.dims[d] = shape[d];
      s.a[d] = in_strides[static_cast<size_t>(p)];
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), shape);
    LaunchGather(static_cast<size_t>(DataTypeBits(x.dtype()) / 8), x.raw_data(), y.raw_data(), y.size(), s, stream());
    CheckLaunch(ctx);
  }

 private:
  std::vector<int64_t> perm_;
};

ONYX_CUDA_KERNEL("Cast", 6, kOpsetMax, Cast, KernelTypes{kCastTypes, 0, {}, CastCheck});
ONYX_CUDA_KERNEL("Transpose", 1, kOpsetMax, Transpose, KernelTypes{kMoveTypes, 0, {}, nullptr});

}  // namespace
}  // namespace onyx::cuda
