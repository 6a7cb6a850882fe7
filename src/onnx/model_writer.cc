#include "onnx/model_writer.h"

#include <filesystem>
#include <fstream>

#include "base/check.h"
#include "onnx/wire_writer.h"

namespace onyx {
namespace {

using proto::WireWriter;

constexpr int64_t kMaxInlineBytes = (int64_t{1} << 31) - (int64_t{1} << 20);  // under protobuf's 2 GB
constexpr int64_t kExternalAlignment = 4096;

class ModelEncoder {
 public:
  ModelEncoder(const SaveOptions& options, std::ofstream* external, std::string external_name)
      : options_(options), external_(external), external_name_(std::move(external_name)) {}

  WireWriter Model(const ir::Model& model) {
    WireWriter w;
    w.Int64(1, model.ir_version);
    if (!model.producer_name.empty()) w.Bytes(2, model.producer_name);
    if (!model.producer_version.empty()) w.Bytes(3, model.producer_version);
    if (!model.domain.empty()) w.Bytes(4, model.domain);
    if (model.model_version) w.Int64(5, model.model_version);
    if (!model.doc_string.empty()) w.Bytes(6, model.doc_string);
    w.Message(7, Graph(*model.graph));
    for (const auto& [domain, version] : model.opset_imports) {
      WireWriter op;
      op.Bytes(1, domain);
      op.Int64(2, version);
      w.Message(8, op);
    }
    for (const auto& [k, v] : model.metadata_props) {
      WireWriter e;
      e.Bytes(1, k);
      e.Bytes(2, v);
      w.Message(14, e);
    }
    ONYX_CHECK(static_cast<int64_t>(w.size()) < kMaxInlineBytes, kInvalidArgument,
               "the model is over 2 GB with its weights inline: save it with external data");
    return w;
  }

 private:
  WireWriter Graph(const ir::Graph& g) {
    WireWriter w;
    for (const auto& node : g.nodes) w.Message(1, Node(*node));
    if (!g.name.empty()) w.Bytes(2, g.name);
    for (const auto& [name, tensor] : g.initializers) w.Message(5, Tensor(tensor, name, true));
    if (!g.doc_string.empty()) w.Bytes(10, g.doc_string);
    for (const auto& v : g.inputs) w.Message(11, ValueInfo(v.name, v.type, v.doc_string));
    for (const auto& v : g.outputs) w.Message(12, ValueInfo(v.name, v.type, v.doc_string));
    for (const auto& [name, type] : g.value_types)
      if (!g.IsGraphInput(name) && !g.IsGraphOutput(name)) w.Message(13, ValueInfo(name, type, ""));
    return w;
  }

  WireWriter Node(const ir::Node& n) {
    WireWriter w;
    for (const auto& in : n.inputs) w.Bytes(1, in);
    for (const auto& out : n.outputs) w.Bytes(2, out);
    if (!n.name.empty()) w.Bytes(3, n.name);
    w.Bytes(4, n.op_type);
    for (const auto& a : n.attributes) w.Message(5, Attribute(a));
    if (!n.doc_string.empty()) w.Bytes(6, n.doc_string);
    if (!n.domain.empty()) w.Bytes(7, n.domain);
    if (!n.overload.empty()) w.Bytes(8, n.overload);
    return w;
  }

  WireWriter Attribute(const ir::Attribute& a) {
    WireWriter w;
    w.Bytes(1, a.name);
    if (!a.ref_attr_name.empty()) w.Bytes(21, a.ref_attr_name);
    w.Varint(20, static_cast<uint64_t>(a.type));
    switch (a.type) {
      case ir::AttrType::kFloat: w.Float(2, a.f); break;
      case ir::AttrType::kInt: w.Int64(3, a.i); break;
      case ir::AttrType::kString: w.Bytes(4, a.s); break;
      case ir::AttrType::kTensor:
      case ir::AttrType::kSparseTensor: w.Message(5, Tensor(a.t, "", false)); break;  // sparse saved dense
      case ir::AttrType::kGraph: w.Message(6, Graph(*a.g)); break;
      case ir::AttrType::kFloats: w.PackedFloat(7, a.floats); break;
      case ir::AttrType::kInts: w.PackedInt64(8, a.ints); break;
      case ir::AttrType::kStrings:
        for (const auto& s : a.strings) w.Bytes(9, s);
        break;
      case ir::AttrType::kTensors:
      case ir::AttrType::kSparseTensors:
        for (const auto& t : a.tensors) w.Message(10, Tensor(t, "", false));
        break;
      case ir::AttrType::kGraphs:
        for (const auto& g : a.graphs) w.Message(11, Graph(*g));
        break;
      case ir::AttrType::kTypeProto:
        if (!a.types.empty() && a.types[0]) w.Message(14, Type(*a.types[0]));
        break;
      case ir::AttrType::kTypeProtos:
        for (const auto& t : a.types)
          if (t) w.Message(15, Type(*t));
        break;
      case ir::AttrType::kUndefined: break;
    }
    return w;
  }

  WireWriter Tensor(const onyx::Tensor& t, const std::string& name, bool may_externalize) {
    WireWriter w;
    w.PackedInt64(1, t.shape());
    w.Varint(2, static_cast<uint64_t>(t.dtype()));
    if (!name.empty()) w.Bytes(8, name);
    if (t.dtype() == DataType::kString) {
      for (int64_t i = 0; i < t.size(); ++i) w.Bytes(6, t.data<std::string>()[i]);
      return w;
    }
    const int64_t bytes = t.byte_size();
    const bool external = may_externalize && external_ != nullptr && options_.external_threshold_bytes >= 0 &&
                          bytes >= options_.external_threshold_bytes;
    if (!external) {
      w.Bytes(9, std::string_view(static_cast<const char*>(t.raw_data()), static_cast<size_t>(bytes)));
      return w;
    }
    // Align each tensor in the external file so a loader can map it in place.
    const int64_t pad = (kExternalAlignment - external_offset_ % kExternalAlignment) % kExternalAlignment;
    const std::string zeros(static_cast<size_t>(pad), '\0');
    external_->write(zeros.data(), pad);
    external_offset_ += pad;
    external_->write(static_cast<const char*>(t.raw_data()), bytes);
    ONYX_CHECK(external_->good(), kInvalidArgument, "writing external data '", external_name_, "' failed");
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"location", external_name_}, {"offset", std::to_string(external_offset_)}, {"length", std::to_string(bytes)}}) {
      WireWriter e;
      e.Bytes(1, k);
      e.Bytes(2, v);
      w.Message(13, e);
    }
    w.Varint(14, 1);
    external_offset_ += bytes;
    return w;
  }

  WireWriter Type(const TypeInfo& t) {
    WireWriter w;
    auto tensor_type = [&](const TypeInfo& tt) {
      WireWriter inner;
      inner.Varint(1, static_cast<uint64_t>(tt.elem_type));
      if (tt.shape) {
        WireWriter shape;
        for (const auto& d : *tt.shape) {
          WireWriter dim;
          if (d.known()) dim.Int64(1, d.value);
          else if (!d.param.empty()) dim.Bytes(2, d.param);
          shape.Message(1, dim);
        }
        inner.Message(2, shape);
      }
      return inner;
    };
    switch (t.kind) {
      case TypeInfo::Kind::kTensor: w.Message(1, tensor_type(t)); break;
      case TypeInfo::Kind::kSparseTensor: w.Message(8, tensor_type(t)); break;
      case TypeInfo::Kind::kSequence:
      case TypeInfo::Kind::kOptional: {
        WireWriter inner;
        if (t.elem) inner.Message(1, Type(*t.elem));
        w.Message(t.kind == TypeInfo::Kind::kSequence ? 4 : 9, inner);
        break;
      }
      case TypeInfo::Kind::kMap: {
        WireWriter inner;
        inner.Varint(1, static_cast<uint64_t>(t.elem_type));
        if (t.elem) inner.Message(2, Type(*t.elem));
        w.Message(5, inner);
        break;
      }
      case TypeInfo::Kind::kUnknown: break;
    }
    return w;
  }

  WireWriter ValueInfo(const std::string& name, const std::shared_ptr<const TypeInfo>& type, const std::string& doc) {
    WireWriter w;
    w.Bytes(1, name);
    if (type) w.Message(2, Type(*type));
    if (!doc.empty()) w.Bytes(3, doc);
    return w;
  }

  const SaveOptions& options_;
  std::ofstream* external_;
  std::string external_name_;
  int64_t external_offset_ = 0;
};

}  // namespace

std::string SerializeModel(const ir::Model& model) {
  SaveOptions options;
  return ModelEncoder(options, nullptr, "").Model(model).Take();
}

void SaveModel(const ir::Model& model, const std::string& path, const SaveOptions& options) {
  namespace fs = std::filesystem;
  std::ofstream external;
  std::string external_name;
  if (options.external_threshold_bytes >= 0) {
    external_name = options.external_file_name.empty() ? fs::path(path).filename().string() + ".data"
                                                       : options.external_file_name;
    ONYX_CHECK(fs::path(external_name).is_relative() && external_name.find("..") == std::string::npos, kInvalidArgument,
               "external data file '", external_name, "' must be a plain name inside the model's folder");
    external.open(fs::path(path).parent_path() / external_name, std::ios::binary | std::ios::trunc);
    ONYX_CHECK(external.good(), kInvalidArgument, "cannot write '", external_name, "' beside '", path, "'");
  }
  ModelEncoder encoder(options, external.is_open() ? &external : nullptr, external_name);
  const std::string bytes = encoder.Model(model).Take();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ONYX_CHECK(out.good(), kInvalidArgument, "cannot write '", path, "'");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ONYX_CHECK(out.good(), kInvalidArgument, "writing '", path, "' failed");
}

}  // namespace onyx
