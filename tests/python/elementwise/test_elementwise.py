"""Elementwise kernels against numpy / plain Python references on what the ONNX conformance data
does not reach: large broadcast shapes split across threads, integer edge cases (division and
modulo by zero, MIN / -1, wrap-around, shifts past the width, negative integer exponents), the
opset < 7 `broadcast`/`axis` form, NaN propagation and clear errors on bad shapes."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from onyx_harness import run_onyx, save_model

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.int16): TensorProto.INT16,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.uint16): TensorProto.UINT16,
    np.dtype(np.uint32): TensorProto.UINT32,
    np.dtype(np.uint64): TensorProto.UINT64,
    np.dtype(np.bool_): TensorProto.BOOL,
}


def run_node(op, inputs, out_dtype, opset, attrs=None, threads=1, name=None):
    """Runs one node over numpy inputs (names x0, x1, ...) and returns its output."""
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], **(attrs or {}))
    graph = helper.make_graph(
        [node], f"{op}_graph",
        [helper.make_tensor_value_info(n, NP_TO_ONNX[a.dtype], list(a.shape)) for n, a in zip(names, inputs)],
        [helper.make_tensor_value_info("y", NP_TO_ONNX[np.dtype(out_dtype)], None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = save_model(model, name or f"elementwise_{op}_{opset}.onnx")
    return run_onyx(path, dict(zip(names, inputs)), threads=threads)[0]


RNG = np.random.default_rng(7)


@pytest.mark.parametrize("a_shape,b_shape", [
    ((8, 96, 1000), (8, 96, 1000)),   # same shape: one long run split in pieces
    ((8, 96, 1000), (1000,)),         # bias along the last axis
    ((8, 96, 1000), (8, 96, 1)),      # per-row scalar
    ((3, 1, 70000), (1, 4, 1)),       # both broadcast, long inner runs
    ((400000, 2), (1, 2)),            # many short runs
    ((1,), (2, 300000)),              # scalar operand
])
def test_threaded_broadcast_add_mul(a_shape, b_shape):
    a = RNG.standard_normal(a_shape).astype(np.float32)
    b = RNG.standard_normal(b_shape).astype(np.float32)
    np.testing.assert_allclose(run_node("Add", [a, b], np.float32, 14, threads=4), a + b, rtol=1e-6)
    np.testing.assert_allclose(run_node("Mul", [a, b], np.float32, 14, threads=4), a * b, rtol=1e-6)


def test_threaded_where_and_sum():
    cond = RNG.random((50, 1, 4000)) > 0.5
    x = RNG.standard_normal((1, 30, 4000)).astype(np.float32)
    y = RNG.standard_normal((50, 30, 1)).astype(np.float32)
    np.testing.assert_array_equal(run_node("Where", [cond, x, y], np.float32, 16, threads=4), np.where(cond, x, y))
    np.testing.assert_allclose(run_node("Sum", [x, y, x], np.float32, 13, threads=4), x + y + x, rtol=1e-6)


def test_threaded_unary_and_activation():
    x = RNG.standard_normal((1 << 20,)).astype(np.float32) * 4
    np.testing.assert_allclose(run_node("Exp", [x], np.float32, 13, threads=4), np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(run_node("Sigmoid", [x], np.float32, 13, threads=4), 1 / (1 + np.exp(-x)),
                               rtol=1e-5, atol=1e-7)


def trunc_div(a, b, dtype):
    info = np.iinfo(dtype)
    out = []
    for x, y in zip(a.tolist(), b.tolist()):
        if y == 0:
            out.append(0)
            continue
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        out.append((q - info.min) % (info.max - info.min + 1) + info.min)  # wrap like numpy
    return np.array(out, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_div_truncates_and_never_traps(dtype):
    info = np.iinfo(dtype)
    a = np.array([7, -7, 7, -7, 5, info.min, info.min, info.max, 0], dtype=dtype)
    b = np.array([2, 2, -2, -2, 0, -1, 1, -1, 0], dtype=dtype)
    np.testing.assert_array_equal(run_node("Div", [a, b], dtype, 14), trunc_div(a, b, dtype))


@pytest.mark.parametrize("dtype", [np.int16, np.int64, np.uint32])
def test_mod_sign_rules(dtype):
    if np.dtype(dtype).kind == "u":
        a = np.array([7, 9, 0, 5], dtype=dtype)
        b = np.array([3, 4, 3, 0], dtype=dtype)
    else:
        info = np.iinfo(dtype)
        a = np.array([-4, 7, 5, 4, -7, 8, info.min, 3], dtype=dtype)
        b = np.array([2, -3, 8, -2, 3, 5, -1, 0], dtype=dtype)
    with np.errstate(divide="ignore"):
        floor_ref = np.where(b == 0, 0, np.mod(a, np.where(b == 0, 1, b))).astype(dtype)
        trunc_ref = np.where(b == 0, 0, np.fmod(a, np.where(b == 0, 1, b))).astype(dtype)
    np.testing.assert_array_equal(run_node("Mod", [a, b], dtype, 13), floor_ref)
    np.testing.assert_array_equal(run_node("Mod", [a, b], dtype, 13, {"fmod": 1}), trunc_ref)


def test_float_mod_fmod():
    a = np.array([-4.3, 7.2, 5.0, 4.3, -7.2, 8.0, np.inf, 1.0], dtype=np.float32)
    b = np.array([2.1, -3.4, 8.0, -2.1, 3.4, 5.0, 2.0, np.inf], dtype=np.float32)
    np.testing.assert_allclose(run_node("Mod", [a, b], np.float32, 13, {"fmod": 1}), np.fmod(a, b), rtol=1e-6)


def test_integer_add_mul_wrap():
    a = np.array([127, -128, 100, -100], dtype=np.int8)
    b = np.array([1, -1, 100, 3], dtype=np.int8)
    np.testing.assert_array_equal(run_node("Add", [a, b], np.int8, 14), (a.astype(np.int64) + b).astype(np.int8))
    np.testing.assert_array_equal(run_node("Mul", [a, b], np.int8, 14), (a.astype(np.int64) * b).astype(np.int8))
    c = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min], dtype=np.int64)
    d = np.array([2, -1], dtype=np.int64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run_node("Mul", [c, d], np.int64, 14), c * d)


def test_integer_pow():
    base = np.array([2, -3, 7, 1, -1, -1, 2, 0, 5], dtype=np.int64)
    exp = np.array([10, 3, 0, -5, -3, -2, -1, 0, 30], dtype=np.int64)
    ref = []
    for x, e in zip(base.tolist(), exp.tolist()):
        if e >= 0:
            v = x ** e
        else:  # 1 / x^|e| truncated toward zero
            v = 1 if x == 1 else ((-1) ** (-e) if x == -1 else 0)
        ref.append((v + 2**63) % 2**64 - 2**63)
    np.testing.assert_array_equal(run_node("Pow", [base, exp], np.int64, 15), np.array(ref, dtype=np.int64))
    fexp = np.array([0.5, 2.0, 3.0], dtype=np.float32)
    ibase = np.array([9, 3, 2], dtype=np.int32)
    np.testing.assert_array_equal(run_node("Pow", [ibase, fexp], np.int32, 15), np.array([3, 9, 8], dtype=np.int32))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_bitshift_past_width(dtype):
    bits = np.dtype(dtype).itemsize * 8
    x = np.array([1, 3, 255, 1, 5], dtype=dtype)
    n = np.array([0, 1, bits - 1, bits, bits + 3], dtype=dtype)
    mask = (1 << bits) - 1
    left = [(int(v) << int(s)) & mask if s < bits else 0 for v, s in zip(x, n)]
    right = [int(v) >> int(s) if s < bits else 0 for v, s in zip(x, n)]
    np.testing.assert_array_equal(run_node("BitShift", [x, n], dtype, 11, {"direction": "LEFT"}),
                                  np.array(left, dtype=dtype))
    np.testing.assert_array_equal(run_node("BitShift", [x, n], dtype, 11, {"direction": "RIGHT"}),
                                  np.array(right, dtype=dtype))


@pytest.mark.parametrize("b_shape,axis", [((3, 4), 1), ((2,), 0), ((5,), None), ((1, 1), 2), ((), None)])
def test_legacy_broadcast_axis(b_shape, axis):
    a = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = RNG.standard_normal(b_shape).astype(np.float32)
    start = 4 - len(b_shape) if axis is None else axis
    ref_b = b.reshape((1,) * start + b.shape + (1,) * (4 - start - len(b_shape)))
    attrs = {"broadcast": 1}
    if axis is not None:
        attrs["axis"] = axis
    np.testing.assert_allclose(run_node("Sub", [a, b], np.float32, 6, attrs), a - ref_b, rtol=1e-6)


def test_legacy_shapes_must_match_without_broadcast():
    a = np.ones((2, 3), dtype=np.float32)
    b = np.ones((3,), dtype=np.float32)
    with pytest.raises(RuntimeError, match="same shape"):
        run_node("Add", [a, b], np.float32, 6)


def test_bad_broadcast_names_the_node():
    a = np.ones((2, 3), dtype=np.float32)
    b = np.ones((4,), dtype=np.float32)
    with pytest.raises(RuntimeError, match="Add"):
        run_node("Add", [a, b], np.float32, 14)


def test_max_min_propagate_nan():
    a = np.array([1.0, np.nan, 3.0, -np.inf], dtype=np.float32)
    b = np.array([np.nan, 2.0, 1.0, 0.0], dtype=np.float32)
    np.testing.assert_array_equal(run_node("Max", [a, b], np.float32, 13), np.maximum(a, b))
    np.testing.assert_array_equal(run_node("Min", [a, b], np.float32, 13), np.minimum(a, b))


def test_clip_without_bounds_keeps_infinities():
    x = np.array([-np.inf, -1.0, np.nan, 2.0, np.inf], dtype=np.float32)
    np.testing.assert_array_equal(run_node("Clip", [x], np.float32, 13), x)


def test_float16_mean_rounds_once():
    a = np.array([1.0, 2049.0, 0.1], dtype=np.float16)
    b = np.array([2.0, 1.0, 0.2], dtype=np.float16)
    c = np.array([4.0, 1.0, 0.3], dtype=np.float16)
    ref = ((a.astype(np.float32) + b + c) / 3).astype(np.float16)
    np.testing.assert_array_equal(run_node("Mean", [a, b, c], np.float16, 13), ref)
