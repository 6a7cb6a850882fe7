#include "node_cost.h"

#include <string>

namespace onyx::cli {
namespace {

double Product(const std::vector<int64_t>& dims, size_t from = 0) {
  double p = 1;
  for (size_t i = from; i < dims.size(); ++i) {
    if (dims[i] < 0) return -1;
    p *= static_cast<double>(dims[i]);
  }
  return p;
}

bool OneOf(const std::string& op, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (op == n) return true;
  return false;
}

}  // namespace

double NodeFlops(const TraceEvent& e) {
  const auto& in = e.inputs;
  const auto& out = e.outputs;
  if (in.empty() || out.empty()) return -1;
  const double y = Product(out[0].dims);
  if (y < 0) return -1;
  // Weight index: QLinearConv/QLinearMatMul carry scales and zero points between operands.
  const bool qlinear = e.op == "QLinearConv" || e.op == "QLinearMatMul";
  const size_t w_index = qlinear ? 3 : 1;
  if (OneOf(e.op, {"Conv", "FusedConv", "NchwcConv", "QLinearConv", "ConvInteger"})) {
    // Each output element is a dot product over C/group * kh * kw: W is [M, C/group, kh, kw].
    if (in.size() <= w_index || in[w_index].dims.size() < 3) return -1;
    const double taps = Product(in[w_index].dims, 1);
    return taps < 0 ? -1 : 2 * y * taps;
  }
  if (e.op == "ConvTranspose") {
    // Each input element scatters into M/group * kh * kw outputs: W is [C, M/group, kh, kw].
    if (in.size() < 2 || in[1].dims.size() < 3) return -1;
    const double x = Product(in[0].dims), taps = Product(in[1].dims, 1);
    return x < 0 || taps < 0 ? -1 : 2 * x * taps;
  }
  if (OneOf(e.op, {"MatMul", "FusedMatMul", "MatMulInteger", "QLinearMatMul"})) {
    // A's last dim is K (FusedMatMul's transA is not in the file: the count assumes none).
    const auto& a = in[0].dims;
    if (a.empty() || a.back() < 0) return -1;
    return 2 * y * static_cast<double>(a.back());
  }
  if (e.op == "Gemm") {
    // Y is [M, N]; K is A's dim that is not M (transA is not in the file).
    const auto& a = in[0].dims;
    if (a.size() != 2 || out[0].dims.size() != 2) return -1;
    const double k = static_cast<double>(a[0] == out[0].dims[0] ? a[1] : a[0]);
    return 2 * y * k;
  }
  if (e.op == "Attention") {
    // com.microsoft.Attention: x [B, S, H] times weights [H, 3H'], then Q K^T and P V, each
    // 2 * B * S * S * H' (past/present ignored).
    if (in.size() < 2 || in[0].dims.size() != 3 || in[1].dims.size() != 2) return -1;
    const double b = in[0].dims[0], s = in[0].dims[1], h = in[0].dims[2], w_out = in[1].dims[1];
    const double hidden = w_out / 3;
    return 2 * b * s * h * w_out + 4 * b * s * s * hidden;
  }
  if (e.op == "MultiHeadAttention" || e.op == "GroupQueryAttention") {
    // Q [B, S, H], K [B, S_kv, H_kv]: Q K^T and P V over all heads, 2 * B * S * S_kv * H each.
    if (in.size() < 2 || in[0].dims.size() != 3 || in[1].dims.size() < 3) return -1;
    const double b = in[0].dims[0], s = in[0].dims[1], h = in[0].dims[2];
    const double s_kv = in[1].dims.size() == 3 ? in[1].dims[1] : in[1].dims[2];
    return 4 * b * s * s_kv * h;
  }
  return -1;
}

double NodeBytes(const TraceEvent& e) {
  if (e.activation_bytes < 0 || e.output_bytes < 0) return -1;
  return static_cast<double>(e.activation_bytes + std::max<int64_t>(e.parameter_bytes, 0) + e.output_bytes);
}

}  // namespace onyx::cli
