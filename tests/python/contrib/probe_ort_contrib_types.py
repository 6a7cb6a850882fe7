"""Which float types ONNX Runtime's CPU provider accepts for each com.microsoft op Onyx registers
on CPU, and for the ONNX-domain ops whose float16 / bfloat16 matter to exported models.

Found empirically: for every case and every type in TYPES, a single-node model is built with
onnx's helpers (the case's float inputs and outputs in that type, integer and quantized inputs
kept), and ONNX Runtime is asked to create a CPU session and run it. ORT accepts float16 for many
ops without a float16 kernel of their own (it inserts Casts around a float kernel); that counts as
accepted, since a user's model runs.

    .venv/bin/python tests/python/contrib/probe_ort_contrib_types.py [--write] [--onyx ONYX_BIN]

--write stores the table in ort_contrib_types.json beside this file (the test
test_contrib_type_coverage.py reads it); --onyx also runs each pair in Onyx and prints which it
accepts (for reports: pairs ORT refuses and Onyx accepts are fine, the reverse is a gap).

CASES is imported by the test, so a case builds the same model here and there."""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

try:
    import ml_dtypes
except ImportError:  # the probe and the test need it for bfloat16
    ml_dtypes = None

TYPES = ["float32", "float64", "float16", "bfloat16"]
TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_contrib_types.json")
ELEM = {"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE, "float16": TensorProto.FLOAT16,
        "bfloat16": TensorProto.BFLOAT16}
INT_ELEM = {np.dtype(np.int64): TensorProto.INT64, np.dtype(np.int32): TensorProto.INT32,
            np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
            np.dtype(np.bool_): TensorProto.BOOL}


class Const:
    """An input given as an initializer instead of a feed."""

    def __init__(self, array):
        self.array = np.asarray(array)


class Float:
    """A float input whose type is float in every variant (e.g. Resize's scales)."""

    def __init__(self, array):
        self.array = np.asarray(array, np.float32)


def np_type(dtype):
    return ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)


class Case:
    """One single-node model. build(r) returns ({name: array | Const | None}, [output names],
    {attributes}); its float32 arrays are the op's float type, cast to the probed type (its
    integer arrays keep their types)."""

    def __init__(self, name, op, build, domain="com.microsoft", opset=17):
        self.name, self.op, self.build, self.domain, self.opset = name, op, build, domain, opset

    def instance(self, dtype, seed=0, rounded_through=None):
        """(onnx model, {feed name: array in the probed type}, output names). With
        rounded_through, the float values are first rounded to that type (the same values a
        model in that type gets, for a reference in float)."""
        inputs, outputs, attrs = self.build(np.random.default_rng(seed))
        t = np_type(dtype)

        def cast(a):
            a = np.asarray(a)
            if a.dtype != np.float32:
                return a
            return (a.astype(np_type(rounded_through)) if rounded_through else a).astype(t)

        names, infos, inits, feeds = [], [], [], {}
        for name, v in inputs.items():
            if v is None:
                names.append("")
                continue
            names.append(name)
            if isinstance(v, Float):
                infos.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(v.array.shape)))
                feeds[name] = v.array
                continue
            orig = np.asarray(v.array if isinstance(v, Const) else v)
            arr = cast(orig)
            elem = ELEM[dtype] if orig.dtype == np.float32 else INT_ELEM[orig.dtype]
            if isinstance(v, Const):
                inits.append(tensor_proto(name, arr, elem))
            else:
                infos.append(helper.make_tensor_value_info(name, elem, list(arr.shape)))
                feeds[name] = arr
        outs = [helper.make_empty_tensor_value_info(o) for o in outputs if o]
        node = helper.make_node(self.op, names, list(outputs), domain=self.domain, **attrs)
        graph = helper.make_graph([node], f"{self.name}_{dtype}", infos, outs, initializer=inits)
        opsets = [helper.make_opsetid("", self.opset), helper.make_opsetid("com.microsoft", 1)]
        model = helper.make_model(graph, opset_imports=opsets)
        model.ir_version = 8 if self.opset <= 17 else 10
        return model, feeds, [o for o in outputs if o]


def tensor_proto(name, arr, elem):
    if elem == TensorProto.BFLOAT16:
        return helper.make_tensor(name, elem, arr.shape, arr.view(np.uint16).tobytes(), raw=True)
    from onnx import numpy_helper
    return numpy_helper.from_array(arr, name)


def run_ort(model, feeds, threads=1):
    """ONNX Runtime's outputs (bfloat16 ones as ml_dtypes.bfloat16 arrays); raises on refusal."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 4  # refusals are reported by the exception, not the log
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    values = {}
    for name, a in feeds.items():
        if ml_dtypes is not None and a.dtype == ml_dtypes.bfloat16:
            values[name] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(a.view(np.uint16), TensorProto.BFLOAT16)
        else:
            values[name] = ort.OrtValue.ortvalue_from_numpy(a)
    run_options = ort.RunOptions()
    run_options.log_severity_level = 4
    results = []
    for v in session.run_with_ort_values(None, values, run_options):
        if v.data_type() == "tensor(bfloat16)":  # no numpy type in ORT: copy the bits
            out = np.empty(v.shape(), np.uint16)
            if out.size:
                ctypes.memmove(out.ctypes.data, v.data_ptr(), out.nbytes)
            results.append(out.view(ml_dtypes.bfloat16))
        else:
            results.append(v.numpy())
    return results


def onyx_feed(name, a):
    """What `onyx run --input` reads: .npy arrays, or a TensorProto for bfloat16 (no .npy type)."""
    if ml_dtypes is not None and a.dtype == ml_dtypes.bfloat16:
        return tensor_proto(name, a, TensorProto.BFLOAT16)
    return a


def from_onyx(got, expected):
    """`onyx run` writes bfloat16 outputs as their uint16 bits."""
    if ml_dtypes is not None and expected.dtype == ml_dtypes.bfloat16 and got.dtype == np.uint16:
        return got.view(ml_dtypes.bfloat16)
    return got


# ---------------------------------------------------------------- the cases
F = np.float32


def normal(r, *shape, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(F)


def positive(r, *shape):
    return r.uniform(0.5, 2.0, shape).astype(F)


def pack4(values):
    v = values.reshape(*values.shape[:-1], values.shape[-1] // 2, 2).astype(np.uint8)
    return (v[..., 0] | (v[..., 1] << 4)).astype(np.uint8)


def i64(v):
    return np.array(v, np.int64)


def qi8(r, *shape):
    """int8 weights in [-64, 64), so ORT's u8s8 kernels cannot saturate."""
    return r.integers(-64, 64, shape).astype(np.int8)


def qu8(r, *shape):
    return r.integers(0, 256, shape).astype(np.uint8)


def s(v):
    return np.array(v, F)


def _ms(name, build, op=None):
    return Case(name, op or name, build)


def _onnx(name, build, opset=17, op=None):
    return Case(name, op or name, build, domain="", opset=opset)


def _gqa(r):
    B, S, N, Nkv, H = 2, 3, 4, 2, 8
    return ({"query": normal(r, B, S, N * H), "key": normal(r, B, S, Nkv * H), "value": normal(r, B, S, Nkv * H),
             "past_key": None, "past_value": None, "seqlens_k": np.array([2, 1], np.int32),
             "total_sequence_length": np.array([3], np.int32)},
            ["output", "present_key", "present_value"], {"num_heads": N, "kv_num_heads": Nkv})


def _gqa_past_rotary(r):
    B, S, N, Nkv, H, P = 2, 1, 4, 2, 16, 4  # ORT's rotary wants head_size % 16 == 0
    return ({"query": normal(r, B, S, N * H), "key": normal(r, B, S, Nkv * H), "value": normal(r, B, S, Nkv * H),
             "past_key": normal(r, B, Nkv, P, H), "past_value": normal(r, B, Nkv, P, H),
             "seqlens_k": np.array([4, 2], np.int32), "total_sequence_length": np.array([5], np.int32),
             "cos_cache": normal(r, 16, H // 2), "sin_cache": normal(r, 16, H // 2)},
            ["output", "present_key", "present_value"], {"num_heads": N, "kv_num_heads": Nkv, "do_rotary": 1})


def _embed(r):
    B, S, H, V, P = 2, 5, 16, 20, 8
    return ({"ids": r.integers(0, V, (B, S)).astype(np.int32), "seg": r.integers(0, 2, (B, S)).astype(np.int32),
             "word": normal(r, V, H), "pos": normal(r, P, H), "segment": normal(r, 2, H), "gamma": normal(r, H),
             "beta": normal(r, H), "mask": np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)},
            ["y", "mask_index"], {"epsilon": 1e-5})


def _nbits(r):
    K, N, block = 64, 16, 32
    kb = K // block
    return ({"A": normal(r, 3, K), "B": Const(pack4(r.integers(0, 16, (N, kb, block)))),
             "scales": Const((r.random((N, kb)) * 0.1 + 0.01).astype(F))},
            ["y"], {"K": K, "N": N, "bits": 4, "block_size": block})


def _nbits_zp_bias(r):
    K, N, block = 64, 16, 16
    kb = K // block
    return ({"A": normal(r, 2, 3, K), "B": Const(pack4(r.integers(0, 16, (N, kb, block)))),
             "scales": Const((r.random((N, kb)) * 0.1 + 0.01).astype(F)),
             "zero_points": Const(pack4(r.integers(0, 16, (N, kb)))), "g_idx": None, "bias": Const(normal(r, N))},
            ["y"], {"K": K, "N": N, "bits": 4, "block_size": block})


def _qlinear_binary(r):
    return ({"A": qu8(r, 2, 8), "A_scale": s(0.02), "A_zero_point": np.array(120, np.uint8), "B": qu8(r, 2, 8),
             "B_scale": s(0.03), "B_zero_point": np.array(131, np.uint8), "C_scale": s(0.05),
             "C_zero_point": np.array(127, np.uint8)}, ["C"], {})


def _qlinear_unary(alpha=None):
    def build(r):
        attrs = {} if alpha is None else {"alpha": alpha}
        return ({"X": qu8(r, 2, 8), "X_scale": s(0.05), "X_zero_point": np.array(120, np.uint8),
                 "Y_scale": s(1 / 256), "Y_zero_point": np.array(3, np.uint8)}, ["Y"], attrs)
    return build


def _qpool(globl):
    def build(r):
        ins = {"X": qu8(r, 1, 2, 5, 5), "x_scale": s(0.05), "x_zero_point": np.array(120, np.uint8),
               "y_scale": s(0.03), "y_zero_point": np.array(131, np.uint8)}
        return ins, ["Y"], {} if globl else {"kernel_shape": [2, 2]}
    return build


def _qgemm(r):
    return ({"A": qu8(r, 5, 32), "a_scale": s(0.02), "a_zero_point": np.array(100, np.uint8),
             "B": Const(r.integers(-64, 64, (32, 16)).astype(np.int8)), "b_scale": Const(s(0.05)),
             "b_zero_point": Const(np.array(0, np.int8))}, ["y"], {})


CONTRIB = [
    _ms("Attention", lambda r: ({"x": normal(r, 2, 4, 16), "w": Const(normal(r, 16, 48, scale=0.3)),
                                "bias": Const(normal(r, 48)), "mask": np.array([[1, 1, 1, 1], [1, 1, 0, 0]], np.int32)},
                               ["y"], {"num_heads": 2})),
    Case("Attention_past", "Attention",
         lambda r: ({"x": normal(r, 2, 3, 16), "w": Const(normal(r, 16, 48, scale=0.3)), "bias": Const(normal(r, 48)),
                     "mask": None, "past": normal(r, 2, 2, 2, 4, 8)}, ["y", "present"],
                    {"num_heads": 2, "unidirectional": 1})),
    _ms("MultiHeadAttention", lambda r: ({"q": normal(r, 2, 4, 16), "k": normal(r, 2, 4, 16), "v": normal(r, 2, 4, 16)},
                                         ["y"], {"num_heads": 2})),
    Case("MultiHeadAttention_bias_past", "MultiHeadAttention",
         lambda r: ({"q": normal(r, 2, 3, 16), "k": normal(r, 2, 3, 16), "v": normal(r, 2, 3, 16),
                     "bias": normal(r, 48), "mask": None, "attn_bias": None, "past_key": normal(r, 2, 2, 4, 8),
                     "past_value": normal(r, 2, 2, 4, 8)},
                    ["y", "present_key", "present_value"], {"num_heads": 2})),
    _ms("GroupQueryAttention", _gqa),
    Case("GroupQueryAttention_past_rotary", "GroupQueryAttention", _gqa_past_rotary),
    Case("GroupQueryAttention_packed", "GroupQueryAttention",
         lambda r: ({"query": normal(r, 2, 3, 8 * 8), "key": None, "value": None, "past_key": None, "past_value": None,
                     "seqlens_k": np.array([2, 2], np.int32), "total_sequence_length": np.array([3], np.int32)},
                    ["output", "present_key", "present_value"], {"num_heads": 4, "kv_num_heads": 2})),
    _ms("RotaryEmbedding", lambda r: ({"x": normal(r, 2, 4, 16), "pos": i64([[0, 1, 2, 3], [2, 3, 4, 5]]),
                                       "cos": normal(r, 8, 4), "sin": normal(r, 8, 4)}, ["y"], {"num_heads": 2})),
    Case("RotaryEmbedding_interleaved_bnsh", "RotaryEmbedding",
         lambda r: ({"x": normal(r, 2, 2, 3, 8), "pos": np.array([1], np.int64), "cos": normal(r, 8, 4),
                     "sin": normal(r, 8, 4)}, ["y"], {"interleaved": 1})),
    _ms("EmbedLayerNormalization", _embed),
    Case("EmbedLayerNormalization_sum", "EmbedLayerNormalization",
         lambda r: (lambda i, o, a: (i, o + ["embedding_sum"], a))(*_embed(r))),
    _ms("SkipLayerNormalization", lambda r: ({"x": normal(r, 2, 4, 16), "skip": normal(r, 2, 4, 16),
                                              "gamma": normal(r, 16), "beta": normal(r, 16), "bias": normal(r, 16)},
                                             ["y"], {"epsilon": 1e-5})),
    _ms("SkipSimplifiedLayerNormalization", lambda r: ({"x": normal(r, 2, 4, 16), "skip": normal(r, 2, 4, 16),
                                                        "gamma": normal(r, 16)}, ["y"], {"epsilon": 1e-5})),
    Case("SkipLayerNormalization_all_outputs", "SkipLayerNormalization",
         lambda r: ({"x": normal(r, 2, 4, 16), "skip": normal(r, 1, 4, 16), "gamma": normal(r, 16),
                     "beta": normal(r, 16)},
                    ["y", "mean", "inv_std", "sum"], {"epsilon": 1e-5})),
    Case("SkipSimplifiedLayerNormalization_sum", "SkipSimplifiedLayerNormalization",
         lambda r: ({"x": normal(r, 2, 4, 16), "skip": normal(r, 2, 4, 16), "gamma": normal(r, 16),
                     "bias": normal(r, 16)}, ["y", "", "", "sum"], {"epsilon": 1e-5})),
    _ms("MatMulNBits", _nbits),
    Case("MatMulNBits_zero_points_bias", "MatMulNBits", _nbits_zp_bias),
    Case("MatMulNBits_8bit_zero_points", "MatMulNBits",
         lambda r: ({"A": normal(r, 3, 32), "B": Const(r.integers(0, 256, (8, 2, 16)).astype(np.uint8)),
                     "scales": Const((r.random((8, 2)) * 0.01 + 0.001).astype(F)),
                     "zero_points": Const(r.integers(0, 256, (8, 2)).astype(np.uint8))},
                    ["y"], {"K": 32, "N": 8, "bits": 8, "block_size": 16})),
    Case("MatMulNBits_float_zero_points", "MatMulNBits",
         lambda r: ({"A": normal(r, 3, 32), "B": Const(pack4(r.integers(0, 16, (8, 2, 16)))),
                     "scales": Const((r.random((8, 2)) * 0.1 + 0.01).astype(F)),
                     "zero_points": Const((r.random((8, 2)) * 15).astype(F))},
                    ["y"], {"K": 32, "N": 8, "bits": 4, "block_size": 16})),
    _ms("FastGelu", lambda r: ({"x": normal(r, 2, 4, 16), "bias": normal(r, 16)}, ["y"], {})),
    _ms("BiasGelu", lambda r: ({"x": normal(r, 2, 4, 16), "bias": normal(r, 16)}, ["y"], {})),
    _ms("QuickGelu", lambda r: ({"x": normal(r, 2, 4, 16)}, ["y"], {"alpha": 1.702})),
    _ms("Gelu", lambda r: ({"x": normal(r, 2, 4, 16)}, ["y"], {})),
    _ms("BiasAdd", lambda r: ({"x": normal(r, 2, 4, 16), "bias": normal(r, 16), "skip": normal(r, 2, 4, 16)}, ["y"],
                              {})),
    _ms("BiasSoftmax", lambda r: ({"x": normal(r, 2, 3, 4, 8), "bias": normal(r, 2, 1, 4, 8)}, ["y"],
                                  {"axis": 3, "is_inner_broadcast": 1})),
    _ms("FusedMatMul", lambda r: ({"a": normal(r, 2, 3, 8), "b": normal(r, 2, 5, 8)}, ["y"],
                                  {"alpha": 0.5, "transB": 1})),
    _ms("TransposeMatMul", lambda r: ({"a": normal(r, 2, 8, 3), "b": normal(r, 2, 8, 5)}, ["y"], {"transA": 1})),
    _ms("FusedConv", lambda r: ({"X": normal(r, 1, 3, 6, 6), "W": Const(normal(r, 4, 3, 3, 3)),
                                 "B": Const(normal(r, 4))},
                                ["Y"], {"activation": "Relu", "pads": [1, 1, 1, 1]})),
    Case("FusedConv_leaky_relu", "FusedConv",
         lambda r: ({"X": normal(r, 1, 2, 5, 5), "W": Const(normal(r, 3, 2, 3, 3))}, ["Y"],
                    {"activation": "LeakyRelu", "activation_params": [0.2], "strides": [2, 2]})),
    _ms("MatMulIntegerToFloat", lambda r: ({"A": qu8(r, 3, 32), "B": Const(qi8(r, 32, 16)),
                                            "a_scale": s(0.02), "b_scale": Const(s(0.05)),
                                            "a_zero_point": np.array(120, np.uint8),
                                            "b_zero_point": Const(np.array(0, np.int8)), "bias": Const(normal(r, 16))},
                                           ["y"], {})),
    _ms("DynamicQuantizeMatMul", lambda r: ({"A": normal(r, 4, 32), "B": Const(qi8(r, 32, 16)),
                                             "b_scale": Const(s(0.02)), "b_zero_point": Const(np.array(0, np.int8)),
                                             "bias": Const(normal(r, 16))}, ["y"], {})),
    _ms("QGemm", _qgemm),
    _ms("QLinearAdd", _qlinear_binary),
    _ms("QLinearMul", _qlinear_binary),
    _ms("QLinearSigmoid", _qlinear_unary()),
    _ms("QLinearLeakyRelu", _qlinear_unary(0.1)),
    _ms("QLinearSoftmax", lambda r: ({"X": qu8(r, 2, 8), "X_scale": s(0.08), "x_zero_point": np.array(3, np.uint8),
                                      "y_scale": s(1 / 256), "y_zero_point": np.array(0, np.uint8)}, ["Y"],
                                     {"opset": 13, "axis": -1})),
    _ms("QLinearConcat", lambda r: ({"Y_scale": s(0.05), "Y_zero_point": np.array(128, np.uint8), "X0": qu8(r, 2, 3),
                                     "X0_scale": s(0.05), "X0_zero_point": np.array(128, np.uint8), "X1": qu8(r, 2, 4),
                                     "X1_scale": s(0.02), "X1_zero_point": np.array(131, np.uint8)}, ["Y"],
                                    {"axis": 1})),
    _ms("QLinearAveragePool", _qpool(False)),
    _ms("QLinearGlobalAveragePool", _qpool(True)),
]


def _x(r):
    return normal(r, 2, 4, 16)


def _unary(name, gen=None, opset=17, **attrs):
    return _onnx(name, lambda r: ({"x": (gen or _x)(r)}, ["y"], dict(attrs)), opset=opset)


def _binary(name, gen_b=None, opset=17):
    return _onnx(name, lambda r: ({"a": normal(r, 2, 4, 16), "b": (gen_b or (lambda r: normal(r, 16)))(r)}, ["y"], {}),
                 opset=opset)


ONNX = [
    _onnx("LayerNormalization", lambda r: ({"x": _x(r), "scale": normal(r, 16), "bias": normal(r, 16)}, ["y"],
                                           {"epsilon": 1e-5})),
    Case("LayerNormalization_all_outputs", "LayerNormalization",
         lambda r: ({"x": normal(r, 2, 3, 8), "scale": normal(r, 3, 8)}, ["y", "mean", "inv_std_dev"], {"axis": 1}),
         domain="", opset=17),
    Case("Softmax_axis1", "Softmax", lambda r: ({"x": _x(r)}, ["y"], {"axis": 1}), domain="", opset=13),
    Case("LayerNormalization_opset13", "LayerNormalization",
         lambda r: ({"x": _x(r), "scale": normal(r, 16), "bias": normal(r, 16)}, ["y"], {"epsilon": 1e-5}),
         domain="", opset=13),
    _onnx("SimplifiedLayerNormalization", lambda r: ({"x": _x(r), "scale": normal(r, 16)}, ["y"], {"epsilon": 1e-5})),
    _onnx("RMSNormalization", lambda r: ({"x": _x(r), "scale": normal(r, 16)}, ["y"], {"epsilon": 1e-5}), opset=23),
    _unary("Gelu", opset=20),
    Case("Gelu_tanh", "Gelu", lambda r: ({"x": _x(r)}, ["y"], {"approximate": "tanh"}), domain="", opset=20),
    _unary("Softmax", opset=13, axis=-1),
    _unary("LogSoftmax", opset=13, axis=-1),
    _onnx("MatMul", lambda r: ({"a": normal(r, 2, 3, 8), "b": normal(r, 8, 5)}, ["y"], {}), opset=13),
    _onnx("Gemm", lambda r: ({"a": normal(r, 3, 8), "b": Const(normal(r, 5, 8)), "c": Const(normal(r, 5))}, ["y"],
                             {"transB": 1, "alpha": 0.5}), opset=13),
    _onnx("Conv", lambda r: ({"x": normal(r, 1, 3, 6, 6), "w": Const(normal(r, 4, 3, 3, 3)), "b": Const(normal(r, 4))},
                             ["y"], {"pads": [1, 1, 1, 1]}), opset=11),
    _onnx("ConvTranspose", lambda r: ({"x": normal(r, 1, 3, 4, 4), "w": Const(normal(r, 3, 2, 3, 3)),
                                       "b": Const(normal(r, 2))}, ["y"], {"strides": [2, 2]}), opset=11),
    _onnx("Resize_linear", lambda r: ({"x": normal(r, 1, 2, 4, 4), "roi": None, "scales": Float([1, 1, 2, 2])},
                                      ["y"], {"mode": "linear"}), opset=19, op="Resize"),
    _onnx("Resize_nearest", lambda r: ({"x": normal(r, 1, 2, 4, 4), "roi": None, "scales": None,
                                        "sizes": np.array([1, 2, 7, 9], np.int64)}, ["y"], {"mode": "nearest"}),
          opset=19, op="Resize"),
    _onnx("BatchNormalization", lambda r: ({"x": normal(r, 2, 3, 4, 4), "scale": normal(r, 3), "b": normal(r, 3),
                                            "mean": normal(r, 3), "var": positive(r, 3)}, ["y"], {}), opset=15),
    _onnx("InstanceNormalization", lambda r: ({"x": normal(r, 2, 3, 4, 4), "scale": normal(r, 3), "b": normal(r, 3)},
                                              ["y"], {}), opset=13),
    _onnx("GroupNormalization", lambda r: ({"x": normal(r, 2, 4, 3, 3), "scale": normal(r, 4), "bias": normal(r, 4)},
                                           ["y"], {"num_groups": 2}), opset=21),
    _onnx("Attention_onnx", lambda r: ({"q": normal(r, 2, 2, 4, 8), "k": normal(r, 2, 2, 5, 8),
                                        "v": normal(r, 2, 2, 5, 8)},
                                       ["y"], {"is_causal": 1}), opset=23, op="Attention"),
    _onnx("RotaryEmbedding_onnx", lambda r: ({"x": normal(r, 2, 2, 4, 8), "cos": normal(r, 8, 4),
                                              "sin": normal(r, 8, 4),
                                              "pos": np.array([[0, 1, 2, 3], [4, 5, 6, 7]], np.int64)}, ["y"], {}),
          opset=23, op="RotaryEmbedding"),
    _binary("Add"), _binary("Sub"), _binary("Mul"), _binary("Div", positive),
    _onnx("Pow", lambda r: ({"a": positive(r, 2, 4, 16), "b": normal(r, 16)}, ["y"], {}), opset=15),
    _binary("Max"), _binary("Min"),
    _unary("Sqrt", lambda r: positive(r, 2, 4, 16), opset=13),
    _unary("Reciprocal", lambda r: positive(r, 2, 4, 16), opset=13),
    _unary("Erf", opset=13), _unary("Tanh", opset=13), _unary("Sigmoid", opset=13), _unary("Relu", opset=14),
    _unary("Exp", opset=13), _unary("Log", lambda r: positive(r, 2, 4, 16), opset=13), _unary("Neg", opset=13),
    _unary("Abs", opset=13), _unary("Sin"), _unary("Cos"), _unary("LeakyRelu", opset=16, alpha=0.1),
    _unary("HardSigmoid"), _unary("Elu"), _unary("Softplus"),
    _onnx("Clip", lambda r: ({"x": _x(r), "min": s(-0.5), "max": s(0.5)}, ["y"], {}), opset=13),
    _onnx("Where", lambda r: ({"c": r.integers(0, 2, (2, 4, 16)).astype(bool), "a": _x(r), "b": _x(r)}, ["y"], {}),
          opset=16),
    _onnx("ReduceMean", lambda r: ({"x": _x(r), "axes": np.array([-1], np.int64)}, ["y"], {}), opset=18),
    _onnx("ReduceSum", lambda r: ({"x": _x(r), "axes": np.array([1], np.int64)}, ["y"], {}), opset=13),
    _onnx("ReduceMax", lambda r: ({"x": _x(r), "axes": np.array([-1], np.int64)}, ["y"], {}), opset=18),
    _onnx("CumSum", lambda r: ({"x": _x(r), "axis": np.array(1, np.int64)}, ["y"], {}), opset=14),
    _onnx("Einsum", lambda r: ({"a": normal(r, 2, 3, 8), "b": normal(r, 2, 8, 5)}, ["y"], {"equation": "bij,bjk->bik"}),
          opset=12),
    _onnx("MaxPool", lambda r: ({"x": normal(r, 1, 2, 6, 6)}, ["y"], {"kernel_shape": [2, 2]}), opset=12),
    _onnx("AveragePool", lambda r: ({"x": normal(r, 1, 2, 6, 6)}, ["y"], {"kernel_shape": [2, 2]}), opset=19),
    _onnx("GlobalAveragePool", lambda r: ({"x": normal(r, 1, 2, 6, 6)}, ["y"], {}), opset=13),
    _onnx("Transpose", lambda r: ({"x": _x(r)}, ["y"], {"perm": [2, 0, 1]}), opset=13),
    _onnx("Concat", lambda r: ({"a": _x(r), "b": _x(r)}, ["y"], {"axis": 1}), opset=13),
    _onnx("Gather", lambda r: ({"x": _x(r), "i": np.array([[0, 3], [1, 1]], np.int64)}, ["y"], {"axis": 1}), opset=13),
    _onnx("Slice", lambda r: ({"x": _x(r), "starts": np.array([1], np.int64), "ends": np.array([3], np.int64),
                               "axes": np.array([1], np.int64)}, ["y"], {}), opset=13),
    _onnx("Expand", lambda r: ({"x": normal(r, 1, 4, 1), "shape": np.array([2, 4, 3], np.int64)}, ["y"], {}), opset=13),
    _onnx("Reshape", lambda r: ({"x": _x(r), "shape": np.array([8, -1], np.int64)}, ["y"], {}), opset=14),
    _onnx("Split", lambda r: ({"x": _x(r), "split": i64([6, 10])}, ["y0", "y1"], {"axis": -1}), opset=13),
    _onnx("Pad", lambda r: ({"x": _x(r), "pads": np.array([0, 1, 0, 0, 1, 2], np.int64)}, ["y"], {}), opset=13),
    _onnx("Tile", lambda r: ({"x": _x(r), "repeats": np.array([1, 2, 1], np.int64)}, ["y"], {}), opset=13),
    _onnx("GatherElements", lambda r: ({"x": _x(r), "i": r.integers(0, 16, (2, 4, 3)).astype(np.int64)}, ["y"],
                                       {"axis": -1}), opset=13),
    _onnx("ScatterND", lambda r: ({"x": _x(r), "i": i64([[0, 1], [1, 3]]), "u": normal(r, 2, 16)}, ["y"], {}),
          opset=18),
    _onnx("Trilu", lambda r: ({"x": _x(r)}, ["y"], {}), opset=14),
    _onnx("TopK", lambda r: ({"x": _x(r), "k": np.array([3], np.int64)}, ["values", "indices"], {}), opset=11),
    _onnx("ArgMax", lambda r: ({"x": _x(r)}, ["y"], {"axis": -1}), opset=13),
    _onnx("Equal", lambda r: (lambda a: ({"a": a, "b": np.where(r.random(a.shape) < 0.5, a, 0).astype(F)}, ["y"],
                                         {}))(_x(r)), opset=13),
    _binary("Less", opset=13), _binary("Greater", opset=13),
    _unary("Floor", opset=13), _unary("Round", opset=11), _unary("Sign", opset=13),
    _unary("IsNaN", opset=13), _unary("HardSwish", opset=14), _unary("Selu"),
    _onnx("PRelu", lambda r: ({"x": _x(r), "slope": normal(r, 16)}, ["y"], {}), opset=16),
    _onnx("Range", lambda r: ({"start": s(0.5), "limit": s(7.0), "delta": s(0.75)}, ["y"], {}), opset=11),
    _onnx("Cast", lambda r: ({"x": _x(r)}, ["y"], {"to": 1}), opset=19),
    _onnx("QuantizeLinear", lambda r: ({"x": _x(r), "scale": s(0.02), "zp": np.array(128, np.uint8)}, ["y"], {}),
          opset=19),
    _onnx("DequantizeLinear", lambda r: ({"x": qu8(r, 2, 4, 16), "scale": s(0.02), "zp": np.array(128, np.uint8)},
                                         ["y"], {}), opset=19),
    _onnx("ReduceMin", lambda r: ({"x": _x(r), "axes": np.array([-1], np.int64)}, ["y"], {}), opset=18),
    _onnx("ReduceProd", lambda r: ({"x": positive(r, 2, 4, 16), "axes": i64([-1])}, ["y"], {}), opset=18),
    _onnx("ReduceL2", lambda r: ({"x": _x(r), "axes": np.array([-1], np.int64)}, ["y"], {}), opset=18),
    _onnx("ReduceLogSumExp", lambda r: ({"x": _x(r), "axes": np.array([-1], np.int64)}, ["y"], {}), opset=18),
    _onnx("Sum", lambda r: ({"a": _x(r), "b": _x(r), "c": normal(r, 16)}, ["y"], {}), opset=13),
    _onnx("Mean", lambda r: ({"a": _x(r), "b": _x(r)}, ["y"], {}), opset=13),
    _onnx("DepthToSpace", lambda r: ({"x": normal(r, 1, 8, 2, 3)}, ["y"], {"blocksize": 2}), opset=13),
    _onnx("LpNormalization", lambda r: ({"x": _x(r)}, ["y"], {"axis": -1}), opset=1),
    _onnx("MeanVarianceNormalization", lambda r: ({"x": normal(r, 2, 3, 4, 4)}, ["y"], {}), opset=13),
    _onnx("GridSample", lambda r: ({"x": normal(r, 1, 2, 4, 4), "grid": r.uniform(-1, 1, (1, 3, 3, 2)).astype(F)},
                                   ["y"],
                                   {"align_corners": 1}), opset=16),
    _onnx("Dropout", lambda r: ({"x": _x(r)}, ["y"], {}), opset=13),
    _onnx("LSTM", lambda r: ({"x": normal(r, 3, 2, 4), "w": normal(r, 1, 16, 4), "r": normal(r, 1, 16, 4)}, ["y"],
                             {"hidden_size": 4}), opset=14),
]

CASES = {c.name: c for c in CONTRIB + ONNX}


# ---------------------------------------------------------------- the probe
def probe(case, dtype):
    """None when ONNX Runtime creates a session and runs the case in dtype, else its first line of error."""
    model, feeds, _ = case.instance(dtype)
    try:
        run_ort(model, feeds)
        return None
    except Exception as e:  # ORT refuses: schema, no kernel, or a failure while running
        return str(e).strip().splitlines()[0][:300]


def onyx_accepts(onyx_bin, case, dtype):
    model, feeds, _ = case.instance(dtype)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        cmd = [onyx_bin, "run", path, "--output-dir", os.path.join(tmp, "out")]
        for i, (name, a) in enumerate(feeds.items()):
            v = onyx_feed(name, a)
            p = os.path.join(tmp, f"in{i}" + (".pb" if hasattr(v, "SerializeToString") else ".npy"))
            if hasattr(v, "SerializeToString"):
                with open(p, "wb") as f:
                    f.write(v.SerializeToString())
            else:
                np.save(p, v)
            cmd += ["--input", f"{name}={p}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        return proc.returncode == 0, proc.stderr.strip().splitlines()[-1][:300] if proc.returncode else ""


def to_json(table):
    """The table with one line per case, so a diff shows which pairs changed."""
    lines = ["{"]
    for key in ("onnxruntime", "onnx", "provider", "types"):
        lines.append(f" {json.dumps(key)}: {json.dumps(table[key])},")
    for key in ("accepted", "refused"):
        items = [f"  {json.dumps(n)}: {json.dumps(v)}" for n, v in table[key].items()]
        lines.append(f" {json.dumps(key)}: {{\n" + ",\n".join(items) + "\n }" + ("," if key == "accepted" else ""))
    return "\n".join(lines) + "\n}\n"


def main():
    import onnx
    import onnxruntime
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"store the table in {os.path.basename(TABLE)}")
    ap.add_argument("--onyx", help="also run each pair in this onyx binary")
    args = ap.parse_args()
    table = {"onnxruntime": onnxruntime.__version__, "onnx": onnx.__version__, "provider": "CPUExecutionProvider",
             "types": TYPES, "accepted": {}, "refused": {}}
    for name, case in CASES.items():
        table["accepted"][name] = []
        for dtype in TYPES:
            err = probe(case, dtype)
            if err is None:
                table["accepted"][name].append(dtype)
            else:
                table["refused"].setdefault(name, {})[dtype] = err
        line = f"{name:34s} ORT: {','.join(table['accepted'][name]) or '-'}"
        if args.onyx:
            ok = [t for t in TYPES if onyx_accepts(args.onyx, case, t)[0]]
            gaps = [t for t in table["accepted"][name] if t not in ok]
            extra = [t for t in ok if t not in table["accepted"][name]]
            line += f"  | Onyx: {','.join(ok) or '-'}  gaps: {','.join(gaps) or '-'}  extra: {','.join(extra) or '-'}"
        print(line, flush=True)
    if args.write:
        with open(TABLE, "w") as f:
            f.write(to_json(table))
        print(f"wrote {TABLE}")


if __name__ == "__main__":
    sys.exit(main())
