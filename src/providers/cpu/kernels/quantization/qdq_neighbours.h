// Whether a float node sits inside a QDQ island: fed by DequantizeLinear or feeding
// QuantizeLinear. Such a node must compute exactly (a direct or GEMM convolution, never
// Winograd): its result is rounded to a quantized grid, and Winograd's transform rounding moves
// values across grid points, so quantized outputs stop matching ONNX Runtime's.
#pragma once

namespace onyx {

class KernelInfo;

// Looks through layout reorders (ReorderToNchwc / ReorderFromNchwc) and pure data movement
// between the node and its neighbours. False when the kernel has no graph.
bool IsBetweenQuantizeNodes(const KernelInfo& info);

}  // namespace onyx
