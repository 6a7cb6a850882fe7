// libFuzzer harness for the TensorProto (.pb) reader `onyx run --input NAME=FILE.pb` and the
// conformance runner use (proto::ReadValueFile in src/onnx): the same bytes are read as each
// proto kind the reader knows (TensorProto, SequenceProto, MapProto, OptionalProto); each
// either gives a value or throws onyx::Error. Anything else is a bug. Values that read are
// walked, so a shape that disagrees with the bytes behind it shows up under ASan.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_bytes.h"
#include "onnx/proto_decode.h"
#include "scratch_file.h"

namespace {

void Walk(const onyx::Value& v, int depth) {
  if (depth > 64) return;
  if (v.is_tensor()) {
    const onyx::Tensor& t = v.tensor();
    (void)t.Describe();
    if (t.dtype() == onyx::DataType::kString) {
      for (int64_t i = 0; i < t.size(); ++i) (void)t.data<std::string>()[i].size();
    } else if (t.byte_size() > 0 && t.raw_data() != nullptr) {
      (void)onyx::fuzz::HashBytes(static_cast<const uint8_t*>(t.raw_data()), static_cast<size_t>(t.byte_size()));
    }
  } else if (v.is_sequence()) {
    for (const onyx::Value& e : v.sequence()) Walk(e, depth + 1);
  } else if (v.is_map()) {
    Walk(onyx::Value(v.map_keys()), depth + 1);
    Walk(onyx::Value(v.map_values()), depth + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = onyx::fuzz::WriteScratchFile("input_0.pb", data, size);
  const std::shared_ptr<const onyx::TypeInfo> kinds[] = {
      nullptr, onyx::TypeInfo::Sequence(onyx::TypeInfo::Tensor(onyx::DataType::kFloat)),
      onyx::TypeInfo::Map(onyx::DataType::kInt64, onyx::TypeInfo::Tensor(onyx::DataType::kFloat)),
      onyx::TypeInfo::Optional(onyx::TypeInfo::Tensor(onyx::DataType::kFloat))};
  for (const auto& kind : kinds) {
    try {
      Walk(onyx::proto::ReadValueFile(path, kind.get()), 0);
    } catch (const onyx::Error&) {
    }
  }
  return 0;
}
