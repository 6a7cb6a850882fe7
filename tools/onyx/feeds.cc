#include "feeds.h"

#include <random>

#include "base/check.h"
#include "base/float_types.h"
#include "onnx/proto_decode.h"
#include "tensor/npy.h"

namespace onyx::cli {
namespace {

std::pair<std::string, std::string> SplitAssignment(const std::string& text, const char* flag) {
  const auto eq = text.rfind('=');
  ONYX_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < text.size(), kInvalidArgument, flag, " expects NAME=VALUE, got '",
             text, "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Tensor RandomTensor(DataType dtype, const Shape& shape, std::mt19937_64& rng) {
  Tensor t(dtype, shape);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 9);
  for (int64_t i = 0; i < t.size(); ++i) {
    switch (dtype) {
      case DataType::kFloat: t.data<float>()[i] = real(rng); break;
      case DataType::kDouble: t.data<double>()[i] = real(rng); break;
      case DataType::kFloat16: t.data<uint16_t>()[i] = FloatToHalfBits(real(rng)); break;
      case DataType::kBFloat16: t.data<uint16_t>()[i] = FloatToBFloat16Bits(real(rng)); break;
      case DataType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(small(rng)); break;
      case DataType::kInt16: t.data<int16_t>()[i] = static_cast<int16_t>(small(rng)); break;
      case DataType::kInt32: t.data<int32_t>()[i] = small(rng); break;
      case DataType::kInt64: t.data<int64_t>()[i] = small(rng); break;
      case DataType::kUInt8: t.data<uint8_t>()[i] = static_cast<uint8_t>(small(rng)); break;
      case DataType::kUInt16: t.data<uint16_t>()[i] = static_cast<uint16_t>(small(rng)); break;
      case DataType::kUInt32: t.data<uint32_t>()[i] = static_cast<uint32_t>(small(rng)); break;
      case DataType::kUInt64: t.data<uint64_t>()[i] = static_cast<uint64_t>(small(rng)); break;
      case DataType::kBool: t.data<bool>()[i] = small(rng) % 2; break;
      case DataType::kString: t.data<std::string>()[i] = std::to_string(small(rng)); break;
      default: ONYX_THROW(kInvalidArgument, "--random cannot make values of type ", DataTypeName(dtype));
    }
  }
  return t;
}

}  // namespace

Value ReadValue(const std::string& path, const TypeInfo* type) {
  if (path.size() > 4 && path.substr(path.size() - 4) == ".npy") return ReadNpy(path);
  return proto::ReadValueFile(path, type);
}

NamedValues BuildFeeds(const Session& session, const FeedSpec& spec) {
  std::map<std::string, int64_t> dims;
  for (const auto& d : spec.dims) {
    auto [name, value] = SplitAssignment(d, "--dim");
    try {
      dims[name] = std::stoll(value);
    } catch (...) {
      ONYX_THROW(kInvalidArgument, "--dim ", d, ": '", value, "' is not an integer");
    }
    ONYX_CHECK(dims[name] >= 0, kInvalidArgument, "--dim ", d, " must not be negative");
  }
  std::map<std::string, std::string> files;
  for (const auto& in : spec.inputs) {
    auto [name, path] = SplitAssignment(in, "--input");
    files[name] = path;
  }
  NamedValues feeds;
  std::mt19937_64 rng(spec.seed);
  for (const auto& info : session.inputs()) {
    auto it = files.find(info.name);
    if (it != files.end()) {
      feeds.emplace_back(info.name, ReadValue(it->second, info.type.get()));
      files.erase(it);
      continue;
    }
    if (!spec.random) continue;  // the session names what is missing
    const TypeInfo* type = info.type.get();
    if (type && type->kind == TypeInfo::Kind::kOptional) type = type->elem.get();
    ONYX_CHECK(type && type->kind == TypeInfo::Kind::kTensor, kInvalidArgument, "--random: input '", info.name,
               "' is not a tensor (", type ? type->ToString() : "unknown type", ")");
    Shape shape;
    if (type->shape) {
      for (const auto& d : *type->shape) {
        if (d.known()) shape.push_back(d.value);
        else shape.push_back(dims.count(d.param) ? dims[d.param] : 1);
      }
    }
    feeds.emplace_back(info.name, RandomTensor(type->elem_type, shape, rng));
  }
  if (!files.empty()) ONYX_THROW(kInvalidArgument, "--input ", files.begin()->first, ": the model has no such input");
  return feeds;
}

}  // namespace onyx::cli
