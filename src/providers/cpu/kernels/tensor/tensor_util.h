// Helpers shared by the tensor-manipulation kernels. Moving data only needs an element's bytes,
// so most kernels dispatch on the element size rather than the type; strings get their own
// path. Sub-byte types (int4, float4, ...) are unpacked to one byte per element where a kernel
// must move single elements.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx::tensor_kernels {

// complex128: sixteen bytes moved as a unit.
struct Bytes16 {
  uint64_t lo;
  uint64_t hi;
};

// Calls fn(TypeTag<U>{}) where U is an unsigned integer (or Bytes16) as wide as one element of
// dt, or std::string for strings. Fails (naming the node) for sub-byte and undefined types.
template <typename Fn>
void DispatchBySize(const KernelContext& ctx, DataType dt, Fn&& fn) {
  if (dt == DataType::kString) return fn(TypeTag<std::string>{});
  if (dt != DataType::kUndefined && !IsSubByte(dt)) {
    switch (DataTypeBits(dt)) {
      case 8: return fn(TypeTag<uint8_t>{});
      case 16: return fn(TypeTag<uint16_t>{});
      case 32: return fn(TypeTag<uint32_t>{});
      case 64: return fn(TypeTag<uint64_t>{});
      case 128: return fn(TypeTag<Bytes16>{});
      default: break;
    }
  }
  ctx.Fail(StrCat("element type ", DataTypeName(dt), " is not supported"));
}

// Copies n elements; memcpy for plain bytes, assignment for strings.
template <typename U>
inline void CopyN(U* dst, const U* src, int64_t n) {
  if (n <= 0) return;
  if constexpr (std::is_trivially_copyable_v<U>) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(U));
  else std::copy(src, src + n, dst);
}

template <typename U>
inline void FillN(U* dst, const U& value, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}

// Row-major element strides of a shape.
std::vector<int64_t> Strides(const Shape& shape);
// Product of shape[begin, end).
int64_t Product(const Shape& shape, size_t begin, size_t end);

// Walks the row-major positions of `dims` from flat position `start`, keeping the offsets of
// two tensors whose element strides along those dims are `sa` and `sb`. Lets a parallel range
// start anywhere without a division per element.
class OffsetWalker {
 public:
  OffsetWalker(const std::vector<int64_t>& dims, const std::vector<int64_t>& sa, const std::vector<int64_t>& sb,
               int64_t start)
      : dims_(dims), sa_(sa), sb_(sb), index_(dims.size(), 0) {
    for (size_t d = dims.size(); d-- > 0;) {
      if (dims[d] == 0) continue;
      index_[d] = start % dims[d];
      start /= dims[d];
      a_ += index_[d] * sa[d];
      b_ += index_[d] * sb[d];
    }
  }
  int64_t a() const { return a_; }
  int64_t b() const { return b_; }
  void Next() {
    for (size_t d = dims_.size(); d-- > 0;) {
      a_ += sa_[d];
      b_ += sb_[d];
      if (++index_[d] < dims_[d]) return;
      a_ -= sa_[d] * dims_[d];
      b_ -= sb_[d] * dims_[d];
      index_[d] = 0;
    }
  }

 private:
  const std::vector<int64_t>& dims_;
  const std::vector<int64_t>& sa_;
  const std::vector<int64_t>& sb_;
  std::vector<int64_t> index_;
  int64_t a_ = 0;
  int64_t b_ = 0;
};

// Values of a 0-D or 1-D integer tensor (int32 or int64; other integer types too) as int64.
std::vector<int64_t> ReadInts(const KernelContext& ctx, const Tensor& t, const char* what);
// A scalar or one-element integer tensor.
int64_t ReadScalarInt(const KernelContext& ctx, const Tensor& t, const char* what);

// Normalizes each index of an integer tensor into [0, dim): negatives count from the back;
// anything outside [-dim, dim) fails naming the index and its position.
std::vector<int64_t> NormalizeIndices(const KernelContext& ctx, const Tensor& indices, int64_t dim,
                                      const char* what);

// Normalizes axes (negative counts from the back) for rank `rank`; fails on out-of-range or
// repeated axes.
std::vector<int64_t> NormalizeAxes(const KernelContext& ctx, const std::vector<int64_t>& axes, int64_t rank,
                                   const char* what);
int64_t NormalizeAxisOrFail(const KernelContext& ctx, int64_t axis, int64_t rank, const char* what);
// The same at kernel creation, failing through KernelInfo.
int64_t NormalizeAxisOrFail(const KernelInfo& info, int64_t axis, int64_t rank, const char* what);

// Sub-byte tensors (int4, uint4, int2, uint2, float4e2m1): one uint8 per element holding the
// element's raw bits, and back.
Tensor UnpackSubByte(const Tensor& packed);
void PackSubByte(const Tensor& unpacked, Tensor& packed);

// Copies `src` (of `in_shape`) into `dst` permuted by `perm`: output dim i is input dim
// perm[i]. Contiguous blocks are memcpy'd; otherwise tiles keep both sides cache-friendly.
// Works on any element type DispatchBySize accepts; the thread pool may be null.
void TransposeCopy(const KernelContext& ctx, const Tensor& src, const std::vector<int64_t>& perm, Tensor& dst);

}  // namespace onyx::tensor_kernels
