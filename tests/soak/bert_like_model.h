// A small BERT-like encoder built in C++ (token embedding, LayerNormalization, multi-head
// self-attention through Reshape/Transpose/MatMul/Softmax, a Relu FFN, residual Adds) over
// input_ids [batch, sequence] with both dims symbolic: its intermediates grow with sequence^2
// (attention scores), as a real encoder's do, for the random-shape memory test.
#pragma once

#include <string>

#include "model_builder.h"

namespace onyx::soak {

struct BertLikeSize {
  int64_t vocab = 1000, hidden = 64, heads = 4, ffn = 256, layers = 2;
};

inline Tensor Ramp(const Shape& shape, float span = 1.0f) {
  const int64_t n = ShapeSize(shape);
  return test::FloatTensor(shape, -span / 2, span / static_cast<float>(n));
}

inline std::string BertLikeModel(const BertLikeSize& z = {}) {
  test::ModelBuilder b;
  b.Input("input_ids", DataType::kInt64, {-1, -1}).Output("h" + std::to_string(z.layers), DataType::kFloat, {-1, -1, z.hidden});
  const int64_t head_dim = z.hidden / z.heads;
  b.Initializer("emb", Ramp({z.vocab, z.hidden}));
  b.Initializer("gamma", test::FloatTensor({z.hidden}, 1.0f, 0.0f));
  b.Initializer("beta", test::FloatTensor({z.hidden}, 0.0f, 0.0f));
  b.Initializer("split_heads", Tensor::FromVector<int64_t>(DataType::kInt64, {4}, {0, 0, z.heads, head_dim}));
  b.Initializer("merge_heads", Tensor::FromVector<int64_t>(DataType::kInt64, {3}, {0, 0, z.hidden}));
  auto layer_norm = [&](const std::string& in, const std::string& out) {
    b.Node("LayerNormalization", {in, "gamma", "beta"}, {out}).attributes.push_back(test::IntAttr("axis", -1));
  };
  b.Node("Gather", {"emb", "input_ids"}, {"e"});
  layer_norm("e", "h0");
  for (int64_t l = 0; l < z.layers; ++l) {
    const std::string p = "l" + std::to_string(l) + "_", in = "h" + std::to_string(l);
    auto heads = [&](const std::string& name, std::vector<int64_t> perm) {
      b.Initializer(p + "w" + name, Ramp({z.hidden, z.hidden}, 0.2f));
      b.Node("MatMul", {in, p + "w" + name}, {p + name});
      b.Node("Reshape", {p + name, "split_heads"}, {p + name + "4"});
      b.Node("Transpose", {p + name + "4"}, {p + name + "h"}).attributes.push_back(test::IntsAttr("perm", std::move(perm)));
    };
    heads("q", {0, 2, 1, 3});
    heads("k", {0, 2, 3, 1});
    heads("v", {0, 2, 1, 3});
    b.Node("MatMul", {p + "qh", p + "kh"}, {p + "scores"});
    b.Node("Softmax", {p + "scores"}, {p + "probs"}).attributes.push_back(test::IntAttr("axis", -1));
    b.Node("MatMul", {p + "probs", p + "vh"}, {p + "ctx"});
    b.Node("Transpose", {p + "ctx"}, {p + "ctx4"}).attributes.push_back(test::IntsAttr("perm", {0, 2, 1, 3}));
    b.Node("Reshape", {p + "ctx4", "merge_heads"}, {p + "att"});
    b.Initializer(p + "wo", Ramp({z.hidden, z.hidden}, 0.2f));
    b.Node("MatMul", {p + "att", p + "wo"}, {p + "o"});
    b.Node("Add", {p + "o", in}, {p + "r1"});
    layer_norm(p + "r1", p + "n1");
    b.Initializer(p + "w1", Ramp({z.hidden, z.ffn}, 0.2f));
    b.Initializer(p + "w2", Ramp({z.ffn, z.hidden}, 0.2f));
    b.Node("MatMul", {p + "n1", p + "w1"}, {p + "f1"});
    b.Node("Relu", {p + "f1"}, {p + "f1r"});
    b.Node("MatMul", {p + "f1r", p + "w2"}, {p + "f2"});
    b.Node("Add", {p + "f2", p + "n1"}, {p + "r2"});
    layer_norm(p + "r2", "h" + std::to_string(l + 1));
  }
  return b.Bytes();
}

}  // namespace onyx::soak
