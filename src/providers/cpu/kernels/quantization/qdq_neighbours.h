// Whether a float node sits inside a QDQ island: fed by DequantizeLinear or feeding
// QuantizeLinear. Such a node must compute exactly (a direct or GEMM convolution, never
// Winograd): its result is rounded to a quantized grid, and Winograd's transform rounding moves
// values across grid points, so quantized outputs stop matching ONNX Runtime's.
#pragma once

namespace onyx {

class KernelInfo;
namespace ir {
class Graph;
class Node;
}  // namespace ir

// Looks through layout reorders (ReorderToNchwc / ReorderFromNchwc) and pure data movement
// between the node and its neighbours. False when the kernel has no graph.
bool IsBetweenQuantizeNodes(const KernelInfo& info);
// The same for a node of `graph` (onyx explain names the convolution engine this decides).
bool IsBetweenQuantizeNodes(const ir::Graph& graph, const ir::Node& node);

}  // namespace onyx
