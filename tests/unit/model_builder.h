// Builds small models in C++ for unit tests, through the IR and the ONNX writer, so tests need
// neither Python nor files from elsewhere.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/model_writer.h"

namespace onyx::test {

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17, int64_t ir_version = 8) {
    model_.ir_version = ir_version;
    model_.opset_imports[""] = opset;
    model_.graph = std::make_shared<ir::Graph>();
    model_.graph->name = "test_graph";
  }

  // dims: -1 for a symbolic dim named "d<i>".
  ModelBuilder& Input(const std::string& name, DataType dtype, const std::vector<int64_t>& dims) {
    model_.graph->inputs.push_back({name, Type(dtype, dims), ""});
    return *this;
  }
  ModelBuilder& Output(const std::string& name, DataType dtype, const std::vector<int64_t>& dims) {
    model_.graph->outputs.push_back({name, Type(dtype, dims), ""});
    return *this;
  }
  ModelBuilder& Initializer(const std::string& name, Tensor value) {
    model_.graph->initializers[name] = std::move(value);
    return *this;
  }
  ir::Node& Node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                 const std::string& domain = "") {
    auto node = std::make_unique<ir::Node>();
    node->op_type = op;
    node->domain = domain;
    node->name = op + "_" + std::to_string(model_.graph->nodes.size());
    node->inputs = std::move(inputs);
    node->outputs = std::move(outputs);
    return *model_.graph->AddNode(std::move(node));
  }
  ir::Model& model() { return model_; }
  std::string Bytes() const { return SerializeModel(model_); }

  static std::shared_ptr<const TypeInfo> Type(DataType dtype, const std::vector<int64_t>& dims) {
    std::vector<Dim> shape;
    for (size_t i = 0; i < dims.size(); ++i)
      // std::string("d").append(...), not "d" + ...: g++ 12's -Wrestrict misreads the latter.
      shape.push_back(dims[i] >= 0 ? Dim{dims[i], ""} : Dim{-1, std::string("d").append(std::to_string(i))});
    return TypeInfo::Tensor(dtype, shape);
  }

 private:
  ir::Model model_;
};

inline Tensor FloatTensor(const Shape& shape, float start = 0.0f, float step = 1.0f) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i);
  return t;
}

// Float values in [-0.5, 0.5) from a linear congruential sequence: varied, reproducible data for
// checks against a reference computed in double.
inline Tensor PatternTensor(const Shape& shape, uint32_t seed) {
  Tensor t(DataType::kFloat, shape);
  uint32_t state = seed;
  for (int64_t i = 0; i < t.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return t;
}

// Attributes for ModelBuilder::Node(...).attributes.
inline ir::Attribute IntAttr(const std::string& name, int64_t v) {
  ir::Attribute a{name, ir::AttrType::kInt};
  a.i = v;
  return a;
}

inline ir::Attribute FloatAttr(const std::string& name, float v) {
  ir::Attribute a{name, ir::AttrType::kFloat};
  a.f = v;
  return a;
}

inline ir::Attribute IntsAttr(const std::string& name, std::vector<int64_t> v) {
  ir::Attribute a{name, ir::AttrType::kInts};
  a.ints = std::move(v);
  return a;
}

inline ir::Attribute StringAttr(const std::string& name, const std::string& v) {
  ir::Attribute a{name, ir::AttrType::kString};
  a.s = v;
  return a;
}

}  // namespace onyx::test
