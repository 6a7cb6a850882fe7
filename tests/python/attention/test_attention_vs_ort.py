"""Attention (opset 23) and RotaryEmbedding (opset 23) against ONNX Runtime 1.30 on larger,
mixed configurations than the conformance data, with Onyx running on several threads."""
import os
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onyx_harness import assert_outputs_close, run_onyx, run_ort

ELEM = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, np.bool_: TensorProto.BOOL,
        np.int64: TensorProto.INT64}


def compare(op, inputs, attrs, n_outputs, opset=23, rtol=1e-3, atol=1e-4):
    names = [n for n, a in inputs if a is not None]
    node_inputs = [n if a is not None else "" for n, a in inputs]
    outs = [f"out{i}" for i in range(n_outputs)]
    node = helper.make_node(op, node_inputs, outs, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, ELEM[a.dtype.type], a.shape) for n, a in inputs if a is not None],
        [helper.make_tensor_value_info(o, ELEM[inputs[0][1].dtype.type], None) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    feeds = {n: a for n, a in inputs if a is not None}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        onnx.save(model, path)
        expected = run_ort(path, feeds)
        got = run_onyx(path, feeds, threads=4)
    assert_outputs_close(expected, got, rtol=rtol, atol=atol, names=outs)
    assert names


@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float"])
@pytest.mark.parametrize("heads", [(8, 8), (8, 2)])
def test_4d_attention(causal, mask_kind, heads):
    rng = np.random.default_rng(causal * 10 + len(mask_kind) + heads[1])
    b, hq, hkv, lq, lkv, d = 2, heads[0], heads[1], 33, 33, 32
    q = rng.standard_normal((b, hq, lq, d)).astype(np.float32)
    k = rng.standard_normal((b, hkv, lkv, d)).astype(np.float32)
    v = rng.standard_normal((b, hkv, lkv, d)).astype(np.float32)
    mask = None
    if mask_kind == "bool":
        mask = rng.random((lq, lkv)) > 0.3
        mask[:, 0] = True
    elif mask_kind == "float":
        mask = rng.standard_normal((b, 1, lq, lkv)).astype(np.float32)
    attrs = {"is_causal": causal} if causal else {}
    compare("Attention", [("Q", q), ("K", k), ("V", v), ("attn_mask", mask)], attrs, 1)


def test_3d_gqa_with_past_and_outputs():
    rng = np.random.default_rng(5)
    b, hq, hkv, lq, lkv, past, d, dv = 2, 6, 3, 7, 7, 20, 16, 8
    q = rng.standard_normal((b, lq, hq * d)).astype(np.float32)
    k = rng.standard_normal((b, lkv, hkv * d)).astype(np.float32)
    v = rng.standard_normal((b, lkv, hkv * dv)).astype(np.float32)
    pk = rng.standard_normal((b, hkv, past, d)).astype(np.float32)
    pv = rng.standard_normal((b, hkv, past, dv)).astype(np.float32)
    mask = rng.standard_normal((lq, past + lkv)).astype(np.float32)
    compare("Attention", [("Q", q), ("K", k), ("V", v), ("attn_mask", mask), ("past_key", pk), ("past_value", pv)],
            {"q_num_heads": hq, "kv_num_heads": hkv, "scale": 0.2}, 3)


def test_fp16():
    rng = np.random.default_rng(9)
    q, k, v = (rng.standard_normal((1, 4, 16, 32)).astype(np.float16) for _ in range(3))
    compare("Attention", [("Q", q), ("K", k), ("V", v)], {}, 1, rtol=5e-3, atol=5e-3)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rotary_dim", [0, 16])
@pytest.mark.parametrize("packed", [False, True])
def test_rotary_embedding(interleaved, rotary_dim, packed):
    rng = np.random.default_rng(interleaved * 4 + rotary_dim + packed)
    b, h, s, d, max_pos = 2, 4, 10, 32, 64
    x = rng.standard_normal((b, s, h * d) if packed else (b, h, s, d)).astype(np.float32)
    half = (rotary_dim or d) // 2
    angles = np.arange(max_pos)[:, None] * (1.0 / 10000 ** (np.arange(half) / half))[None, :]
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    pos = rng.integers(0, max_pos, size=(b, s)).astype(np.int64)
    attrs = {"interleaved": interleaved}
    if rotary_dim:
        attrs["rotary_embedding_dim"] = rotary_dim
    if packed:
        attrs["num_heads"] = h
    compare("RotaryEmbedding", [("X", x), ("cos_cache", cos), ("sin_cache", sin), ("position_ids", pos)], attrs, 1)
