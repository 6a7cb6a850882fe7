"""Gelu, BiasGelu, FastGelu, QuickGelu (vs ONNX Runtime 1.30), BiasAdd and BiasSoftmax (CUDA-only
in ONNX Runtime, so vs numpy), and FusedMatMul (vs ONNX Runtime)."""
import math

import numpy as np
import pytest

from contrib_util import Const, compare, onyx_fails, rng, run_both_fail, run_onyx_only

F32 = np.float32
erf = np.vectorize(math.erf)


def tol(dtype):
    return dict(rtol=1e-2, atol=1e-2) if dtype == np.float16 else dict(rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("dtype", [F32, np.float16])
@pytest.mark.parametrize("op,with_bias,attrs", [
    ("Gelu", False, {}), ("BiasGelu", True, {}), ("FastGelu", False, {}), ("FastGelu", True, {}),
    ("QuickGelu", False, {}), ("QuickGelu", False, {"alpha": 1.0}), ("QuickGelu", False, {"alpha": -0.5})])
def test_gelu_family(dtype, op, with_bias, attrs):
    r = rng(1)
    x = (r.standard_normal((2, 3, 16)) * 3).astype(dtype)
    inputs = {"x": x}
    if with_bias:
        inputs["bias"] = r.standard_normal((16,)).astype(dtype)
    compare(op, inputs, ["y"], **attrs, **tol(dtype))


def test_gelu_family_large_threaded():
    r = rng(2)
    x = (r.standard_normal((4, 128, 3072)) * 2).astype(F32)
    b = r.standard_normal((3072,)).astype(F32)
    compare("FastGelu", {"x": x, "bias": Const(b)}, ["y"], threads=4)
    compare("BiasGelu", {"x": x, "bias": b}, ["y"], threads=4)


def test_gelu_extremes():
    x = np.array([-1e4, -30.0, -5.0, -0.0, 0.0, 1e-20, 5.0, 30.0, 1e4, np.inf, -np.inf, np.nan], F32)
    for op in ["Gelu", "FastGelu", "QuickGelu"]:
        compare(op, {"x": x}, ["y"])


def test_gelu_double_vs_numpy():
    # ONNX Runtime has no double kernels for these; numpy is the reference.
    r = rng(3)
    x = r.standard_normal((3, 10)) * 3
    b = r.standard_normal((10,))
    got = run_onyx_only("BiasGelu", {"x": x, "b": b}, ["y"])[0]
    t = x + b
    np.testing.assert_allclose(got, 0.5 * t * (1 + erf(t / math.sqrt(2))), rtol=1e-12, atol=1e-12)
    got = run_onyx_only("QuickGelu", {"x": x}, ["y"], alpha=1.5)[0]
    np.testing.assert_allclose(got, x / (1 + np.exp(-1.5 * x)), rtol=1e-12, atol=1e-12)
    got = run_onyx_only("FastGelu", {"x": x, "b": b}, ["y"])[0]
    ref = 0.5 * t * (1 + np.tanh(math.sqrt(2 / math.pi) * (t + 0.044715 * t ** 3)))
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_gelu_bias_rejections():
    r = rng(4)
    x = r.standard_normal((2, 8)).astype(F32)
    run_both_fail("BiasGelu", {"x": x, "b": r.standard_normal((7,)).astype(F32)}, ["y"])
    run_both_fail("FastGelu", {"x": x, "b": r.standard_normal((2, 8)).astype(F32)}, ["y"])


# ---------------------------------------------------------------- BiasAdd (ORT: CUDA only)
@pytest.mark.parametrize("dtype", [F32, np.float16])
def test_bias_add_vs_numpy(dtype):
    r = rng(5)
    x = r.standard_normal((2, 9, 32)).astype(dtype)
    b = r.standard_normal((32,)).astype(dtype)
    s = r.standard_normal((2, 9, 32)).astype(dtype)
    got = run_onyx_only("BiasAdd", {"x": x, "bias": b, "skip": s}, ["y"])[0]
    ref = (x.astype(F32) + b.astype(F32) + s.astype(F32)).astype(dtype)
    np.testing.assert_allclose(got.astype(F32), ref.astype(F32), **tol(dtype))
    onyx_fails("BiasAdd", {"x": x, "bias": b[:5], "skip": s}, ["y"], match="bias")
    onyx_fails("BiasAdd", {"x": x, "bias": b, "skip": s[:1]}, ["y"], match="skip")


# ---------------------------------------------------------------- BiasSoftmax (ORT: CUDA only)
def ref_bias_softmax(x, bias, axis, inner):
    shape = x.shape
    n = int(np.prod(shape[axis:]))
    rows = x.size // n
    xb = x.reshape(rows, n).astype(np.float64)
    bb = bias.reshape(-1, n).astype(np.float64)
    group = rows // bb.shape[0]
    idx = np.arange(rows) // group if inner else np.arange(rows) % bb.shape[0]
    t = xb + bb[idx]
    e = np.exp(t - t.max(1, keepdims=True))
    return (e / e.sum(1, keepdims=True)).reshape(shape)


@pytest.mark.parametrize("case", [
    ((2, 4, 5, 7), (2, 1, 5, 7), 2, 1),   # (B, N, S, T) + (B, 1, S, T): mask per batch
    ((2, 4, 5, 7), (1, 4, 5, 7), 2, 0),   # + (1, N, S, T): bias per head
    ((2, 4, 5, 7), (2, 4, 5, 7), 2, 1),   # same shape
    ((3, 6, 10), (3, 1, 10), -1, 1),
    ((3, 6, 10), (6, 10), 2, 0),
    ((2, 3, 4), (2, 3, 4), 1, 0),         # softmax over the last two axes
])
@pytest.mark.parametrize("dtype", [F32, np.float16, np.float64])
def test_bias_softmax_vs_numpy(case, dtype):
    xs, bs, axis, inner = case
    r = rng(6)
    x = (r.standard_normal(xs) * 3).astype(dtype)
    b = (r.standard_normal(bs) * 3).astype(dtype)
    got = run_onyx_only("BiasSoftmax", {"x": x, "bias": b}, ["y"], axis=axis, is_inner_broadcast=inner, threads=2)[0]
    np.testing.assert_allclose(got.astype(np.float64), ref_bias_softmax(x, b, axis % x.ndim, inner),
                               **(tol(dtype) if dtype != np.float64 else dict(rtol=1e-12, atol=1e-12)))


def test_bias_softmax_rejections():
    r = rng(7)
    x = r.standard_normal((2, 4, 5)).astype(F32)
    onyx_fails("BiasSoftmax", {"x": x, "bias": r.standard_normal((3, 5)).astype(F32)}, ["y"], axis=2,
               is_inner_broadcast=0, match="does not broadcast")
    onyx_fails("BiasSoftmax", {"x": x, "bias": r.standard_normal((4, 6)).astype(F32)}, ["y"], axis=2,
               is_inner_broadcast=0, match="does not broadcast")
    onyx_fails("BiasSoftmax", {"x": x, "bias": x}, ["y"], axis=2, match="is_inner_broadcast")


# ---------------------------------------------------------------- FusedMatMul
FM_CASES = {
    "plain": ((2, 3, 4, 5), (2, 3, 5, 6), {}),
    "alpha": ((2, 3, 4, 5), (2, 3, 5, 6), {"alpha": 0.5}),
    "transA": ((2, 3, 5, 4), (2, 3, 5, 6), {"transA": 1}),
    "transB": ((2, 3, 4, 5), (2, 3, 6, 5), {"transB": 1, "alpha": -2.0}),
    "transA_transB": ((3, 5, 4), (3, 6, 5), {"transA": 1, "transB": 1}),
    "broadcast": ((2, 3, 4, 5), (5, 6), {}),
    "broadcast_batch": ((2, 1, 4, 5), (1, 3, 5, 6), {}),
    "transBatchA": ((4, 2, 3, 5), (2, 3, 5, 6), {"transBatchA": 1}),
    "transBatchA_transA": ((5, 2, 3, 4), (2, 3, 5, 6), {"transBatchA": 1, "transA": 1}),
    "transBatchB": ((2, 3, 4, 5), (5, 2, 3, 6), {"transBatchB": 1}),
    "transBatchB_transB": ((2, 3, 4, 5), (6, 2, 3, 5), {"transBatchB": 1, "transB": 1}),
    "transBatch_both": ((4, 3, 5), (5, 3, 6), {"transBatchA": 1, "transBatchB": 1}),
    "vector_a": ((5,), (2, 3, 5, 6), {"transA": 1}),
    "vector_b": ((2, 3, 4, 5), (5,), {"transB": 1}),
    "matrix": ((7, 5), (6, 5), {"transB": 1, "alpha": 2.0}),
}


@pytest.mark.parametrize("case", list(FM_CASES))
def test_fused_matmul(case):
    a_shape, b_shape, attrs = FM_CASES[case]
    r = rng(8)
    a = r.standard_normal(a_shape).astype(F32)
    b = r.standard_normal(b_shape).astype(F32)
    compare("FusedMatMul", {"a": a, "b": b}, ["y"], **attrs)


# A constant 2-D B is packed when the session is created; A takes every layout.
FM_CONST_CASES = {
    "matrix": ((7, 5), (5, 6), {}),
    "batched": ((2, 3, 4, 5), (5, 6), {"alpha": 0.5}),
    "transA": ((2, 3, 5, 4), (5, 6), {"transA": 1}),
    "transB": ((2, 3, 4, 5), (6, 5), {"transB": 1, "alpha": -2.0}),
    "transA_transB": ((3, 5, 4), (6, 5), {"transA": 1, "transB": 1}),
    "vector_a": ((5,), (5, 6), {"transA": 1}),
    "wide": ((2, 9, 40), (40, 70), {}),
}


@pytest.mark.parametrize("case", list(FM_CONST_CASES))
def test_fused_matmul_constant_b(case):
    a_shape, b_shape, attrs = FM_CONST_CASES[case]
    r = rng(11)
    a = r.standard_normal(a_shape).astype(F32)
    b = r.standard_normal(b_shape).astype(F32)
    compare("FusedMatMul", {"a": a, "b": Const(b)}, ["y"], **attrs)


@pytest.mark.parametrize("a_shape,trans_a", [((4, 2, 3, 5), 0), ((5, 2, 3, 4), 1), ((1, 3, 5), 0)])
def test_fused_matmul_constant_b_trans_batch_a_vs_numpy(a_shape, trans_a):
    # ONNX Runtime rejects transBatchA with a 2-D B; Onyx reads A's batches in place (numpy reference).
    r = rng(13)
    a = r.standard_normal(a_shape)
    b = r.standard_normal((5, 6))
    got = run_onyx_only("FusedMatMul", {"a": a.astype(F32), "b": Const(b.astype(F32))}, ["y"], transBatchA=1,
                        transA=trans_a)[0]
    at = np.moveaxis(a, 0, -2)  # (d1.., d0, dn-1)
    if trans_a:
        at = np.swapaxes(at, -1, -2)
    np.testing.assert_allclose(got, at @ b, rtol=1e-4, atol=1e-4)


def test_fused_matmul_constant_b_rejects_bad_inner_dim():
    r = rng(12)
    a = r.standard_normal((2, 4, 7)).astype(F32)
    b = r.standard_normal((5, 6)).astype(F32)
    onyx_fails("FusedMatMul", {"a": a, "b": Const(b)}, ["y"], match="inner dimensions differ")


def test_fused_matmul_fp16_constant_and_threads():
    r = rng(9)
    a = r.standard_normal((2, 12, 64, 32)).astype(F32)
    b = r.standard_normal((2, 12, 64, 32)).astype(F32)
    compare("FusedMatMul", {"a": a, "b": b}, ["y"], transB=1, alpha=0.125, threads=4)
    w = r.standard_normal((32, 48)).astype(F32)
    compare("FusedMatMul", {"a": a, "b": Const(w)}, ["y"], threads=4)
    compare("FusedMatMul", {"a": a[0, :2].astype(np.float16), "b": b[0, :2].astype(np.float16)}, ["y"], transB=1,
            rtol=1e-2, atol=1e-2)


def test_fused_matmul_double_vs_numpy():
    r = rng(10)
    a = r.standard_normal((3, 2, 4))
    b = r.standard_normal((4, 2, 5))
    got = run_onyx_only("FusedMatMul", {"a": a, "b": b}, ["y"], transBatchA=1, transBatchB=1, alpha=3.0)[0]
    ref = 3.0 * (a.transpose(1, 0, 2) @ b.transpose(1, 0, 2))
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_fused_matmul_rejections():
    r = rng(11)
    a = r.standard_normal((2, 4, 5)).astype(F32)
    run_both_fail("FusedMatMul", {"a": a, "b": r.standard_normal((2, 4, 6)).astype(F32)}, ["y"])
    run_both_fail("FusedMatMul", {"a": a, "b": r.standard_normal((3, 5, 6)).astype(F32)}, ["y"])
