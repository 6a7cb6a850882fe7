// A node attribute, as ONNX's AttributeProto, with graph attributes held as IR subgraphs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "onyx/tensor.h"
#include "onyx/value.h"

namespace onyx::ir {

class Graph;

// Numbering follows AttributeProto.AttributeType.
enum class AttrType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kSparseTensors = 12,
  kTypeProto = 13,
  kTypeProtos = 14,
};

const char* AttrTypeName(AttrType t);

struct Attribute {
  std::string name;
  AttrType type = AttrType::kUndefined;
  // Inside a function body: the name of the caller's attribute this one stands for.
  std::string ref_attr_name;

  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  Tensor t;  // also holds sparse tensors, made dense at load
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::vector<std::shared_ptr<const TypeInfo>> types;  // TYPE_PROTO(S)

  // A deep copy; subgraphs are cloned too.
  Attribute Clone() const;
};

}  // namespace onyx::ir
