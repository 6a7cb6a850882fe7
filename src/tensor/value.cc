#include "onyx/value.h"

#include "base/check.h"

namespace onyx {

std::shared_ptr<const TypeInfo> TypeInfo::Tensor(DataType t, std::optional<std::vector<Dim>> shape) {
  auto info = std::make_shared<TypeInfo>();
  info->kind = Kind::kTensor;
  info->elem_type = t;
  info->shape = std::move(shape);
  return info;
}

std::shared_ptr<const TypeInfo> TypeInfo::Sequence(std::shared_ptr<const TypeInfo> elem) {
  auto info = std::make_shared<TypeInfo>();
  info->kind = Kind::kSequence;
  info->elem = std::move(elem);
  return info;
}

std::shared_ptr<const TypeInfo> TypeInfo::Optional(std::shared_ptr<const TypeInfo> elem) {
  auto info = std::make_shared<TypeInfo>();
  info->kind = Kind::kOptional;
  info->elem = std::move(elem);
  return info;
}

std::shared_ptr<const TypeInfo> TypeInfo::Map(DataType key, std::shared_ptr<const TypeInfo> value) {
  auto info = std::make_shared<TypeInfo>();
  info->kind = Kind::kMap;
  info->elem_type = key;
  info->elem = std::move(value);
  return info;
}

std::string TypeInfo::ToString() const {
  auto elem_str = [&] { return elem ? elem->ToString() : std::string("?"); };
  switch (kind) {
    case Kind::kTensor:
    case Kind::kSparseTensor: {
      std::string s = StrCat(kind == Kind::kTensor ? "tensor(" : "sparse_tensor(", DataTypeName(elem_type), ")");
      if (shape) {
        s += "[";
        for (size_t i = 0; i < shape->size(); ++i) {
          const Dim& d = (*shape)[i];
          if (i) s += ",";
          s += d.known() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param);
        }
        s += "]";
      }
      return s;
    }
    case Kind::kSequence: return StrCat("seq(", elem_str(), ")");
    case Kind::kOptional: return StrCat("optional(", elem_str(), ")");
    case Kind::kMap: return StrCat("map(", DataTypeName(elem_type), ",", elem_str(), ")");
    case Kind::kUnknown: break;
  }
  return "unknown";
}

Value Value::None(std::shared_ptr<const TypeInfo> type) {
  Value v;
  v.type_ = std::move(type);
  return v;
}

Value Value::Sequence(std::vector<Value> elements, std::shared_ptr<const TypeInfo> elem_type) {
  Value v;
  v.kind_ = Kind::kSequence;
  v.sequence_ = std::make_shared<const std::vector<Value>>(std::move(elements));
  v.type_ = std::move(elem_type);
  return v;
}

Value Value::Map(Tensor keys, Tensor values) {
  ONYX_CHECK(keys.rank() == 1 && values.rank() >= 1 && keys.size() == values.dim(0), kInvalidArgument,
             "map keys ", keys.Describe(), " and values ", values.Describe(), " differ in length");
  Value v;
  v.kind_ = Kind::kMap;
  v.map_keys_ = std::move(keys);
  v.map_values_ = std::move(values);
  return v;
}

namespace {
const char* KindName(Value::Kind k) {
  switch (k) {
    case Value::Kind::kNone: return "none";
    case Value::Kind::kTensor: return "tensor";
    case Value::Kind::kSequence: return "sequence";
    case Value::Kind::kMap: return "map";
  }
  return "?";
}
}  // namespace

const Tensor& Value::tensor() const {
  ONYX_CHECK(kind_ == Kind::kTensor, kInvalidArgument, "expected a tensor, got a ", KindName(kind_));
  return tensor_;
}

Tensor& Value::tensor() {
  ONYX_CHECK(kind_ == Kind::kTensor, kInvalidArgument, "expected a tensor, got a ", KindName(kind_));
  return tensor_;
}

const std::vector<Value>& Value::sequence() const {
  ONYX_CHECK(kind_ == Kind::kSequence, kInvalidArgument, "expected a sequence, got a ", KindName(kind_));
  return *sequence_;
}

const Tensor& Value::map_keys() const {
  ONYX_CHECK(kind_ == Kind::kMap, kInvalidArgument, "expected a map, got a ", KindName(kind_));
  return map_keys_;
}

const Tensor& Value::map_values() const {
  ONYX_CHECK(kind_ == Kind::kMap, kInvalidArgument, "expected a map, got a ", KindName(kind_));
  return map_values_;
}

std::string Value::Describe() const {
  switch (kind_) {
    case Kind::kNone: return "none";
    case Kind::kTensor: return tensor_.Describe();
    case Kind::kSequence: return StrCat("seq of ", sequence_->size());
    case Kind::kMap: return StrCat("map(", DataTypeName(map_keys_.dtype()), ",", DataTypeName(map_values_.dtype()),
                                   ") of ", map_keys_.size());
  }
  return "?";
}

}  // namespace onyx
