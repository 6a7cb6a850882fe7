#include "testing/test_folder.h"

#include <algorithm>
#include <filesystem>

#include "base/str_cat.h"
#include "onnx/proto_decode.h"
#include "onnx/wire_reader.h"
#include "platform/mapped_file.h"

namespace onyx::testing {
namespace fs = std::filesystem;

bool TestFolderResult::passed() const {
  if (!error.empty() || data_sets.empty()) return false;
  for (const auto& d : data_sets)
    if (!d.passed) return false;
  return true;
}

std::string TestFolderResult::FirstFailure() const {
  if (!error.empty()) return error;
  if (data_sets.empty()) return "no test data sets";
  for (const auto& d : data_sets)
    if (!d.passed) return d.name + ": " + d.message;
  return "";
}

namespace {

// Files named prefix_K.pb sorted by K.
std::vector<fs::path> NumberedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix + "_", 0) != 0 || entry.path().extension() != ".pb") continue;
    const std::string num = name.substr(prefix.size() + 1, name.size() - prefix.size() - 4);
    if (num.empty() || !std::all_of(num.begin(), num.end(), ::isdigit)) continue;
    found.emplace_back(std::stoi(num), entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  for (auto& [k, p] : found) paths.push_back(p);
  return paths;
}

// The `name` field of a TensorProto/SequenceProto/... file (field 8 for tensors, 1 otherwise).
std::string ProtoName(const fs::path& path, const TypeInfo* type) {
  auto file = MappedFile::Open(path.string());
  proto::WireReader r(file->data(), file->data() + file->size(), path.string());
  const uint32_t name_field = (type == nullptr || type->kind == TypeInfo::Kind::kTensor) ? 8 : 1;
  while (r.Next()) {
    if (r.field() == name_field && r.wire_type() == proto::WireType::kLengthDelimited) return r.ReadString();
    r.Skip();
  }
  return "";
}

// ONNX 1.12's test data stores bfloat16 tensors as uint16 holding the same bits: read them as
// the bfloat16 the model declares.
Value AsDeclaredType(Value v, const TypeInfo* type) {
  if (type != nullptr && type->kind == TypeInfo::Kind::kTensor && type->elem_type == DataType::kBFloat16 &&
      v.is_tensor() && v.tensor().dtype() == DataType::kUInt16) {
    const Tensor& t = v.tensor();
    return Tensor::View(DataType::kBFloat16, t.shape(), const_cast<void*>(t.raw_data()), t.holder(), t.device());
  }
  return v;
}

}  // namespace

TestFolderResult RunTestFolder(const std::string& dir, const SessionOptions& options, const Tolerance& tol) {
  TestFolderResult result;
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>((fs::path(dir) / "model.onnx").string(), options);
  } catch (const std::exception& e) {
    result.error = e.what();
    return result;
  }
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(entry.path());
  std::sort(sets.begin(), sets.end());
  const auto& inputs = session->inputs();
  const auto& outputs = session->outputs();
  for (const auto& set : sets) {
    DataSetResult ds;
    ds.name = set.filename().string();
    try {
      NamedValues feeds;
      const auto input_files = NumberedFiles(set, "input");
      for (size_t k = 0; k < input_files.size(); ++k) {
        const TypeInfo* type = k < inputs.size() ? inputs[k].type.get() : nullptr;
        std::string name = ProtoName(input_files[k], type);
        auto by_name = std::find_if(inputs.begin(), inputs.end(), [&](const IoInfo& i) { return i.name == name; });
        if (by_name != inputs.end()) {
          type = by_name->type.get();
        } else if (k < inputs.size()) {
          name = inputs[k].name;
        } else {
          throw Error(ErrorCode::kInvalidArgument, StrCat("more input files than model inputs: ", input_files[k].string()));
        }
        feeds.emplace_back(name, AsDeclaredType(proto::ReadValueFile(input_files[k].string(), type), type));
      }
      const auto got = session->Run(feeds);
      const auto output_files = NumberedFiles(set, "output");
      if (output_files.size() != got.size()) {
        ds.message = StrCat(got.size(), " outputs, but ", output_files.size(), " expected output files");
      } else {
        for (size_t k = 0; k < output_files.size() && ds.message.empty(); ++k) {
          const TypeInfo* out_type = outputs[k].type.get();
          const Value expected = AsDeclaredType(proto::ReadValueFile(output_files[k].string(), out_type), out_type);
          std::string diff = CompareValues(expected, got[k], tol);
          if (!diff.empty()) ds.message = StrCat("output ", k, " '", outputs[k].name, "': ", diff);
        }
      }
    } catch (const std::exception& e) {
      ds.message = e.what();
    }
    ds.passed = ds.message.empty();
    result.data_sets.push_back(std::move(ds));
  }
  return result;
}

}  // namespace onyx::testing
