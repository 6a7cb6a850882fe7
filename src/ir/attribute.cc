#include "ir/attribute.h"

#include "ir/graph.h"

namespace onyx::ir {

const char* AttrTypeName(AttrType t) {
  switch (t) {
    case AttrType::kFloat: return "float";
    case AttrType::kInt: return "int";
    case AttrType::kString: return "string";
    case AttrType::kTensor: return "tensor";
    case AttrType::kGraph: return "graph";
    case AttrType::kFloats: return "floats";
    case AttrType::kInts: return "ints";
    case AttrType::kStrings: return "strings";
    case AttrType::kTensors: return "tensors";
    case AttrType::kGraphs: return "graphs";
    case AttrType::kSparseTensor: return "sparse_tensor";
    case AttrType::kSparseTensors: return "sparse_tensors";
    case AttrType::kTypeProto: return "type_proto";
    case AttrType::kTypeProtos: return "type_protos";
    case AttrType::kUndefined: break;
  }
  return "undefined";
}

Attribute Attribute::Clone() const {
  Attribute a = *this;
  if (g) a.g = std::shared_ptr<Graph>(g->Clone());
  for (auto& sub : a.graphs) sub = std::shared_ptr<Graph>(sub->Clone());
  return a;
}

}  // namespace onyx::ir
