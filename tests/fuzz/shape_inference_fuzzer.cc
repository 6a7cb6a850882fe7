// libFuzzer harness for the per-op shape and type rules (src/ops/infer): the bytes pick one
// registered rule and build one node for it — opset, attributes with fuzzed (often extreme)
// values, inputs present or omitted with fuzzed dtypes, ranks and dims (known, symbolic,
// unknown, huge), some of them constants or known shape values — then run the rule and the
// shape-value propagation after it, as InferNodeTypes does. Each either works or throws
// onyx::Error; anything else (a crash, a sanitizer report, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_bytes.h"
#include "ops/shape_inference.h"

namespace {

using onyx::DataType;
using onyx::Dim;
using onyx::fuzz::FuzzBytes;

constexpr size_t kMaxInputs = 8;
constexpr size_t kMaxOutputs = 4;
constexpr size_t kMaxRank = 7;
constexpr size_t kMaxConstantElements = 16;

const std::vector<std::string> kAttributeNames = {
    "axis", "axes", "perm", "keepdims", "pads", "strides", "kernel_shape", "dilations", "group", "to", "value",
    "split", "start", "end", "allowzero", "auto_pad", "ceil_mode", "num_heads", "kv_num_heads", "qkv_hidden_sizes",
    "k", "transA", "transB", "transBatchA", "transBatchB", "noop_with_empty_axes", "channels", "channels_last",
    "block", "coordinate_transformation_mode", "keep_aspect_ratio_policy", "shape", "plain_input", "upper", "mode",
    "epsilon", "alpha", "unidirectional", "output_shape", "output_padding", "bits", "block_size", "K", "N",
    "num_outputs", "largest", "sorted", "exclusive", "reverse", "seed", "dtype", "p", "size", "batch_dims"};
const std::vector<std::string> kStrings = {"", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "half_pixel",
                                           "tf_crop_and_resize", "stretch", "not_larger", "nearest", "\xff\xfe"};
const std::vector<DataType> kDtypes = {
    DataType::kFloat, DataType::kFloat,  DataType::kInt64,   DataType::kInt32, DataType::kFloat16,
    DataType::kBool,  DataType::kUInt8,  DataType::kInt8,    DataType::kDouble, DataType::kString,
    DataType::kBFloat16, DataType::kInt4, DataType::kUndefined, DataType::kComplex64};
const std::vector<int> kOpsets = {1, 6, 7, 9, 10, 11, 12, 13, 14, 17, 18, 19, 21, 23, 25, 0, -1, 1000};

int64_t DimValue(FuzzBytes& in) {
  const int64_t v = in.Int();
  if (v == INT64_MIN) return INT64_MAX;
  return v < -1 ? -v : v;  // a declared dim is >= 0 or unknown (-1); huge ones stay
}

std::vector<Dim> FuzzDims(FuzzBytes& in, size_t rank) {
  static const std::vector<std::string> kSymbols = {"batch", "seq", "N", "#-1", "#0", ""};
  std::vector<Dim> dims;
  for (size_t i = 0; i < rank; ++i) {
    switch (in.Byte() % 4) {
      case 0: dims.push_back(Dim{-1, in.Pick(kSymbols)}); break;
      case 1: dims.push_back(Dim{DimValue(in), ""}); break;
      default: dims.push_back(Dim{static_cast<int64_t>(in.Byte() % 6), ""}); break;
    }
  }
  return dims;
}

// A small constant tensor; its dims are what its type says.
onyx::Tensor FuzzConstant(FuzzBytes& in, DataType dtype) {
  onyx::Shape shape;
  int64_t elements = 1;
  for (size_t r = in.Byte() % 3; r > 0; --r) {
    const int64_t d = in.Byte() % 5;
    if (elements * (d == 0 ? 1 : d) > static_cast<int64_t>(kMaxConstantElements)) break;
    shape.push_back(d);
    elements *= d == 0 ? 1 : d;
  }
  onyx::Tensor t(dtype, shape);
  if (dtype == DataType::kInt64) {
    for (int64_t i = 0; i < t.size(); ++i) t.data<int64_t>()[i] = in.Int();
  } else if (dtype == DataType::kInt32) {
    for (int64_t i = 0; i < t.size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(in.Int());
  } else if (dtype == DataType::kFloat) {
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = in.Float();
  } else if (dtype == DataType::kString) {
    for (int64_t i = 0; i < t.size(); ++i) t.data<std::string>()[i] = in.Bytes(4);
  } else {
    auto* bytes = static_cast<uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.byte_size(); ++i) bytes[i] = in.Byte();
  }
  return t;
}

onyx::ir::Attribute FuzzAttribute(FuzzBytes& in) {
  onyx::ir::Attribute a;
  a.name = in.Pick(kAttributeNames);
  switch (in.Byte() % 7) {
    case 0:
    case 1: a.type = onyx::ir::AttrType::kInt; a.i = in.Int(); break;
    case 2:
    case 3:
      a.type = onyx::ir::AttrType::kInts;
      for (size_t n = in.Byte() % 9; n > 0; --n) a.ints.push_back(in.Int());
      break;
    case 4: a.type = onyx::ir::AttrType::kFloat; a.f = in.Float(); break;
    case 5: a.type = onyx::ir::AttrType::kString; a.s = in.Pick(kStrings); break;
    default:
      a.type = onyx::ir::AttrType::kTensor;
      a.t = FuzzConstant(in, in.Pick(std::vector<DataType>{DataType::kInt64, DataType::kFloat, DataType::kInt32}));
      break;
  }
  return a;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::pair<std::string, std::string>> rules = onyx::RegisteredInferenceRules();
  if (rules.empty()) return 0;
  FuzzBytes in(data, size);
  const auto& [domain, op_type] = rules[in.Below(rules.size())];

  onyx::ir::Node node;
  node.name = "fuzzed";
  node.op_type = op_type;
  node.domain = domain;
  node.opset = in.Pick(kOpsets);
  const size_t num_inputs = in.Byte() % (kMaxInputs + 1);
  const size_t num_outputs = in.Byte() % (kMaxOutputs + 1);
  for (size_t i = 0; i < num_outputs; ++i) node.outputs.push_back(in.Byte() % 8 == 0 ? "" : "out" + std::to_string(i));
  for (size_t n = in.Byte() % 6; n > 0; --n) node.attributes.push_back(FuzzAttribute(in));

  std::vector<std::shared_ptr<const onyx::TypeInfo>> types;
  std::vector<onyx::Tensor> constant_store;
  constant_store.reserve(num_inputs);
  std::vector<const onyx::Tensor*> constants;
  std::vector<std::vector<Dim>> value_store;
  value_store.reserve(num_inputs);
  std::vector<const std::vector<Dim>*> values;
  for (size_t i = 0; i < num_inputs; ++i) {
    const uint8_t how = in.Byte();
    const bool omitted = how % 8 == 0;
    node.inputs.push_back(omitted ? "" : "in" + std::to_string(i));
    const onyx::Tensor* constant = nullptr;
    const std::vector<Dim>* value = nullptr;
    std::shared_ptr<const onyx::TypeInfo> type;
    if (omitted || how % 8 == 1) {
      // omitted, or of unknown type
    } else if (how % 8 == 2) {
      DataType dtype = in.Bool() ? DataType::kInt64 : in.Pick(kDtypes);
      if (dtype == DataType::kUndefined) dtype = DataType::kInt32;  // a constant has a type
      constant_store.push_back(FuzzConstant(in, dtype));
      constant = &constant_store.back();
      type = onyx::TypeInfo::Tensor(dtype, onyx::KnownDims(constant->shape()));
    } else if (how % 8 == 3) {
      // A shape value (Shape's output, pieces of dims): 1-D int64 of known length.
      value_store.push_back(FuzzDims(in, in.Byte() % kMaxRank));
      value = &value_store.back();
      type = onyx::TypeInfo::Tensor(DataType::kInt64,
                                    std::vector<Dim>{Dim{static_cast<int64_t>(value->size()), ""}});
    } else if (how % 8 == 4) {
      type = onyx::TypeInfo::Tensor(in.Pick(kDtypes));  // rank unknown
    } else if (how % 8 == 5) {
      type = onyx::TypeInfo::Sequence(onyx::TypeInfo::Tensor(in.Pick(kDtypes)));
    } else {
      const DataType dtype = in.Pick(kDtypes);
      type = onyx::TypeInfo::Tensor(dtype, FuzzDims(in, in.Byte() % (kMaxRank + 1)));
    }
    types.push_back(std::move(type));
    constants.push_back(constant);
    values.push_back(value);
  }

  const onyx::InferenceRule* rule = onyx::FindInferenceRule(domain, op_type);
  onyx::InferenceContext ctx(node, std::move(types), std::move(constants));
  ctx.set_input_values(std::move(values));
  try {
    (*rule)(ctx);
    const auto shape_values = onyx::PropagateShapeValues(ctx);
    (void)shape_values;
    for (const auto& out : ctx.outputs())
      if (out) (void)out->ToString();
  } catch (const onyx::Error&) {
  }
  return 0;
}
