"""Batched MatMul / com.microsoft FusedMatMul (attention's per-head products) on several threads:
whole products go to each thread when the batch shares out evenly, else the GEMM splits inside.
Either way every product is computed as on one thread, so the outputs must be bit-for-bit those
of a 1-thread session, and match ONNX Runtime within float tolerance."""
import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx

TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
         np.dtype(np.int64): TensorProto.INT64, np.dtype(np.float64): TensorProto.DOUBLE}


def make_model(op, a, b, b_const=False, **attrs):
    ins = [helper.make_tensor_value_info("A", TYPES[a.dtype], list(a.shape))]
    inits = [numpy_helper.from_array(b, "B")] if b_const else []
    if not b_const:
        ins.append(helper.make_tensor_value_info("B", TYPES[b.dtype], list(b.shape)))
    out = helper.make_tensor_value_info("Y", TYPES[a.dtype], None)
    domain = "com.microsoft" if op == "FusedMatMul" else ""
    node = helper.make_node(op, ["A", "B"], ["Y"], domain=domain, **attrs)
    m = helper.make_model(helper.make_graph([node], "g", ins, [out], initializer=inits),
                          opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m.SerializeToString()


def run(mod, model, feeds, threads):
    so = mod.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return mod.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def check(op, a, b, b_const=False, **attrs):
    model = make_model(op, a, b, b_const, **attrs)
    feeds = {"A": a} if b_const else {"A": a, "B": b}
    one = run(onyx, model, feeds, 1)
    for threads in (2, 3, 4):
        got = run(onyx, model, feeds, threads)
        assert got.dtype == one.dtype and got.shape == one.shape
        assert np.array_equal(got, one), f"{threads} threads differ from 1: max |d| {np.abs(got - one).max()}"
    ref = run(onnxruntime, model, feeds, 1)
    assert one.shape == ref.shape
    if np.issubdtype(a.dtype, np.integer):
        np.testing.assert_array_equal(one, ref)
    else:
        tol = 2e-2 if a.dtype == np.float16 else 1e-4
        np.testing.assert_allclose(one.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol)


def data(shape, dtype=np.float32, seed=0):
    r = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return r.integers(-50, 50, shape).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


# Batches: 12 heads (even: whole products per thread), 3 (odd: the GEMM splits inside),
# 1, and a broadcast batch; products below and above the size the SGEMM splits itself.
MATMUL_SHAPES = [
    ([1, 12, 128, 64], [1, 12, 64, 128]),   # Q K' per head
    ([1, 12, 128, 128], [1, 12, 128, 64]),  # P V per head
    ([2, 3, 96, 40], [2, 3, 40, 72]),
    ([3, 256, 64], [3, 64, 256]),           # odd batch, each product split inside
    ([5, 1, 33, 17], [4, 17, 9]),           # broadcast batch dims
    ([12, 1, 64], [12, 64, 128]),           # short rows: always split by batch
    ([1, 200, 96], [96, 150]),              # one product
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_float(sa, sb):
    check("MatMul", data(sa), data(sb, seed=1))


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int64])
def test_matmul_other_types(dtype):
    check("MatMul", data([6, 40, 24], dtype), data([6, 24, 30], dtype, seed=1))


@pytest.mark.parametrize("sa,sb,attrs", [
    ([1, 12, 128, 64], [1, 12, 128, 64], dict(alpha=0.125, transB=1)),  # scaled Q K'
    ([1, 12, 64, 128], [1, 12, 64, 128], dict(transA=1, alpha=0.5)),
    ([3, 2, 70, 33], [3, 2, 50, 33], dict(transB=1)),                     # odd batch count
    ([128, 12, 64], [128, 12, 64], dict(transBatchA=1, transBatchB=1, transB=1)),
    ([12, 48, 20], [12, 20, 36], {}),
])
def test_fused_matmul(sa, sb, attrs):
    check("FusedMatMul", data(sa), data(sb, seed=1), **attrs)


def test_fused_matmul_constant_b_transposed_a():
    # A constant B is packed once; a transposed A runs one packed product per batch.
    check("FusedMatMul", data([6, 48, 40]), data([48, 56], seed=1), b_const=True, transA=1, alpha=0.25)
