"""float16 and bfloat16 inputs of com.microsoft contrib ops that ONNX Runtime 1.31's CPU provider
accepts (it runs float16 nodes without a float16 kernel through inserted Casts): single-node
models in each type, against ONNX Runtime. Where ORT's schema refuses a type (bfloat16
EmbedLayerNormalization), Onyx is checked against ORT running the same values in float."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from contrib_util import Const, compare, onyx_fails, rng, save
from onyx_harness import assert_outputs_close, run_onyx, run_ort

ml_dtypes = pytest.importorskip("ml_dtypes")
F32 = np.float32


def embed_inputs(r, dtype, B=2, S=7, H=32, V=50, P=10):
    ids = r.integers(0, V, (B, S)).astype(np.int32)
    seg = r.integers(0, 2, (B, S)).astype(np.int32)
    we, pe, se = (r.standard_normal(shape).astype(dtype) for shape in ((V, H), (P, H), (2, H)))
    g, b = r.standard_normal((H,)).astype(dtype), r.standard_normal((H,)).astype(dtype)
    mask = np.array([[1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1]][:B], np.int32)[:, :S]
    return ids, seg, we, pe, se, g, b, mask


@pytest.mark.parametrize("segments", [True, False])
@pytest.mark.parametrize("weights_constant", [True, False])
def test_embed_layer_norm_float16(segments, weights_constant):
    ids, seg, we, pe, se, g, b, m = embed_inputs(rng(31), np.float16)
    w = Const if weights_constant else (lambda a: a)
    inputs = {"ids": ids, "seg": seg if segments else None, "word": w(we), "pos": w(pe),
              "segment": w(se) if segments else None, "gamma": g, "beta": b, "mask": m}
    expected = compare("EmbedLayerNormalization", inputs, ["y", "mask_index", "embedding_sum"], epsilon=1e-5,
                       rtol=1e-2, atol=1e-2)
    assert expected[0].dtype == np.float16 and expected[2].dtype == np.float16


def _bf16_tensor(name, array):
    return helper.make_tensor(name, TensorProto.BFLOAT16, array.shape, array.astype(ml_dtypes.bfloat16).tobytes(),
                              raw=True)


def test_embed_layer_norm_bfloat16_matches_float_on_the_same_values():
    ids, seg, we, pe, se, g, b, m = embed_inputs(rng(32), F32)
    # The bfloat16 values, and ORT's float result on exactly those values.
    rounded = [a.astype(ml_dtypes.bfloat16) for a in (we, pe, se, g, b)]
    as_float = [a.astype(F32) for a in rounded]
    names = ["word", "pos", "segment", "gamma", "beta"]
    node = helper.make_node("EmbedLayerNormalization", ["ids", "seg", *names, "mask"], ["y", "mask_index", "sum"],
                            domain="com.microsoft", epsilon=1e-5)
    ids_infos = [helper.make_tensor_value_info(n, TensorProto.INT32, [2, 7]) for n in ("ids", "seg", "mask")]

    def build(elem, inits):
        outs = [helper.make_tensor_value_info("y", elem, None), helper.make_tensor_value_info("mask_index", TensorProto.INT32, None),
                helper.make_tensor_value_info("sum", elem, None)]
        graph = helper.make_graph([node], "embed", ids_infos, outs, initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
        model.ir_version = 8
        return save(model, "embed_bf16")

    float_path = build(TensorProto.FLOAT, [numpy_helper.from_array(a, n) for a, n in zip(as_float, names)])
    bf16_path = build(TensorProto.BFLOAT16, [_bf16_tensor(n, a) for a, n in zip(as_float, names)])
    feeds = {"ids": ids, "seg": seg, "mask": m}
    expected = run_ort(float_path, feeds)
    got = run_onyx(bf16_path, feeds)
    # .npy has no bfloat16: onyx writes its bits as uint16.
    assert got[0].dtype == np.uint16 and got[2].dtype == np.uint16
    got_as_float = [got[0].view(ml_dtypes.bfloat16).astype(F32), got[1], got[2].view(ml_dtypes.bfloat16).astype(F32)]
    assert_outputs_close(expected, got_as_float, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("past", [False, True])
def test_multihead_attention_float16(past):
    r = rng(33)
    B, S, N, H, P = 2, 5, 2, 8, 3
    q, k, v = (r.standard_normal((B, S, N * H)).astype(np.float16) for _ in range(3))
    bias = r.standard_normal((3 * N * H,)).astype(np.float16)
    pk = r.standard_normal((B, N, P, H)).astype(np.float16) if past else None
    pv = r.standard_normal((B, N, P, H)).astype(np.float16) if past else None
    inputs = {"q": q, "k": k, "v": v, "bias": bias, "mask": None, "attn_bias": None, "past_key": pk, "past_value": pv}
    outputs = ["y", "present_key", "present_value"] if past else ["y"]
    compare("MultiHeadAttention", inputs, outputs, num_heads=N, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("unidirectional", [0, 1])
def test_attention_float16(unidirectional):
    r = rng(34)
    B, S, D, N = 2, 6, 16, 2
    x = r.standard_normal((B, S, D)).astype(np.float16)
    w = (r.standard_normal((D, 3 * D)) * 0.3).astype(np.float16)
    bias = r.standard_normal((3 * D,)).astype(np.float16)
    mask = np.array([[1] * S, [1] * (S - 2) + [0, 0]], np.int32)
    inputs = {"x": x, "w": Const(w), "bias": Const(bias), "mask": mask}
    compare("Attention", inputs, ["y"], num_heads=N, unidirectional=unidirectional, rtol=1e-2, atol=1e-2)


def test_attention_float16_with_float_bias_is_an_error():
    r = rng(35)
    x = r.standard_normal((1, 4, 8)).astype(np.float16)
    w = r.standard_normal((8, 24)).astype(np.float16)
    bias = r.standard_normal((24,)).astype(F32)
    onyx_fails("Attention", {"x": x, "w": w, "bias": bias}, ["y"], match="must share one type", num_heads=2)


@pytest.mark.parametrize("op,attrs", [("FastGelu", {}), ("BiasGelu", {}), ("QuickGelu", {"alpha": 1.702}), ("Gelu", {})])
def test_gelu_family_float16(op, attrs):
    r = rng(36)
    x = r.standard_normal((2, 4, 16)).astype(np.float16)
    inputs = {"x": x} if op in ("QuickGelu", "Gelu") else {"x": x, "b": r.standard_normal((16,)).astype(np.float16)}
    compare(op, inputs, ["y"], rtol=1e-2, atol=1e-2, **attrs)


def test_rotary_embedding_float16():
    r = rng(37)
    x = r.standard_normal((2, 4, 16)).astype(np.float16)
    pos = np.array([[0, 1, 2, 3], [2, 3, 4, 5]], np.int64)
    cos, sin = (r.standard_normal((8, 4)).astype(np.float16) for _ in range(2))
    compare("RotaryEmbedding", {"x": x, "pos": pos, "cos": cos, "sin": sin}, ["y"], num_heads=2, rtol=1e-2, atol=1e-2)


def test_skip_simplified_layer_norm_float16():
    r = rng(38)
    x, s = (r.standard_normal((2, 4, 16)).astype(np.float16) for _ in range(2))
    g = r.standard_normal((16,)).astype(np.float16)
    compare("SkipSimplifiedLayerNormalization", {"x": x, "skip": s, "gamma": g}, ["y", "", "", "sum"], epsilon=1e-5,
            rtol=1e-2, atol=1e-2)
