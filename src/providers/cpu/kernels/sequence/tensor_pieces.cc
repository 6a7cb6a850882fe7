#include "providers/cpu/kernels/sequence/tensor_pieces.h"

#include <cstring>
#include <string>

#include "base/check.h"

namespace onyx {

namespace {

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

// Element i of a packed sub-byte tensor (low bits first).
uint8_t GetPacked(const uint8_t* p, int bits, int64_t i) {
  const int per_byte = 8 / bits;
  return static_cast<uint8_t>((p[i / per_byte] >> ((i % per_byte) * bits)) & ((1 << bits) - 1));
}

void SetPacked(uint8_t* p, int bits, int64_t i, uint8_t v) {
  const int per_byte = 8 / bits;
  const int shift = static_cast<int>(i % per_byte) * bits;
  const uint8_t mask = static_cast<uint8_t>(((1 << bits) - 1) << shift);
  p[i / per_byte] = static_cast<uint8_t>((p[i / per_byte] & ~mask) | ((v << shift) & mask));
}

}  // namespace

void CopyElements(const Tensor& src, int64_t src_offset, Tensor& dst, int64_t dst_offset, int64_t count) {
  ONYX_CHECK(src.dtype() == dst.dtype(), kRuntime, "cannot copy ", src.Describe(), " elements into ", dst.Describe());
  if (count <= 0) return;
  const DataType dt = src.dtype();
  if (dt == DataType::kString) {
    const std::string* s = src.data<std::string>() + src_offset;
    std::string* d = dst.data<std::string>() + dst_offset;
    for (int64_t i = 0; i < count; ++i) d[i] = s[i];
    return;
  }
  const int bits = DataTypeBits(dt);
  if (bits >= 8) {
    const int64_t bytes = bits / 8;
    std::memcpy(static_cast<char*>(dst.raw_data()) + dst_offset * bytes,
                static_cast<const char*>(src.raw_data()) + src_offset * bytes, static_cast<size_t>(count * bytes));
    return;
  }
  const auto* s = static_cast<const uint8_t*>(src.raw_data());
  auto* d = static_cast<uint8_t*>(dst.raw_data());
  for (int64_t i = 0; i < count; ++i) SetPacked(d, bits, dst_offset + i, GetPacked(s, bits, src_offset + i));
}

Tensor SliceAlongAxis(const Tensor& t, int64_t axis, int64_t index) {
  const Shape& shape = t.shape();
  ONYX_CHECK(axis >= 0 && axis < static_cast<int64_t>(shape.size()) && index >= 0 && index < shape[axis], kRuntime,
             "cannot take element ", index, " of axis ", axis, " of ", t.Describe());
  Shape out_shape = shape;
  out_shape.erase(out_shape.begin() + axis);
  Tensor out(t.dtype(), out_shape);
  const int64_t outer = Product(shape, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(shape, static_cast<size_t>(axis) + 1, shape.size());
  for (int64_t o = 0; o < outer; ++o) CopyElements(t, (o * shape[axis] + index) * inner, out, o * inner, inner);
  return out;
}

Tensor StackAlongAxis(const std::vector<Tensor>& pieces, int64_t axis) {
  ONYX_CHECK(!pieces.empty(), kRuntime, "nothing to stack");
  const Shape& shape = pieces[0].shape();
  ONYX_CHECK(axis >= 0 && axis <= static_cast<int64_t>(shape.size()), kRuntime, "cannot stack ", pieces[0].Describe(),
             " pieces along axis ", axis);
  for (const Tensor& p : pieces)
    ONYX_CHECK(p.dtype() == pieces[0].dtype() && p.shape() == shape, kRuntime, "cannot stack ", p.Describe(), " with ",
               pieces[0].Describe(), ": pieces must have the same type and shape");
  Shape out_shape = shape;
  out_shape.insert(out_shape.begin() + axis, static_cast<int64_t>(pieces.size()));
  Tensor out(pieces[0].dtype(), out_shape);
  const int64_t outer = Product(shape, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(shape, static_cast<size_t>(axis), shape.size());
  const int64_t n = static_cast<int64_t>(pieces.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k) CopyElements(pieces[k], o * inner, out, (o * n + k) * inner, inner);
  return out;
}

Tensor ConcatAlongAxis(const std::vector<Tensor>& pieces, int64_t axis) {
  ONYX_CHECK(!pieces.empty(), kRuntime, "nothing to concatenate");
  const Shape& first = pieces[0].shape();
  ONYX_CHECK(axis >= 0 && axis < static_cast<int64_t>(first.size()), kRuntime, "cannot concatenate ",
             pieces[0].Describe(), " pieces along axis ", axis);
  int64_t total = 0;
  for (const Tensor& p : pieces) {
    bool ok = p.dtype() == pieces[0].dtype() && p.rank() == first.size();
    for (size_t d = 0; ok && d < first.size(); ++d)
      if (static_cast<int64_t>(d) != axis && p.dim(d) != first[d]) ok = false;
    ONYX_CHECK(ok, kRuntime, "cannot concatenate ", p.Describe(), " with ", pieces[0].Describe(), " along axis ", axis);
    total += p.dim(static_cast<size_t>(axis));
  }
  Shape out_shape = first;
  out_shape[axis] = total;
  Tensor out(pieces[0].dtype(), out_shape);
  const int64_t outer = Product(first, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(first, static_cast<size_t>(axis) + 1, first.size());
  for (int64_t o = 0; o < outer; ++o) {
    int64_t at = 0;
    for (const Tensor& p : pieces) {
      const int64_t len = p.dim(static_cast<size_t>(axis)) * inner;
      CopyElements(p, o * len, out, o * total * inner + at, len);
      at += len;
    }
  }
  return out;
}

std::vector<Tensor> SplitAlongAxis(const Tensor& t, int64_t axis, const std::vector<int64_t>& sizes) {
  const Shape& shape = t.shape();
  ONYX_CHECK(axis >= 0 && axis < static_cast<int64_t>(shape.size()), kRuntime, "cannot split ", t.Describe(),
             " along axis ", axis);
  int64_t sum = 0;
  for (int64_t s : sizes) {
    ONYX_CHECK(s >= 0, kRuntime, "negative split size ", s);
    sum += s;
  }
  ONYX_CHECK(sum == shape[axis], kRuntime, "split sizes add up to ", sum, " but axis ", axis, " of ", t.Describe(),
             " has ", shape[axis]);
  const int64_t outer = Product(shape, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(shape, static_cast<size_t>(axis) + 1, shape.size());
  std::vector<Tensor> result;
  int64_t start = 0;
  for (int64_t s : sizes) {
    Shape piece_shape = shape;
    piece_shape[axis] = s;
    Tensor piece(t.dtype(), piece_shape);
    for (int64_t o = 0; o < outer; ++o)
      CopyElements(t, (o * shape[axis] + start) * inner, piece, o * s * inner, s * inner);
    result.push_back(std::move(piece));
    start += s;
  }
  return result;
}

}  // namespace onyx
