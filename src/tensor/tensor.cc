#include "onyx/tensor.h"

#include <cstring>
#include <limits>
#include <new>

#include "base/check.h"

namespace onyx {

std::string ShapeToString(const Shape& shape) { return StrCat("[", StrJoin(shape, ","), "]"); }

int64_t ShapeSize(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    ONYX_CHECK(d >= 0, kInvalidArgument, "negative dimension in shape ", ShapeToString(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      ONYX_THROW(kInvalidArgument, "shape ", ShapeToString(shape), " has more elements than fit in int64");
    n *= d;
  }
  return n;
}

namespace {

// Owns allocator memory; destroys std::string elements of string tensors.
struct Storage {
  Allocator* allocator;
  std::shared_ptr<void> allocator_keepalive;
  void* data;
  int64_t string_count;
  ~Storage() {
    auto* strings = static_cast<std::string*>(data);
    for (int64_t i = 0; i < string_count; ++i) strings[i].~basic_string();
    allocator->Free(data);
  }
};

// Refuse sizes no machine can hold before asking the allocator (huge dims in bad models).
constexpr int64_t kMaxTensorBytes = int64_t{1} << 46;

}  // namespace

Tensor::Tensor(DataType dtype, Shape shape, Allocator* allocator)
    : dtype_(dtype), shape_(std::move(shape)), size_(ShapeSize(shape_)) {
  ONYX_CHECK(dtype != DataType::kUndefined, kInvalidArgument, "cannot allocate a tensor of undefined type");
  if (allocator == nullptr) allocator = CpuAllocator();
  const int64_t bytes = byte_size();
  ONYX_CHECK(bytes <= kMaxTensorBytes, kOutOfMemory, "tensor ", Describe(), " needs ", bytes,
             " bytes, more than Onyx allocates for one tensor");
  auto storage = std::make_shared<Storage>();
  storage->allocator = allocator;
  storage->allocator_keepalive = allocator->KeepAlive();
  try {
    storage->data = allocator->Allocate(static_cast<size_t>(bytes));
  } catch (const Error& e) {
    throw Error(e.code(), StrCat("tensor ", Describe(), ": ", e.what()));  // which tensor asked
  }
  storage->string_count = 0;
  if (dtype == DataType::kString) {
    auto* strings = static_cast<std::string*>(storage->data);
    for (int64_t i = 0; i < size_; ++i) new (&strings[i]) std::string();
    storage->string_count = size_;
  }
  data_ = storage->data;
  device_ = allocator->device();
  holder_ = std::move(storage);
}

Tensor Tensor::View(DataType dtype, Shape shape, void* data, std::shared_ptr<void> holder, Device device) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.size_ = ShapeSize(t.shape_);
  t.data_ = data;
  t.holder_ = std::move(holder);
  t.device_ = device;
  return t;
}

Tensor Tensor::Zeros(DataType dtype, Shape shape, Allocator* allocator) {
  Tensor t(dtype, std::move(shape), allocator);
  if (dtype != DataType::kString && t.byte_size() > 0) std::memset(t.raw_data(), 0, static_cast<size_t>(t.byte_size()));
  return t;
}

Tensor Tensor::Reshaped(Shape shape) const {
  const int64_t n = ShapeSize(shape);
  ONYX_CHECK(n == size_, kInvalidArgument, "cannot reshape ", Describe(), " to ", ShapeToString(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Clone(Allocator* allocator) const {
  ONYX_CHECK(device_.type == DeviceType::kCpu, kInvalidArgument, "Clone of a ", device_.ToString(),
             " tensor needs a data transfer");
  Tensor t(dtype_, shape_, allocator);
  if (dtype_ == DataType::kString) {
    for (int64_t i = 0; i < size_; ++i) t.data<std::string>()[i] = data<std::string>()[i];
  } else if (byte_size() > 0) {
    std::memcpy(t.raw_data(), data_, static_cast<size_t>(byte_size()));
  }
  return t;
}

std::string Tensor::Describe() const { return StrCat(DataTypeName(dtype_), ShapeToString(shape_)); }

}  // namespace onyx
