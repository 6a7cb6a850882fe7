#include "onnx/model_loader.h"

#include <cstring>
#include <optional>
#include <filesystem>
#include <unordered_set>

#include "base/check.h"
#include "onnx/function_inliner.h"
#include "onnx/proto_decode.h"
#include "platform/mapped_file.h"

namespace onyx {
namespace {

using proto::DecodeContext;
using proto::WireReader;
using proto::WireType;
using OpsetMap = std::map<std::string, int64_t>;

constexpr int kMaxGraphNesting = 32;

std::pair<std::string, int64_t> ReadOpsetId(WireReader r) {
  std::string domain;
  int64_t version = 0;
  while (r.Next()) {
    if (r.field() == 1) domain = r.ReadString();
    else if (r.field() == 2) version = r.ReadInt64();
    else r.Skip();
  }
  return {ir::NormalizeDomain(domain), version};
}

std::pair<std::string, std::string> ReadStringPair(WireReader r) {
  std::string key, value;
  while (r.Next()) {
    if (r.field() == 1) key = r.ReadString();
    else if (r.field() == 2) value = r.ReadString();
    else r.Skip();
  }
  return {key, value};
}

ir::ValueInfo ReadValueInfo(WireReader r, DecodeContext& ctx) {
  ir::ValueInfo info;
  while (r.Next()) {
    switch (r.field()) {
      case 1: info.name = r.ReadString(); break;
      case 2: info.type = proto::DecodeType(r.ReadMessage(r.what()), ctx); break;
      case 3: info.doc_string = r.ReadString(); break;
      default: r.Skip();
    }
  }
  return info;
}

class GraphReader {
 public:
  GraphReader(DecodeContext& ctx, const OpsetMap& opsets) : ctx_(ctx), opsets_(opsets) {}

  std::shared_ptr<ir::Graph> ReadGraph(WireReader r, const ir::Graph* parent, int depth);
  std::unique_ptr<ir::Node> ReadNode(WireReader r, int depth);
  ir::Attribute ReadAttribute(WireReader r, const std::string& node_label, int depth);

 private:
  DecodeContext& ctx_;
  const OpsetMap& opsets_;
};

ir::Attribute GraphReader::ReadAttribute(WireReader r, const std::string& node_label, int depth) {
  ir::Attribute a;
  int32_t type = 0;
  while (r.Next()) {
    switch (r.field()) {
      case 1: a.name = r.ReadString(); break;
      case 21: a.ref_attr_name = r.ReadString(); break;
      case 20: type = r.ReadInt32(); break;
      case 2: a.f = r.ReadFloat(); break;
      case 3: a.i = r.ReadInt64(); break;
      case 4: a.s = r.ReadString(); break;
      case 5: a.t = proto::DecodeTensor(r.ReadMessage(r.what()), ctx_); break;
      case 6: a.g = ReadGraph(r.ReadMessage(r.what()), nullptr, depth + 1); break;
      case 22: a.t = proto::DecodeSparseTensor(r.ReadMessage(r.what()), ctx_); break;
      case 14: a.types.push_back(proto::DecodeType(r.ReadMessage(r.what()), ctx_)); break;
      case 7: r.ReadRepeatedFloat(a.floats); break;
      case 8: r.ReadRepeatedInt64(a.ints); break;
      case 9: a.strings.emplace_back(r.ReadBytes()); break;
      case 10: a.tensors.push_back(proto::DecodeTensor(r.ReadMessage(r.what()), ctx_)); break;
      case 11: a.graphs.push_back(ReadGraph(r.ReadMessage(r.what()), nullptr, depth + 1)); break;
      case 23: a.tensors.push_back(proto::DecodeSparseTensor(r.ReadMessage(r.what()), ctx_)); break;
      case 15: a.types.push_back(proto::DecodeType(r.ReadMessage(r.what()), ctx_)); break;
      default: r.Skip();
    }
  }
  ONYX_CHECK(type >= 0 && type <= 14, kInvalidModel, ctx_.source, ": ", node_label, ": attribute '", a.name,
             "' has invalid type ", type);
  a.type = static_cast<ir::AttrType>(type);
  if (a.type == ir::AttrType::kUndefined && a.ref_attr_name.empty()) {
    // IR < 2 had no type field: infer it from the field that is set.
    if (a.g) a.type = ir::AttrType::kGraph;
    else if (a.t.defined()) a.type = ir::AttrType::kTensor;
    else if (!a.floats.empty()) a.type = ir::AttrType::kFloats;
    else if (!a.ints.empty()) a.type = ir::AttrType::kInts;
    else if (!a.strings.empty()) a.type = ir::AttrType::kStrings;
    else if (!a.s.empty()) a.type = ir::AttrType::kString;
    else if (a.f != 0.0f) a.type = ir::AttrType::kFloat;
    else a.type = ir::AttrType::kInt;
  }
  return a;
}

std::unique_ptr<ir::Node> GraphReader::ReadNode(WireReader r, int depth) {
  auto node = std::make_unique<ir::Node>();
  std::vector<WireReader> attrs;
  while (r.Next()) {
    switch (r.field()) {
      case 1: node->inputs.push_back(r.ReadString()); break;
      case 2: node->outputs.push_back(r.ReadString()); break;
      case 3: node->name = r.ReadString(); break;
      case 4: node->op_type = r.ReadString(); break;
      case 5: attrs.push_back(r.ReadMessage(r.what())); break;
      case 6: node->doc_string = r.ReadString(); break;
      case 7: node->domain = ir::NormalizeDomain(r.ReadString()); break;
      case 8: node->overload = r.ReadString(); break;
      default: r.Skip();
    }
  }
  auto it = opsets_.find(node->domain);
  if (it != opsets_.end()) node->opset = static_cast<int>(it->second);
  const std::string label = node->Describe();
  ONYX_CHECK(!node->op_type.empty(), kInvalidModel, ctx_.source, ": a node has no op_type (", label, ")");
  for (auto& a : attrs) node->attributes.push_back(ReadAttribute(a, label, depth));
  return node;
}

std::shared_ptr<ir::Graph> GraphReader::ReadGraph(WireReader r, const ir::Graph* parent, int depth) {
  ONYX_CHECK(depth < kMaxGraphNesting, kInvalidModel, ctx_.source, ": subgraphs nested more than ", kMaxGraphNesting,
             " deep");
  auto graph = std::make_shared<ir::Graph>();
  graph->parent = parent;
  std::vector<ir::ValueInfo> value_infos;
  while (r.Next()) {
    switch (r.field()) {
      case 1: graph->nodes.push_back(ReadNode(r.ReadMessage(ctx_.source + ": NodeProto"), depth)); break;
      case 2: graph->name = r.ReadString(); break;
      case 5: {
        Tensor t;
        WireReader tr = r.ReadMessage(ctx_.source + ": initializer");
        // The name lives inside the TensorProto; read it with a second pass.
        WireReader name_reader = tr;
        std::string name;
        while (name_reader.Next()) {
          if (name_reader.field() == 8) name = name_reader.ReadString();
          else name_reader.Skip();
        }
        t = proto::DecodeTensor(tr, ctx_);
        ONYX_CHECK(!name.empty(), kInvalidModel, ctx_.source, ": graph '", graph->name, "' has an unnamed initializer");
        ONYX_CHECK(graph->initializers.emplace(name, std::move(t)).second, kInvalidModel, ctx_.source,
                   ": initializer '", name, "' is defined twice");
        break;
      }
      case 15: {
        WireReader sr = r.ReadMessage(ctx_.source + ": sparse initializer");
        std::string name;
        WireReader scan = sr;
        while (scan.Next()) {
          if (scan.field() != 1) { scan.Skip(); continue; }
          WireReader values = scan.ReadMessage(scan.what());
          while (values.Next()) {
            if (values.field() == 8) name = values.ReadString();
            else values.Skip();
          }
        }
        ONYX_CHECK(!name.empty(), kInvalidModel, ctx_.source, ": unnamed sparse initializer");
        graph->initializers[name] = proto::DecodeSparseTensor(sr, ctx_);
        break;
      }
      case 10: graph->doc_string = r.ReadString(); break;
      case 11: graph->inputs.push_back(ReadValueInfo(r.ReadMessage(r.what()), ctx_)); break;
      case 12: graph->outputs.push_back(ReadValueInfo(r.ReadMessage(r.what()), ctx_)); break;
      case 13: value_infos.push_back(ReadValueInfo(r.ReadMessage(r.what()), ctx_)); break;
      default: r.Skip();
    }
  }
  for (auto& vi : value_infos)
    if (vi.type) graph->value_types[vi.name] = vi.type;
  for (auto& node : graph->nodes)
    for (auto& attr : node->attributes) {
      if (attr.g) attr.g->parent = graph.get();
      for (auto& sub : attr.graphs) sub->parent = graph.get();
    }
  return graph;
}

FunctionDef ReadFunction(WireReader r, DecodeContext& ctx) {
  FunctionDef fn;
  std::vector<WireReader> node_readers;
  OpsetMap opsets;
  std::vector<WireReader> attr_protos;
  while (r.Next()) {
    switch (r.field()) {
      case 1: fn.name = r.ReadString(); break;
      case 4: fn.inputs.push_back(r.ReadString()); break;
      case 5: fn.outputs.push_back(r.ReadString()); break;
      case 6: fn.attribute_names.push_back(r.ReadString()); break;
      case 11: attr_protos.push_back(r.ReadMessage(r.what())); break;
      case 7: node_readers.push_back(r.ReadMessage(ctx.source + ": function NodeProto")); break;
      case 9: opsets.insert(ReadOpsetId(r.ReadMessage(r.what()))); break;
      case 10: fn.domain = ir::NormalizeDomain(r.ReadString()); break;
      case 13: fn.overload = r.ReadString(); break;
      default: r.Skip();
    }
  }
  GraphReader reader(ctx, opsets);
  for (auto& a : attr_protos) fn.attribute_defaults.push_back(reader.ReadAttribute(a, "function " + fn.name, 0));
  for (auto& nr : node_readers) fn.nodes.push_back(reader.ReadNode(nr, 0));
  return fn;
}

// Names every unnamed node so errors and profiles can point at it.
void NameNodes(ir::Graph& graph, std::unordered_set<std::string>& used, int& counter) {
  for (auto& node : graph.nodes) {
    if (!node->name.empty()) used.insert(node->name);
  }
  for (auto& node : graph.nodes) {
    if (node->name.empty()) {
      std::string name;
      do {
        name = StrCat(node->op_type, "_", counter++);
      } while (used.count(name));
      used.insert(name);
      node->name = name;
    }
    for (auto& attr : node->attributes) {
      if (attr.g) NameNodes(*attr.g, used, counter);
      for (auto& sub : attr.graphs) NameNodes(*sub, used, counter);
    }
  }
}

void SortAll(ir::Graph& graph) {
  for (auto& node : graph.nodes)
    for (auto& attr : node->attributes) {
      if (attr.g) SortAll(*attr.g);
      for (auto& sub : attr.graphs) SortAll(*sub);
    }
  graph.SortTopologically();
}

std::shared_ptr<ir::Model> ParseModel(const uint8_t* data, size_t size, DecodeContext& ctx, const LoadLimits& limits) {
  ONYX_CHECK(size > 0, kInvalidModel, ctx.source, ": the file is empty");
  auto model = std::make_shared<ir::Model>();
  WireReader r(data, data + size, ctx.source + ": ModelProto");
  std::optional<WireReader> graph_reader;
  std::vector<WireReader> function_readers;
  bool has_ir_version = false;
  while (r.Next()) {
    switch (r.field()) {
      case 1: model->ir_version = r.ReadInt64(); has_ir_version = true; break;
      case 2: model->producer_name = r.ReadString(); break;
      case 3: model->producer_version = r.ReadString(); break;
      case 4: model->domain = r.ReadString(); break;
      case 5: model->model_version = r.ReadInt64(); break;
      case 6: model->doc_string = r.ReadString(); break;
      case 7: graph_reader = r.ReadMessage(ctx.source + ": GraphProto"); break;
      case 8: {
        auto [domain, version] = ReadOpsetId(r.ReadMessage(r.what()));
        model->opset_imports[domain] = version;
        break;
      }
      case 14: model->metadata_props.push_back(ReadStringPair(r.ReadMessage(r.what()))); break;
      case 25: function_readers.push_back(r.ReadMessage(ctx.source + ": FunctionProto")); break;
      default: r.Skip();
    }
  }
  ONYX_CHECK(has_ir_version && graph_reader.has_value(), kInvalidModel, ctx.source,
             ": not an ONNX model (no ir_version or no graph)");
  ONYX_CHECK(model->ir_version >= kMinIrVersion && model->ir_version <= kMaxIrVersion, kInvalidModel, ctx.source,
             ": IR version ", model->ir_version, " is not supported (Onyx reads ", kMinIrVersion, " to ", kMaxIrVersion,
             ")");
  // IR 3 models may omit the default domain's import; ONNX then means opset 1.
  if (!model->opset_imports.count("")) model->opset_imports[""] = 1;
  ValidateOpsetImports(model->opset_imports, ctx.source);
  GraphReader reader(ctx, model->opset_imports);
  model->graph = reader.ReadGraph(*graph_reader, nullptr, 0);

  FunctionTable functions;
  for (auto& fr : function_readers) {
    FunctionDef fn = ReadFunction(fr, ctx);
    std::string key = FunctionKey(fn.domain, fn.name, fn.overload);
    functions.emplace(std::move(key), std::move(fn));
  }
  if (!functions.empty()) InlineFunctions(*model->graph, functions);

  std::unordered_set<std::string> used;
  int counter = 0;
  NameNodes(*model->graph, used, counter);
  SortAll(*model->graph);
  model->graph->Validate();
  ValidateModel(*model, limits, ctx.source);
  return model;
}

}  // namespace

std::shared_ptr<ir::Model> LoadModelFromFile(const std::string& path, const LoadLimits& limits) {
  return LoadModelFromFile(path, limits, nullptr);
}

std::shared_ptr<ir::Model> LoadModelFromFile(const std::string& path, const LoadLimits& limits,
                                             std::vector<std::string>* external_files) {
  auto file = MappedFile::Open(path);
  DecodeContext ctx;
  ctx.source = path;
  ctx.base_dir = std::filesystem::absolute(std::filesystem::path(path)).parent_path().string();
  ctx.bytes_holder = file;
  ctx.release_read_pages = [&file, &ctx] {
    file->DropResidentPages();
    for (const auto& [name, f] : ctx.external_files) f->DropResidentPages();
  };
  auto model = ParseModel(file->data(), file->size(), ctx, limits);
  ctx.release_read_pages = nullptr;
  model->path = path;
  std::vector<std::shared_ptr<const MappedFile>> files = {file};
  for (const auto& [name, f] : ctx.external_files) files.push_back(f);
  if (external_files != nullptr)
    for (const auto& [name, f] : ctx.external_files) external_files->push_back(name);
  model->release_mapped_pages = [files] {
    for (const auto& f : files) f->DropResidentPages();
  };
  return model;
}

std::shared_ptr<ir::Model> LoadModelFromMappedBytes(
    const uint8_t* data, size_t size, std::shared_ptr<const void> holder, const std::string& source,
    const std::string& base_dir, const std::map<std::string, std::shared_ptr<const MappedFile>>& preopened) {
  DecodeContext ctx;
  ctx.source = source;
  ctx.base_dir = base_dir;
  ctx.bytes_holder = std::move(holder);
  for (const auto& [location, f] : preopened)
    ctx.external_files[std::filesystem::weakly_canonical(std::filesystem::path(base_dir) / location).string()] = f;
  return ParseModel(data, size, ctx, {});
}

std::shared_ptr<ir::Model> LoadModelFromBytes(const void* data, size_t size, const LoadLimits& limits) {
  auto copy = std::shared_ptr<uint8_t[]>(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(copy.get(), data, size);
  DecodeContext ctx;
  ctx.source = "<model bytes>";
  ctx.bytes_holder = std::shared_ptr<const void>(copy, copy.get());
  return ParseModel(copy.get(), size, ctx, limits);
}

}  // namespace onyx
