#include "optimizer/passes/half_body_ops.h"

#include <map>
#include <utility>

namespace onyx {
namespace {

using OpTable = std::map<std::pair<std::string, std::string>, HalfBodyOp>;

OpTable MakeTable() {
  OpTable table;
  auto math = [&](const std::string& domain, std::initializer_list<const char*> ops) {
    for (const char* op : ops) table[{domain, op}] = HalfBodyOp{true, {}};
  };
  auto movement = [&](std::initializer_list<const char*> ops) {
    for (const char* op : ops) table[{"", op}] = HalfBodyOp{false, {}};
  };
  math("", {"Conv", "ConvTranspose", "MatMul", "Gemm", "Einsum",
            "Add", "Sub", "Mul", "Div", "Sum", "Mean", "Min", "Max", "Neg", "Abs", "Reciprocal", "Sqrt", "Exp", "Log",
            "Erf", "Sin", "Cos", "Tan", "Floor", "Ceil", "Sign",
            "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
            "Softplus", "Softsign", "Gelu", "Mish", "ThresholdedRelu", "Clip", "Softmax", "LogSoftmax", "Hardmax",
            "BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization",
            "LpNormalization", "SimplifiedLayerNormalization", "MeanVarianceNormalization",
            "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool",
            "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceSumSquare"});
  math("com.microsoft", {"FusedConv", "FusedMatMul", "TransposeMatMul", "Gelu", "FastGelu", "BiasGelu", "QuickGelu",
                         "BiasAdd", "BiasSoftmax", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
                         "Attention", "MultiHeadAttention"});
  table[{"", "Pow"}] = HalfBodyOp{true, {1}};
  table[{"", "Resize"}] = HalfBodyOp{true, {1, 2}};
  table[{"", "Upsample"}] = HalfBodyOp{true, {1}};
  movement({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity", "Concat", "Split", "Slice", "Gather",
            "GatherElements", "GatherND", "Expand", "Tile", "Pad", "DepthToSpace", "SpaceToDepth", "Where"});
  table[{"", "Dropout"}] = HalfBodyOp{false, {1}};
  return table;
}

}  // namespace

const HalfBodyOp* FindHalfBodyOp(const std::string& domain, const std::string& op_type) {
  static const OpTable table = MakeTable();
  auto it = table.find({domain, op_type});
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace onyx
