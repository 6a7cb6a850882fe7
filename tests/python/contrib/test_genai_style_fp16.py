"""An ONNX Runtime GenAI-style decoder layer, built with onnx's helpers the way those exports
look: float16 weights in external data, nodes not in topological order, com.microsoft
RotaryEmbedding, MultiHeadAttention (causal) and SkipSimplifiedLayerNormalization. A real Llama
export of this shape crashed Onyx's session creation; it must load and match ONNX Runtime."""
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
