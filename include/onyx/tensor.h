// Tensor: an element type, a shape and a reference-counted view of bytes. Copying a Tensor
// shares the bytes; Clone() copies them. Tensors may view memory they do not own (model
// weights, a user's buffer) while a holder keeps that memory alive.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "onyx/allocator.h"
#include "onyx/dtype.h"
#include "onyx/error.h"

namespace onyx {

using Shape = std::vector<int64_t>;

std::string ShapeToString(const Shape& shape);
// Product of dims; throws Error(kInvalidArgument) on a negative dim or overflow.
int64_t ShapeSize(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  // Allocates storage for the shape (strings are default-constructed, numbers left
  // uninitialized). The allocator defaults to the CPU one.
  Tensor(DataType dtype, Shape shape, Allocator* allocator = nullptr);

  // A tensor over memory someone else owns; `holder` (may be null) keeps it alive.
  static Tensor View(DataType dtype, Shape shape, void* data, std::shared_ptr<void> holder,
                     Device device = Device{});
  // A zero-filled tensor (strings empty).
  static Tensor Zeros(DataType dtype, Shape shape, Allocator* allocator = nullptr);
  template <typename T>
  static Tensor Scalar(DataType dtype, T value) {
    Tensor t(dtype, {});
    *t.data<T>() = value;
    return t;
  }
  template <typename T>
  static Tensor FromVector(DataType dtype, Shape shape, const std::vector<T>& values);

  bool defined() const { return dtype_ != DataType::kUndefined; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t dim(size_t i) const { return shape_[i]; }
  int64_t size() const { return size_; }  // number of elements
  int64_t byte_size() const { return StorageBytes(dtype_, size_); }
  Device device() const { return device_; }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <typename T>
  T* data() { return static_cast<T*>(data_); }
  template <typename T>
  const T* data() const { return static_cast<const T*>(data_); }

  // Same bytes, another shape with the same element count.
  Tensor Reshaped(Shape shape) const;
  // A deep copy into memory from `allocator` (CPU by default).
  Tensor Clone(Allocator* allocator = nullptr) const;
  // Whether this tensor shares storage with `other`.
  bool SharesStorageWith(const Tensor& other) const { return holder_ && holder_ == other.holder_; }
  const std::shared_ptr<void>& holder() const { return holder_; }

  std::string Describe() const;  // "float[1,3,224,224]"

 private:
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  int64_t size_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<void> holder_;
  Device device_;
};

template <typename T>
Tensor Tensor::FromVector(DataType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t(dtype, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.size())
    throw Error(ErrorCode::kInvalidArgument, "FromVector: " + std::to_string(values.size()) +
                                                 " values for tensor " + t.Describe());
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

}  // namespace onyx
