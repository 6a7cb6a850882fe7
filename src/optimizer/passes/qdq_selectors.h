// What the QDQ fusion passes share: recognising the DequantizeLinear nodes that feed an op and
// the QuantizeLinear node that reads it (ONNX Runtime's QDQ node groups), the conditions ORT
// puts on them, and the graph edits that replace a group with one integer node.
//
// A node group is DQ(inputs) -> target -> Q(output). As in ONNX Runtime (where
// EnsureUniqueDQForNodeUnit first gives every consumer of a shared DQ its own copy), a DQ read
// elsewhere too stays for its other readers: the fused node reads the DQ's integer input, and the
// DQ is removed only once nothing reads it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "optimizer/graph_editor.h"
#include "optimizer/pass.h"

namespace onyx::qdq {

// The quantization parameters a DQ reads or a Q writes with.
struct QuantParams {
  std::string scale;
  std::string zero_point;  // "" when omitted (zero of `type`)
  DataType type = DataType::kUndefined;  // the integer type (DQ input, Q output)
  bool per_tensor = true;                // one-element scale (and zero point)
  int64_t scale_size = 1;
  int64_t axis = 1;                      // the DQ/Q axis attribute (per-axis only)
};

// Whether dt is uint8 or int8: the types every integer kernel takes (int16, uint16, int4 and
// float8 groups are left alone, as ONNX Runtime leaves them without 16-bit support).
bool IsQuant8(DataType dt);

// ONNX Runtime's QDQIsInt8Allowed: only on ARM do int8 activations fuse into QLinearConv /
// QLinearMatMul; elsewhere ORT first turns int8 activation Q -> DQ pairs into uint8 ones
// (QdqS8ToU8, qdq_s8_to_u8.cc) and leaves the int8 Conv / MatMul groups that remain float.
// Onyx follows it so that quantized models give ORT's results on the same machine.
#if defined(__aarch64__) || defined(_M_ARM64) || defined(__arm__)
constexpr bool kInt8ActivationsAllowed = true;
#else
constexpr bool kInt8ActivationsAllowed = false;
#endif

// The DequantizeLinear node making `value` whose parameters qualify (default domain, opset >= 10,
// no block_size, constant float scale, constant zero point of the input's 8-bit type); null
// otherwise. `params` gets its parameters.
ir::Node* DequantizeOf(GraphEditor& editor, const std::string& value, QuantParams* params);
// Whether a Q node qualifies the same way (as the single reader of a target output).
bool ReadQuantize(GraphEditor& editor, const ir::Node& q, QuantParams* params);
// The QuantizeLinear node that is the only reader of `value` (not a graph output) when it
// qualifies; null otherwise.
ir::Node* SoleQuantizeReader(GraphEditor& editor, const std::string& value, QuantParams* params);
// Whether a node is still in the graph (not removed by an earlier rewrite of the same pass).
bool Live(GraphEditor& editor, const ir::Node* node);
// Whether the graph has a QuantizeLinear or DequantizeLinear node: the QDQ passes rewrite
// nothing without one, and return at once (Live needs the editor's index; most graphs are float).
bool HasQdqNodes(const GraphEditor& editor);
// Whether a value is read by no node and is no graph output.
bool Unused(GraphEditor& editor, const std::string& value);

// Whether both parameter sets are constant one-element scales and zero points with equal values
// and the same zero-point type (ONNX Runtime's IsQDQPairSupported).
bool SameScalarParams(GraphEditor& editor, const QuantParams& a, const QuantParams& b);
// The scale's single value (constant one-element float scale), or nullopt.
std::optional<double> ScalarScale(GraphEditor& editor, const QuantParams& p);

// The zero point's name, or, when the DQ/Q omitted it, a new zero initializer of p.type.
std::string ZeroPointOrZero(GraphEditor& editor, const QuantParams& p);

// Removes `dqs` (DequantizeLinear nodes whose outputs the fused node no longer reads) when
// nothing else reads them.
void RemoveUnusedDequantizes(GraphEditor& editor, const std::vector<ir::Node*>& dqs);

// Copies the attributes named in `names` (those present) from one node to another.
void CopyAttributes(const ir::Node& from, ir::Node* to, const std::vector<std::string>& names);

}  // namespace onyx::qdq
