#include "providers/cpu/kernels/tensor/tensor_util.h"

#include <algorithm>

namespace onyx::tensor_kernels {

std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) p *= shape[i];
  return p;
}

namespace {

template <typename Fn>
void ForEachInt(const KernelContext& ctx, const Tensor& t, const char* what, Fn&& fn) {
  if (!TryDispatch(IntegerTypes{}, t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* p = t.data<T>();
        for (int64_t i = 0; i < t.size(); ++i) {
          if constexpr (std::is_same_v<T, uint64_t>) {
            if (p[i] > static_cast<uint64_t>(INT64_MAX)) ctx.Fail(StrCat(what, " value ", p[i], " is too large"));
          }
          fn(i, static_cast<int64_t>(p[i]));
        }
      }))
    ctx.Fail(StrCat(what, " must be an integer tensor, got ", t.Describe()));
}

}  // namespace

std::vector<int64_t> ReadInts(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.rank() > 1) ctx.Fail(StrCat(what, " must be a 1-D tensor, got ", t.Describe()));
  std::vector<int64_t> values(static_cast<size_t>(t.size()));
  ForEachInt(ctx, t, what, [&](int64_t i, int64_t v) { values[static_cast<size_t>(i)] = v; });
  return values;
}

int64_t ReadScalarInt(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.size() != 1) ctx.Fail(StrCat(what, " must hold exactly one value, got ", t.Describe()));
  int64_t value = 0;
  ForEachInt(ctx, t, what, [&](int64_t, int64_t v) { value = v; });
  return value;
}

std::vector<int64_t> NormalizeIndices(const KernelContext& ctx, const Tensor& indices, int64_t dim,
                                      const char* what) {
  std::vector<int64_t> out(static_cast<size_t>(indices.size()));
  auto check = [&](int64_t i, int64_t v) {
    if (v < -dim || v >= dim)
      ctx.Fail(StrCat(what, " ", v, " at position ", i, " is out of range [", -dim, ", ", dim - 1, "]"));
    out[static_cast<size_t>(i)] = v < 0 ? v + dim : v;
  };
  if (indices.dtype() == DataType::kInt64) {
    const int64_t* p = indices.data<int64_t>();
    for (int64_t i = 0; i < indices.size(); ++i) check(i, p[i]);
  } else if (indices.dtype() == DataType::kInt32) {
    const int32_t* p = indices.data<int32_t>();
    for (int64_t i = 0; i < indices.size(); ++i) check(i, p[i]);
  } else {
    ctx.Fail(StrCat(what, " must be int32 or int64, got ", indices.Describe()));
  }
  return out;
}

int64_t NormalizeAxisOrFail(const KernelContext& ctx, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    ctx.Fail(StrCat(what, " ", axis, " is out of range for rank ", rank, " (accepted [", -rank, ", ", rank - 1, "])"));
  return axis < 0 ? axis + rank : axis;
}

int64_t NormalizeAxisOrFail(const KernelInfo& info, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    info.Fail(StrCat(what, " ", axis, " is out of range for rank ", rank, " (accepted [", -rank, ", ", rank - 1, "])"));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> NormalizeAxes(const KernelContext& ctx, const std::vector<int64_t>& axes, int64_t rank,
                                   const char* what) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  std::vector<char> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), 0);
  for (int64_t a : axes) {
    const int64_t n = NormalizeAxisOrFail(ctx, a, rank, what);
    if (seen[static_cast<size_t>(n)]) ctx.Fail(StrCat(what, " ", a, " is repeated in [", StrJoin(axes), "]"));
    seen[static_cast<size_t>(n)] = 1;
    out.push_back(n);
  }
  return out;
}

Tensor UnpackSubByte(const Tensor& packed) {
  const int bits = DataTypeBits(packed.dtype());
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  Tensor out(DataType::kUInt8, packed.shape());
  const auto* src = static_cast<const uint8_t*>(packed.raw_data());
  uint8_t* dst = out.data<uint8_t>();
  for (int64_t i = 0; i < packed.size(); ++i)
    dst[i] = static_cast<uint8_t>((src[i / per_byte] >> ((i % per_byte) * bits)) & mask);
  return out;
}

void PackSubByte(const Tensor& unpacked, Tensor& packed) {
  const int bits = DataTypeBits(packed.dtype());
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  auto* dst = static_cast<uint8_t*>(packed.raw_data());
  if (packed.byte_size() > 0) std::memset(dst, 0, static_cast<size_t>(packed.byte_size()));
  const uint8_t* src = unpacked.data<uint8_t>();
  for (int64_t i = 0; i < packed.size(); ++i)
    dst[i / per_byte] = static_cast<uint8_t>(dst[i / per_byte] | ((src[i] & mask) << ((i % per_byte) * bits)));
}

}  // namespace onyx::tensor_kernels
