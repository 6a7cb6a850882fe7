// Helpers the CUDA kernel classes share: dtype mapping, the dtype lists of their type
// constraints, broadcasting strides, and the check after a launch.
#pragma once

#include <vector>

#include "providers/cuda/device/cuda_call.h"
#include "providers/cuda/device/cuda_kernel.h"
#include "providers/cuda/kernels/launchers.h"

namespace onyx::cuda {

inline const std::vector<DataType> kFloatTypes = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16};

inline Dtype ToDtype(DataType t) {
  switch (t) {
    case DataType::kFloat: return Dtype::kFloat;
    case DataType::kFloat16: return Dtype::kHalf;
    case DataType::kBFloat16: return Dtype::kBFloat16;
    case DataType::kInt32: return Dtype::kInt32;
    case DataType::kInt64: return Dtype::kInt64;
    default: ONYX_THROW(kNotImplemented, "no CUDA kernel computes in ", DataTypeName(t));
  }
}

// Numpy broadcasting of a and b: the output shape, and each operand's strides along it.
inline Strided Broadcast(const Shape& a, const Shape& b, Shape& out) {
  const size_t rank = std::max(a.size(), b.size());
  ONYX_CHECK(rank <= kMaxRank, kNotImplemented, "CUDA broadcasting handles rank up to ", kMaxRank, ", got ",
             ShapeToString(a), " and ", ShapeToString(b));
  out.assign(rank, 1);
  Strided s;
  s.rank = static_cast<int>(rank);
  int64_t sa = 1, sb = 1;
  for (size_t k = 0; k < rank; ++k) {
    const size_t d = rank - 1 - k;
    const int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1, db = k < b.size() ? b[b.size() - 1 - k] : 1;
    ONYX_CHECK(da == db || da == 1 || db == 1, kInvalidArgument, "shapes ", ShapeToString(a), " and ",
               ShapeToString(b), " do not broadcast");
    out[d] = da == 1 ? db : da;
    s.dims[d] = out[d];
    s.a[d] = da == 1 ? 0 : sa;
    s.b[d] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  return s;
}

inline void CheckLaunch(const KernelContext& ctx) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) ctx.Fail(StrCat("CUDA kernel launch failed: ", CudaErrorText(e)));
}

}  // namespace onyx::cuda
