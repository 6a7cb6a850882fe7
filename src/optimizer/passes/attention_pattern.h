// What the attention fusions share: the scaled dot-product core that torch.onnx exports of
// Hugging Face eager attention (BERT, ViT, GPT-2) produce, from the per-head Reshape+Transpose
// of Q, K and V to the merged-heads Reshape, and its rewrite into com.microsoft.Attention with
// ONNX Runtime's semantics. The passes match the Q/K/V projections themselves (separate
// MatMul+Add, or one fused projection and a Split) and call into this.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "optimizer/pass.h"
#include "optimizer/passes/attention_shapes.h"

namespace onyx::attention {

// Reshape [batch, seq, heads * head_size] -> [batch, seq, heads, head_size], then Transpose.
struct HeadSplit {
  ir::Node* reshape = nullptr;
  ir::Node* transpose = nullptr;
  std::string projected;  // the Reshape's input
  std::vector<DimExpr> shape;
};

struct AttentionMatch {
  ir::Node* softmax = nullptr;
  ir::Node* qk_matmul = nullptr;
  ir::Node* ctx_matmul = nullptr;
  ir::Node* merge_transpose = nullptr;
  ir::Node* merge_reshape = nullptr;
  std::vector<ir::Node*> score_nodes;  // scaling, padding mask Add and causal Where
  HeadSplit q, k, v;
  std::vector<DimExpr> merge_shape;
  int64_t num_heads = 0;
  int64_t head_size = 0;
  double scale = 1.0;  // product of the scalings between Q.K^T and Softmax
  // Key padding mask [batch, kv_sequence] (the source of the extended-mask chain) and what a
  // masked position adds to the scaled scores.
  std::string mask_source;
  double mask_filter = 0.0;
  // Causal Where(condition, scores, fill): condition and the fill as seen after the scaling.
  ir::Node* causal_where = nullptr;
  double causal_fill = 0.0;
  std::string output;  // the merged heads, [batch, seq, hidden]

  int64_t hidden() const { return num_heads * head_size; }
  std::vector<ir::Node*> Nodes() const;
};

// Matches the core that ends in `softmax`. Head counts, perms, the scaling and the mask chains
// are checked; batch/sequence dims of the Reshapes are checked later by CheckShapes, once the
// pass has linked the projections' dims.
std::optional<AttentionMatch> MatchCore(GraphEditor& editor, ir::Node* softmax);

// Links the core's dims (Transposes and MatMuls) into `dims`.
void LinkCore(const AttentionMatch& m, DimEquivalence& dims);

// With the projections linked (each projected value's dims 0 and 1 to `input`'s): every head
// split keeps batch and sequence and splits the last dim, the merge Reshape restores
// [batch, seq, hidden], the causal condition is a lower-triangular [seq, seq] slice and the
// padding mask is [batch, seq] of `input`.
bool CheckShapes(GraphEditor& editor, const AttentionMatch& m, DimEquivalence& dims, const std::string& input);

// Whether a provider of the session has the com.microsoft.Attention kernel (or kernels are not
// required, as for `onyx optimize`).
bool AttentionKernelAvailable(const PassContext& ctx);

// Whether `input` is a float tensor of rank 3 with last dim `hidden_in` (when known).
bool IsAttentionInput(GraphEditor& editor, const std::string& input, int64_t hidden_in);

// The nodes to remove when `pattern`'s result is produced by a new node instead: the pattern and
// the shape/mask computations nothing else reads. Nullopt when some pattern node must stay (an
// intermediate read elsewhere or a graph output). Values in `keep` (the new node's inputs) stay.
std::optional<std::vector<ir::Node*>> RemovableNodes(GraphEditor& editor, const std::vector<ir::Node*>& pattern,
                                                     const std::string& result, const std::set<std::string>& keep);

// Removes `removable` and adds the Attention node producing m.output from `input`, the packed
// [hidden_in, 3 * hidden] weights and [3 * hidden] bias (may be empty), with the padding mask
// cast to int32 as a 2-D mask_index and unidirectional = 1 for a causal mask.
ir::Node* EmitAttention(PassContext& ctx, const AttentionMatch& m, const std::string& input, const std::string& weights,
                        const std::string& bias, const std::vector<ir::Node*>& removable);

}  // namespace onyx::attention
