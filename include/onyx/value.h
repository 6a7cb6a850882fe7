// Value: what flows along a graph edge. A tensor, a sequence of values, a map (ai.onnx.ml), or
// None (an empty optional). TypeInfo describes the static type of a value (model metadata).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onyx/tensor.h"

namespace onyx {

// One dimension of a static shape: a known size, or a symbol ("batch"), or unknown.
struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string param;   // symbolic name when value < 0 (may be empty: unknown)
  bool known() const { return value >= 0; }
  bool operator==(const Dim&) const = default;
};

struct TypeInfo {
  enum class Kind { kUnknown, kTensor, kSparseTensor, kSequence, kMap, kOptional };
  Kind kind = Kind::kUnknown;
  DataType elem_type = DataType::kUndefined;  // tensor element type, or a map's key type
  std::optional<std::vector<Dim>> shape;      // tensors: absent when the rank is unknown
  std::shared_ptr<const TypeInfo> elem;       // sequence/optional element, map value type

  static std::shared_ptr<const TypeInfo> Tensor(DataType t, std::optional<std::vector<Dim>> shape = {});
  static std::shared_ptr<const TypeInfo> Sequence(std::shared_ptr<const TypeInfo> elem);
  static std::shared_ptr<const TypeInfo> Optional(std::shared_ptr<const TypeInfo> elem);
  static std::shared_ptr<const TypeInfo> Map(DataType key, std::shared_ptr<const TypeInfo> value);
  // "tensor(float)[batch,3,224,224]", "seq(tensor(int64))", "optional(tensor(float))", ...
  std::string ToString() const;
};

class Value {
 public:
  enum class Kind { kNone, kTensor, kSequence, kMap };

  Value() = default;  // None without a type
  Value(Tensor t) : kind_(Kind::kTensor), tensor_(std::move(t)) {}  // NOLINT: implicit by design

  static Value None(std::shared_ptr<const TypeInfo> type = nullptr);
  static Value Sequence(std::vector<Value> elements, std::shared_ptr<const TypeInfo> elem_type = nullptr);
  // keys: 1-D int64 or string tensor; values: 1-D tensor of the same length.
  static Value Map(Tensor keys, Tensor values);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_map() const { return kind_ == Kind::kMap; }

  // Throw Error(kInvalidArgument) when the value is of another kind.
  const Tensor& tensor() const;
  Tensor& tensor();
  const std::vector<Value>& sequence() const;
  const Tensor& map_keys() const;
  const Tensor& map_values() const;
  // Element type of a sequence or type of a None (may be null when unknown).
  const std::shared_ptr<const TypeInfo>& type() const { return type_; }

  std::string Describe() const;

 private:
  Kind kind_ = Kind::kNone;
  Tensor tensor_;
  std::shared_ptr<const std::vector<Value>> sequence_;
  Tensor map_keys_, map_values_;
  std::shared_ptr<const TypeInfo> type_;
};

}  // namespace onyx
