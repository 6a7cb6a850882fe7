// Whether a float node sits inside a QDQ island: fed by DequantizeLinear or feeding
// QuantizeLinear. Such a node must compute exactly (a direct or GEMM convolution, never
// Winograd): its result is rounded to a quantized grid, and Winograd's transform rounding moves
// values across grid points, so quantized outputs stop matching ONNX Runtime's.
#pragma once

namespace onyx {

class GraphFacts;
class KernelInfo;
namespace ir {
class Graph;
class Node;
}  // namespace ir

// Looks through layout reorders (ReorderToNchwc / ReorderFromNchwc) and pure data movement
// between the node and its neighbours. False when the kernel has no graph.
bool IsBetweenQuantizeNodes(const KernelInfo& info);
// The same for a node of `graph` (onyx explain names the convolution engine this decides); with
// `facts`, the graph's producer and consumer maps are built once for all its nodes.
bool IsBetweenQuantizeNodes(const ir::Graph& graph, const ir::Node& node, GraphFacts* facts = nullptr);

// Whether the kernel's graph, or a graph enclosing it (for an If / Loop / Scan body), quantizes
// values: it holds a QuantizeLinear, a DynamicQuantizeLinear, an integer product (ConvInteger,
// MatMulInteger, MatMulIntegerToFloat) or a fused op made of them (QLinear*, DynamicQuantize*).
// Its float activations are then computed as ONNX Runtime computes them (a Sigmoid's last bit
// moves a dynamic range or a code, and every layer after it). False when the kernel has no graph.
bool InQuantizedGraph(const KernelInfo& info);

}  // namespace onyx
