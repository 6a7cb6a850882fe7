"""The kernels that run linalg's vector math, against float64 numpy references on what the ONNX
conformance data does not reach: tensors large enough to be split across threads, odd sizes,
float16 inputs (computed in float through chunks), softmax along a middle axis, layer-norm rows
with a large mean, reductions over inner and outer axes, the attention-head transposes and
special values (NaN, +-inf, huge magnitudes)."""
import math

import numpy as np
import pytest
from onnx import TensorProto, helper

from onyx_harness import run_onyx, save_model

ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
             np.dtype(np.int64): TensorProto.INT64}
RNG = np.random.default_rng(11)
ERF = np.vectorize(math.erf, otypes=[np.float64])
ERFC = np.vectorize(math.erfc, otypes=[np.float64])


def run_node(op, inputs, opset, attrs=None, outputs=1, threads=4, name=None, initializers=()):
    names = [f"x{i}" for i in range(len(inputs))]
    outs = [f"y{i}" for i in range(outputs)]
    node = helper.make_node(op, names + [i.name for i in initializers], outs, **(attrs or {}))
    graph = helper.make_graph(
        [node], f"{op}_graph",
        [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype], list(a.shape)) for n, a in zip(names, inputs)],
        [helper.make_tensor_value_info(o, ONNX_TYPE[inputs[0].dtype], None) for o in outs], list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = save_model(model, name or f"vecmath_{op}_{opset}.onnx")
    return run_onyx(path, dict(zip(names, inputs)), threads=threads)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    return np.where(x > 0, x + np.log1p(np.exp(-np.abs(x))), np.log1p(np.exp(np.minimum(x, 0))))


# GELU references in the forms that keep their negative tails in float64 (1 + erf(z) = erfc(-z),
# 1 + tanh(y) = 2 sigmoid(2y)).
def gelu_tanh(x):
    return x * sigmoid(2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))


UNARY = [
    ("Exp", 13, {}, np.exp, (-20, 20)),
    ("Log", 13, {}, np.log, (1e-6, 1e6)),
    ("Tanh", 13, {}, np.tanh, (-12, 12)),
    ("Erf", 13, {}, ERF, (-5, 5)),
    ("Sigmoid", 13, {}, sigmoid, (-30, 30)),
    ("Softplus", 1, {}, softplus, (-30, 30)),
    ("Gelu", 20, {}, lambda x: 0.5 * x * ERFC(-x / math.sqrt(2)), (-8, 8)),
    ("Gelu", 20, {"approximate": "tanh"}, gelu_tanh, (-8, 8)),
    ("Mish", 18, {}, lambda x: x * np.tanh(softplus(x)), (-20, 20)),
    ("Swish", 24, {}, lambda x: x * sigmoid(x), (-20, 20)),
    ("Swish", 24, {"alpha": 0.5}, lambda x: x * sigmoid(0.5 * x), (-20, 20)),
]


@pytest.mark.parametrize("op,opset,attrs,ref,span", UNARY, ids=lambda v: str(v) if isinstance(v, (str, dict)) else None)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_unary_large_threaded(op, opset, attrs, ref, span, dtype):
    lo, hi = span
    if op == "Log":  # log-uniform, within float16's range
        x = np.exp(RNG.uniform(np.log(lo), np.log(min(hi, 6e4)), (3, 100003))).astype(dtype)
    else:
        x = RNG.uniform(lo, hi, (3, 100003)).astype(dtype)
    got = run_node(op, [x], opset, attrs, name=f"vecmath_{op}_{sorted(attrs.items())}_{np.dtype(dtype).name}.onnx")[0]
    want = ref(x.astype(np.float64))
    if dtype == np.float16:
        with np.errstate(over="ignore"):  # exp past float16's range: inf on both sides
            want = want.astype(np.float16)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=2e-3, atol=1e-4)
    else:
        # GELU-tanh: float rounding of its argument y is amplified |2y| times (up to ~50 here).
        rtol = 2e-5 if attrs.get("approximate") == "tanh" else 2e-6
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("op,opset,attrs,ref", [(u[0], u[1], u[2], u[3]) for u in UNARY if u[0] != "Log"],
                         ids=lambda v: str(v) if isinstance(v, (str, dict)) else None)
def test_unary_special_values(op, opset, attrs, ref):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, -3e38, 88.0, -88.0, 1e-8, 17.0],
                 np.float32)
    got = run_node(op, [x], opset, attrs, threads=1, name=f"vecmath_special_{op}_{sorted(attrs.items())}.onnx")[0]
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-37, equal_nan=True)


def softmax_ref(x, axis):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("shape,axis", [((4, 12, 128, 131), -1), ((2, 37, 3, 65), 1), ((5, 1000), 0),
                                        ((3, 7, 30522), -1)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_and_columns(shape, axis, log):
    x = (RNG.standard_normal(shape) * 6).astype(np.float32)
    got = run_node("LogSoftmax" if log else "Softmax", [x], 13, {"axis": axis})[0]
    want = softmax_ref(x, axis)
    if log:
        np.testing.assert_allclose(got, np.log(want), rtol=1e-5, atol=2e-5)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-12)


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("shape,axis,mean", [((3, 128, 768), -1, 1000.0), ((2, 5, 7, 33), 2, 0.0), ((4, 1), -1, 3.0)])
def test_layer_and_rms_norm(rms, shape, axis, mean):
    x = (RNG.standard_normal(shape) + mean).astype(np.float32)
    norm_shape = shape[axis:] if axis >= 0 else shape[axis:]
    scale = RNG.standard_normal(norm_shape).astype(np.float32)
    bias = RNG.standard_normal(norm_shape).astype(np.float32)
    axes = tuple(range(axis % len(shape), len(shape)))
    xd = x.astype(np.float64)
    mu = 0.0 if rms else xd.mean(axis=axes, keepdims=True)
    inv = 1.0 / np.sqrt(((xd - mu) ** 2).mean(axis=axes, keepdims=True) + 1e-5)
    if rms:
        got = run_node("RMSNormalization", [x, scale], 23, {"axis": axis})[0]
        want = (xd - mu) * inv * scale
    else:
        got, got_mean, got_inv = run_node("LayerNormalization", [x, scale, bias], 17, {"axis": axis}, outputs=3)
        want = (xd - mu) * inv * scale + bias
        np.testing.assert_allclose(got_mean, mu, rtol=1e-6)
        np.testing.assert_allclose(got_inv, inv, rtol=1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


REDUCE = [
    ("ReduceSum", lambda x, a: x.sum(axis=a)),
    ("ReduceMean", lambda x, a: x.mean(axis=a)),
    ("ReduceMax", lambda x, a: x.max(axis=a)),
    ("ReduceMin", lambda x, a: x.min(axis=a)),
    ("ReduceL1", lambda x, a: np.abs(x).sum(axis=a)),
    ("ReduceL2", lambda x, a: np.sqrt((x * x).sum(axis=a))),
    ("ReduceSumSquare", lambda x, a: (x * x).sum(axis=a)),
]


@pytest.mark.parametrize("op,ref", REDUCE, ids=[r[0] for r in REDUCE])
@pytest.mark.parametrize("shape,axes", [((64, 3001), [1]), ((3001, 65), [0]), ((7, 50, 33), [0, 2]),
                                        ((2, 600000), [1]), ((5, 9, 13), [1])])
def test_reductions(op, ref, shape, axes):
    x = (RNG.standard_normal(shape) * 10 + 2).astype(np.float32)
    x.flat[len(x.flat) // 3] = np.nan if op in ("ReduceMax", "ReduceMin") else x.flat[0]
    axes_init = helper.make_tensor("axes", TensorProto.INT64, [len(axes)], axes)
    got = run_node(op, [x], 18, {"keepdims": 0}, initializers=[axes_init],
                   name=f"vecmath_{op}_{len(shape)}_{axes}.onnx")[0]
    want = ref(x.astype(np.float64), tuple(axes))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-4, equal_nan=True)


@pytest.mark.parametrize("shape,perm", [((2, 128, 12, 64), [0, 2, 1, 3]), ((2, 128, 12, 64), [0, 2, 3, 1]),
                                        ((3, 77, 130), [2, 0, 1]), ((1, 2049, 1030), [0, 2, 1]),
                                        ((5, 3, 4, 6, 7), [4, 2, 0, 3, 1])])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16])
def test_transpose(shape, perm, dtype):
    x = (RNG.standard_normal(shape) * 100).astype(dtype)
    got = run_node("Transpose", [x], 13, {"perm": perm}, name=f"vecmath_transpose_{np.dtype(dtype).name}.onnx")[0]
    np.testing.assert_array_equal(got, np.transpose(x, perm))


@pytest.mark.parametrize("op,fn", [("Sub", np.subtract), ("Div", np.divide)])
def test_scalar_first_and_bias_rows(op, fn):
    a = RNG.standard_normal((1,)).astype(np.float32)
    b = (RNG.standard_normal((300, 1027)) + 3).astype(np.float32)
    np.testing.assert_allclose(run_node(op, [a, b], 14)[0], fn(a, b), rtol=1e-6)
    row = (RNG.standard_normal((1027,)) + 3).astype(np.float32)
    np.testing.assert_allclose(run_node(op, [row, b], 14)[0], fn(row, b), rtol=1e-6)
    np.testing.assert_allclose(run_node(op, [b, row], 14)[0], fn(b, row), rtol=1e-6)


def test_pow_cube_and_square():
    x = RNG.standard_normal((4, 100001)).astype(np.float32)
    for e in (2.0, 3.0, 2.5):
        y = np.array(e, np.float32)
        got = run_node("Pow", [x, y], 15, name=f"vecmath_pow_{e}.onnx")[0]
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(got, np.power(x.astype(np.float64), e), rtol=1e-6, equal_nan=True)
