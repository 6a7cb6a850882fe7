"""A float16 twin gets the fusions of its float32 model. The float16 converter
(onnxruntime.transformers.float16) writes value_info whose dims it could not name as fresh
symbols (unk__N); Onyx merges those with the dims its own inference derives, so a fusion that
must prove two dims equal (GPT-2's token + position embeddings Add and LayerNormalization ->
SkipLayerNormalization: the positions are Range(0, sequence)) still can."""
import collections
import os
import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx_harness
from onyx_harness import ONYX_BIN, _work_dir, run_onyx, run_ort, save_model

HIDDEN, VOCAB, POSITIONS = 16, 50, 32


def _gpt2_embeddings():
    """input_ids [batch, sequence] -> wte[ids] + wpe[Range(0, sequence)] -> LayerNormalization -> y."""
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32), "wte"),
             numpy_helper.from_array(rng.standard_normal((POSITIONS, HIDDEN)).astype(np.float32), "wpe"),
             numpy_helper.from_array((1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32), "gamma"),
             numpy_helper.from_array((0.1 * rng.standard_normal(HIDDEN)).astype(np.float32), "beta"),
             numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "axis0")]
    nodes = [helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
             helper.make_node("Gather", ["ids_shape", "one"], ["seq"], axis=0),
             helper.make_node("Range", ["zero", "seq", "one"], ["positions"]),
             helper.make_node("Unsqueeze", ["positions", "axis0"], ["position_ids"]),
             helper.make_node("Gather", ["wte", "input_ids"], ["tokens"], axis=0),
             helper.make_node("Gather", ["wpe", "position_ids"], ["placed"], axis=0),
             helper.make_node("Add", ["tokens", "placed"], ["embedded"]),
             helper.make_node("LayerNormalization", ["embedded", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5)]
    graph = helper.make_graph(
        nodes, "gpt2_embeddings", [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", HIDDEN])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _with_fresh_symbols(model):
    """The value_info the float16 converter writes for this graph: fresh symbols for the dims it
    cannot tie to the inputs."""
    vi = helper.make_tensor_value_info
    model.graph.value_info.extend([
        vi("positions", TensorProto.INT64, ["unk__0"]),
        vi("position_ids", TensorProto.INT64, [1, "unk__0"]),
        vi("tokens", TensorProto.FLOAT, ["batch", "sequence", HIDDEN]),
        vi("placed", TensorProto.FLOAT, [1, "unk__0", HIDDEN]),
        vi("embedded", TensorProto.FLOAT, ["batch", "unk__1", HIDDEN])])
    return model


def _optimized_counts(path):
    out = os.path.join(_work_dir(), "half_fusions_optimized.onnx")
    proc = subprocess.run([ONYX_BIN, "optimize", path, "-o", out, "--require-kernels"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import onnx
    counts = collections.Counter(n.op_type for n in onnx.load(out).graph.node)
    counts.pop("Cast", None)  # the float16 twin's boundary Casts are not what is compared
    return counts


def _feeds():
    return {"input_ids": np.random.default_rng(5).integers(0, VOCAB, size=(2, 7), dtype=np.int64)}


def test_float32_model_fuses_the_embeddings_layer_norm():
    counts = _optimized_counts(save_model(_gpt2_embeddings(), "gpt2_embeddings_f32.onnx"))
    assert counts["SkipLayerNormalization"] == 1 and counts["LayerNormalization"] == 0, dict(counts)


def test_fresh_value_info_symbols_keep_the_fusion():
    plain = _optimized_counts(save_model(_gpt2_embeddings(), "gpt2_embeddings_f32.onnx"))
    path = save_model(_with_fresh_symbols(_gpt2_embeddings()), "gpt2_embeddings_unk.onnx")
    assert _optimized_counts(path) == plain
    onyx_harness.require_ort()
    onyx_harness.assert_outputs_close(run_ort(path, _feeds()), run_onyx(path, _feeds()), rtol=1e-4, atol=1e-4)


def test_float16_twin_gets_the_float32_fusions():
    pytest.importorskip("onnxruntime.transformers.float16")
    from onnxruntime.transformers.float16 import convert_float_to_float16
    plain = _optimized_counts(save_model(_gpt2_embeddings(), "gpt2_embeddings_f32.onnx"))
    half = convert_float_to_float16(_gpt2_embeddings(), keep_io_types=True)
    assert any(d.dim_param.startswith("unk__") for v in half.graph.value_info for d in v.type.tensor_type.shape.dim)
    path = save_model(half, "gpt2_embeddings_f16.onnx")
    assert _optimized_counts(path) == plain
    got, ref = run_onyx(path, _feeds()), run_ort(path, _feeds())
    onyx_harness.assert_outputs_close(ref, got, rtol=2e-2, atol=2e-2)
