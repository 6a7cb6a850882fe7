// Inference rules of elementwise ops: same-shape unary ops, broadcasting binary/variadic ops,
// comparisons (bool results) and Where.
#include "ops/shape_inference.h"

namespace onyx {
namespace {

void Broadcast(InferenceContext& ctx, DataType dtype) {
  std::vector<const std::vector<Dim>*> dims;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) dims.push_back(ctx.input_dims(i));
  ctx.set_output(0, dtype, BroadcastDims(dims));
}

void BroadcastSameType(InferenceContext& ctx) {
  if (ctx.opset() < 7 && (ctx.node().op_type == "Add" || ctx.node().op_type == "Sub" || ctx.node().op_type == "Mul" ||
                          ctx.node().op_type == "Div"))
    return SameAsInput0(ctx);  // legacy broadcast: output has input 0's shape
  Broadcast(ctx, ctx.input_dtype(0));
}

void BroadcastToBool(InferenceContext& ctx) { Broadcast(ctx, DataType::kBool); }

void SameShapeBool(InferenceContext& ctx) {
  const auto* dims = ctx.input_dims(0);
  ctx.set_output(0, DataType::kBool, dims ? std::optional<std::vector<Dim>>(*dims) : std::nullopt);
}

void WhereRule(InferenceContext& ctx) {
  ctx.set_output(0, ctx.input_dtype(1), BroadcastDims({ctx.input_dims(0), ctx.input_dims(1), ctx.input_dims(2)}));
}

void DropoutRule(InferenceContext& ctx) {
  SameAsInput0(ctx);
  const auto* dims = ctx.input_dims(0);
  if (ctx.num_outputs() > 1)
    ctx.set_output(1, DataType::kBool, dims ? std::optional<std::vector<Dim>>(*dims) : std::nullopt);
}

const char* kUnary[] = {"Abs",  "Neg",      "Reciprocal", "Floor",   "Ceil",       "Round",           "Sign",
                        "Sqrt", "Exp",      "Log",        "Erf",     "Sin",        "Cos",             "Tan",
                        "Asin", "Acos",     "Atan",       "Sinh",    "Cosh",       "Asinh",           "Acosh",
                        "Atanh", "Relu",    "LeakyRelu",  "Elu",     "Selu",       "Celu",            "Sigmoid",
                        "HardSigmoid", "HardSwish", "Softplus", "Softsign", "ThresholdedRelu", "Gelu", "Mish",
                        "Shrink", "Tanh",   "Clip",       "Identity", "Softmax",   "LogSoftmax",      "Hardmax",
                        "LRN",  "InstanceNormalization", "MeanVarianceNormalization", "LpNormalization",
                        "CumSum", "CumProd", "BitwiseNot", "PRelu", "Swish", "RMSNormalization", "Trilu"};
const char* kBinary[] = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean",
                         "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
const char* kCompare[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};

struct Registrations {
  Registrations() {
    for (const char* op : kUnary) RegisterInferenceRule("", op, SameAsInput0);
    for (const char* op : kBinary) RegisterInferenceRule("", op, BroadcastSameType);
    for (const char* op : kCompare) RegisterInferenceRule("", op, BroadcastToBool);
    for (const char* op : {"Not", "IsNaN", "IsInf"}) RegisterInferenceRule("", op, SameShapeBool);
    RegisterInferenceRule("", "Where", WhereRule);
    RegisterInferenceRule("", "Dropout", DropoutRule);
    RegisterInferenceRule("", "BatchNormalization", SameAsInput0);
    RegisterInferenceRule("", "LayerNormalization", SameAsInput0);
    RegisterInferenceRule("", "GroupNormalization", SameAsInput0);
  }
} registrations;

}  // namespace
}  // namespace onyx
