"""ONNX Runtime GenAI-style exports, built with onnx's helpers the way those exports look: float16
weights in external data, nodes not in topological order. Three forms: a decoder layer with
com.microsoft RotaryEmbedding, MultiHeadAttention (causal) and SkipSimplifiedLayerNormalization
(a real Llama export of this shape crashed Onyx's session creation); its GroupQueryAttention form
with rotary inside and a KV cache; and a GPT-2 block as ONNX Runtime's transformer optimizer fuses
it in float16 (EmbedLayerNormalization, Attention, SkipLayerNormalization, FastGelu), which Onyx
once refused ("float only"). Each must load and match ONNX Runtime."""
import os
import random

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onyx_harness
from onyx_harness import assert_outputs_close, run_onyx, run_ort

F16 = np.float16


def decoder_layer(folder, shuffle_seed, V=64, D=32, N=4, S=6):
    r = np.random.default_rng(5)
    H = D // N
    w = lambda *shape: (r.standard_normal(shape) * 0.2).astype(F16)  # noqa: E731
    positions = np.arange(32)[:, None] * (1.0 / 10000 ** (np.arange(0, H, 2) / H))[None, :]
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w(V, D), "embed"), (w(D, D), "wq"), (w(D, D), "wk"), (w(D, D), "wv"), (w(D, D), "wo"), (w(D, V), "lm_head"),
        (np.cos(positions).astype(F16), "cos_cache"), (np.sin(positions).astype(F16), "sin_cache"),
        (np.ones(D, F16), "norm1"), (np.ones(D, F16), "norm2")]]
    ms = "com.microsoft"
    n = helper.make_node
    nodes = [
        n("Gather", ["embed", "input_ids"], ["x"]),
        n("SimplifiedLayerNormalization", ["x", "norm1"], ["x_norm"], axis=-1, epsilon=1e-5),
        n("MatMul", ["x_norm", "wq"], ["q"]), n("MatMul", ["x_norm", "wk"], ["k"]), n("MatMul", ["x_norm", "wv"], ["v"]),
        n("RotaryEmbedding", ["q", "position_ids", "cos_cache", "sin_cache"], ["q_rot"], domain=ms, num_heads=N),
        n("RotaryEmbedding", ["k", "position_ids", "cos_cache", "sin_cache"], ["k_rot"], domain=ms, num_heads=N),
        n("MultiHeadAttention", ["q_rot", "k_rot", "v"], ["attn"], domain=ms, num_heads=N, unidirectional=1),
        n("MatMul", ["attn", "wo"], ["o"]),
        n("SkipSimplifiedLayerNormalization", ["o", "x", "norm2"], ["y", "", "", "residual"], domain=ms, epsilon=1e-5),
        n("MatMul", ["y", "lm_head"], ["logits"]),
    ]
    random.Random(shuffle_seed).shuffle(nodes)
    graph = helper.make_graph(
        nodes, "decoder", [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
                           helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT16, ["batch", "sequence", V]),
         helper.make_tensor_value_info("residual", TensorProto.FLOAT16, ["batch", "sequence", D])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])
    model.ir_version = 8
    path = os.path.join(folder, f"decoder_{shuffle_seed}.onnx")
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
              location=f"decoder_{shuffle_seed}.bin", size_threshold=0)
    ids = r.integers(0, V, (1, S)).astype(np.int64)
    return path, {"input_ids": ids, "position_ids": np.arange(S, dtype=np.int64)[None, :]}


def test_genai_style_float16_decoder_layer_matches_onnxruntime():
    for seed in (1, 2):
        path, feeds = decoder_layer(onyx_harness.SCRATCH, seed)
        loaded = onnx.load(path, load_external_data=False)
        assert [t.data_location for t in loaded.graph.initializer] == [TensorProto.EXTERNAL] * 10
        produced_at = {o: i for i, node in enumerate(loaded.graph.node) for o in node.output}
        assert any(produced_at.get(x, -1) > i for i, node in enumerate(loaded.graph.node) for x in node.input), \
            "the nodes should not be in topological order"
        expected = run_ort(path, feeds)
        got = run_onyx(path, feeds)
        assert got[0].dtype == np.float16
        assert_outputs_close(expected, got, rtol=2e-2, atol=2e-2)


def _save_external(model, folder, stem):
    path = os.path.join(folder, f"{stem}.onnx")
    # Weights go to the external file; the small int64 constants (axes) stay inline, as in real
    # exports (ONNX Runtime's shape inference cannot read external axes).
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location=f"{stem}.bin",
              size_threshold=64)
    return path


def gqa_decoder_layer(folder, shuffle_seed, V=64, D=64, N=4, Nkv=2, past=5, S=3):
    """The GQA form of the same layer, as ONNX Runtime GenAI's builder writes it: packed QKV
    projection, GroupQueryAttention with rotary inside and a KV cache, seqlens_k and
    total_sequence_length computed from the attention mask."""
    r = np.random.default_rng(6)
    H = D // N
    w = lambda *shape: (r.standard_normal(shape) * 0.2).astype(F16)  # noqa: E731
    positions = np.arange(32)[:, None] * (1.0 / 10000 ** (np.arange(0, H, 2) / H))[None, :]
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w(V, D), "embed"), (w(D, (N + 2 * Nkv) * H), "wqkv"), (w(D, D), "wo"), (w(D, V), "lm_head"),
        (np.cos(positions).astype(F16), "cos_cache"), (np.sin(positions).astype(F16), "sin_cache"),
        (np.ones(D, F16), "norm1"), (np.ones(D, F16), "norm2"),
        (np.array([1], np.int64), "one_axis"), (np.array(1, np.int64), "one")]]
    ms = "com.microsoft"
    n = helper.make_node
    nodes = [
        n("Gather", ["embed", "input_ids"], ["x"]),
        n("SimplifiedLayerNormalization", ["x", "norm1"], ["x_norm"], axis=-1, epsilon=1e-5),
        n("MatMul", ["x_norm", "wqkv"], ["qkv"]),
        n("ReduceSum", ["attention_mask", "one_axis"], ["mask_sum"], keepdims=0),
        n("Sub", ["mask_sum", "one"], ["mask_last"]),
        n("Cast", ["mask_last"], ["seqlens_k"], to=TensorProto.INT32),
        n("Shape", ["attention_mask"], ["mask_shape"]),
        n("Gather", ["mask_shape", "one"], ["total_len64"], axis=0),
        n("Cast", ["total_len64"], ["total_sequence_length"], to=TensorProto.INT32),
        n("GroupQueryAttention", ["qkv", "", "", "past_key", "past_value", "seqlens_k", "total_sequence_length",
                                  "cos_cache", "sin_cache"], ["attn", "present_key", "present_value"], domain=ms,
          num_heads=N, kv_num_heads=Nkv, do_rotary=1),
        n("MatMul", ["attn", "wo"], ["o"]),
        n("SkipSimplifiedLayerNormalization", ["o", "x", "norm2"], ["y", "", "", "residual"], domain=ms, epsilon=1e-5),
        n("MatMul", ["y", "lm_head"], ["logits"]),
    ]
    random.Random(shuffle_seed).shuffle(nodes)
    f16 = TensorProto.FLOAT16
    graph = helper.make_graph(
        nodes, "gqa_decoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total"]),
         helper.make_tensor_value_info("past_key", f16, ["batch", Nkv, "past", H]),
         helper.make_tensor_value_info("past_value", f16, ["batch", Nkv, "past", H])],
        [helper.make_tensor_value_info("logits", f16, ["batch", "sequence", V]),
         helper.make_tensor_value_info("present_key", f16, ["batch", Nkv, "total", H]),
         helper.make_tensor_value_info("present_value", f16, ["batch", Nkv, "total", H])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])
    model.ir_version = 8
    path = _save_external(model, folder, f"gqa_decoder_{shuffle_seed}")
    feeds = {"input_ids": r.integers(0, V, (1, S)).astype(np.int64),
             "attention_mask": np.ones((1, past + S), np.int64),
             "past_key": (r.standard_normal((1, Nkv, past, H)) * 0.5).astype(F16),
             "past_value": (r.standard_normal((1, Nkv, past, H)) * 0.5).astype(F16)}
    return path, feeds


def gpt2_embed_layer(folder, shuffle_seed, V=64, D=32, N=4, S=7, P=16):
    """A GPT-2 block as ONNX Runtime's transformer optimizer leaves it in float16: int64 ids cast
    to int32, com.microsoft EmbedLayerNormalization (word + position embeddings, no segments),
    Attention (unidirectional, packed QKV weights), SkipLayerNormalization, FastGelu."""
    r = np.random.default_rng(7)
    w = lambda *shape: (r.standard_normal(shape) * 0.2).astype(F16)  # noqa: E731
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w(V, D), "wte"), (w(P, D), "wpe"), (np.ones(D, F16), "ln0_g"), (w(D), "ln0_b"),
        (w(D, 3 * D), "qkv_w"), (w(3 * D), "qkv_b"), (w(D, D), "proj_w"), (w(D), "proj_b"),
        (np.ones(D, F16), "ln1_g"), (w(D), "ln1_b"), (w(D, 4 * D), "fc_w"), (w(4 * D), "fc_b"),
        (w(4 * D, V), "head_w")]]
    ms = "com.microsoft"
    n = helper.make_node
    nodes = [
        n("Cast", ["input_ids"], ["ids32"], to=TensorProto.INT32),
        n("Cast", ["position_ids"], ["pos32"], to=TensorProto.INT32),
        n("EmbedLayerNormalization", ["ids32", "", "wte", "wpe", "", "ln0_g", "ln0_b", "", "pos32"],
          ["h", "mask_index"], domain=ms, epsilon=1e-5),
        n("Attention", ["h", "qkv_w", "qkv_b"], ["attn"], domain=ms, num_heads=N, unidirectional=1),
        n("MatMul", ["attn", "proj_w"], ["proj"]),
        n("SkipLayerNormalization", ["proj", "h", "ln1_g", "ln1_b", "proj_b"], ["h1"], domain=ms, epsilon=1e-5),
        n("MatMul", ["h1", "fc_w"], ["fc"]),
        n("FastGelu", ["fc", "fc_b"], ["act"], domain=ms),
        n("MatMul", ["act", "head_w"], ["logits"]),
    ]
    random.Random(shuffle_seed).shuffle(nodes)
    graph = helper.make_graph(
        nodes, "gpt2_block",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
         helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT16, ["batch", "sequence", V])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])
    model.ir_version = 8
    path = _save_external(model, folder, f"gpt2_block_{shuffle_seed}")
    feeds = {"input_ids": r.integers(0, V, (2, S)).astype(np.int64),
             "position_ids": np.tile(np.arange(S, dtype=np.int64), (2, 1))}
    return path, feeds


def _assert_unsorted_external(path):
    loaded = onnx.load(path, load_external_data=False)
    assert all(t.data_location == TensorProto.EXTERNAL for t in loaded.graph.initializer
               if t.data_type == TensorProto.FLOAT16)
    produced_at = {o: i for i, node in enumerate(loaded.graph.node) for o in node.output}
    assert any(produced_at.get(x, -1) > i for i, node in enumerate(loaded.graph.node) for x in node.input), \
        "the nodes should not be in topological order"


def test_genai_style_float16_gqa_decoder_with_kv_cache_matches_onnxruntime():
    for seed in (3, 4):
        path, feeds = gqa_decoder_layer(onyx_harness.SCRATCH, seed)
        _assert_unsorted_external(path)
        expected = run_ort(path, feeds)
        got = run_onyx(path, feeds)
        assert [g.dtype for g in got] == [np.float16] * 3
        assert_outputs_close(expected, got, rtol=2e-2, atol=2e-2)


def test_gpt2_float16_embed_layer_normalization_block_matches_onnxruntime():
    for seed in (5, 6):
        path, feeds = gpt2_embed_layer(onyx_harness.SCRATCH, seed)
        _assert_unsorted_external(path)
        expected = run_ort(path, feeds)
        got = run_onyx(path, feeds)
        assert got[0].dtype == np.float16
        assert_outputs_close(expected, got, rtol=2e-2, atol=2e-2)
