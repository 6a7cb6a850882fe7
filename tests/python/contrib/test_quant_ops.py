"""Quantized com.microsoft ops vs ONNX Runtime 1.30, exact for integer outputs:
DynamicQuantizeMatMul, MatMulIntegerToFloat, QGemm, QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearConcat, QLinearWhere, QLinearSoftmax, QLinearAveragePool, QLinearGlobalAveragePool.
int8 weights stay within [-64, 64) so ONNX Runtime's u8s8 AVX2 kernels cannot saturate."""
import numpy as np
import pytest

from contrib_util import Const, compare, onyx_fails, ort_outputs, rng, run_both_fail, run_onyx_only

F32 = np.float32
QTYPES = {"uint8": (np.uint8, 0, 256), "int8": (np.int8, -128, 128)}


def q(r, shape, qtype, lo=None, hi=None):
    t, qlo, qhi = QTYPES[qtype]
    return r.integers(qlo if lo is None else lo, qhi if hi is None else hi, shape).astype(t)


def s(v):
    return np.array(v, F32)


def zp(v, qtype):
    return np.array(v, QTYPES[qtype][0])


# ---------------------------------------------------------------- integer matmuls
@pytest.mark.parametrize("b_type", ["uint8", "int8"])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("a_shape", [(4, 32), (2, 3, 32)])
def test_dynamic_quantize_matmul(b_type, per_column, a_shape):
    r = rng(1)
    b = q(r, (32, 16), b_type, *((-64, 64) if b_type == "int8" else (None, None)))
    bs = (r.random(16) * 0.1 + 0.01).astype(F32) if per_column else s(0.05)
    bz = q(r, (16,) if per_column else (), b_type, -5 if b_type == "int8" else 120, 5 if b_type == "int8" else 136)
    ins = {"A": (r.standard_normal(a_shape) * 2).astype(F32), "B": Const(b), "b_scale": Const(bs),
           "b_zero_point": Const(bz), "bias": Const(r.standard_normal(16).astype(F32)) if per_column else None}
    compare("DynamicQuantizeMatMul", ins, ["y"])


def test_dynamic_quantize_matmul_feeds_and_all_zero_input():
    r = rng(2)
    b = q(r, (8, 5), "uint8")
    compare("DynamicQuantizeMatMul", {"A": r.standard_normal((3, 8)).astype(F32), "B": b, "b_scale": s(0.02)}, ["y"])
    compare("DynamicQuantizeMatMul", {"A": np.zeros((3, 8), F32), "B": b, "b_scale": s(0.02)}, ["y"])
    compare("DynamicQuantizeMatMul", {"A": np.abs(r.standard_normal((3, 8))).astype(F32), "B": b, "b_scale": s(0.02)},
            ["y"])


@pytest.mark.parametrize("a_type,b_type", [("uint8", "uint8"), ("uint8", "int8"), ("int8", "int8")])
@pytest.mark.parametrize("zero_points", [False, True])
def test_matmul_integer_to_float(a_type, b_type, zero_points):
    r = rng(3)
    a = q(r, (2, 3, 32), a_type)
    b = q(r, (32, 16), b_type, *((-64, 64) if b_type == "int8" else (None, None)))
    ins = {"A": a, "B": Const(b), "a_scale": s(0.02), "b_scale": Const((r.random(16) * 0.1).astype(F32)),
           "a_zero_point": zp(120 if a_type == "uint8" else 3, a_type) if zero_points else None,
           "b_zero_point": Const(zp(128 if b_type == "uint8" else -2, b_type)) if zero_points else None,
           "bias": Const(r.standard_normal(16).astype(F32))}
    compare("MatMulIntegerToFloat", ins, ["y"])


def test_matmul_integer_to_float_batched_b():
    r = rng(4)
    ins = {"A": q(r, (2, 3, 8), "uint8"), "B": q(r, (2, 8, 5), "uint8"), "a_scale": s(0.1), "b_scale": s(0.03),
           "a_zero_point": zp(100, "uint8"), "b_zero_point": zp(130, "uint8")}
    compare("MatMulIntegerToFloat", ins, ["y"])


QGEMM_CASES = {
    "float_out": ({}, False, False, None),
    "quant_out": ({}, True, False, None),
    "transB_per_column_C_alpha": ({"transB": 1, "alpha": 0.7}, True, True, (16,)),
    "transA_int8": ({"transA": 1}, True, False, (5, 16)),
    "float_out_C_row": ({}, False, False, (1, 16)),
    "quant_out_C_col": ({"transA": 1, "transB": 1}, True, True, (5, 1)),
}


@pytest.mark.parametrize("case", list(QGEMM_CASES))
@pytest.mark.parametrize("qtype", ["uint8", "int8"])
def test_qgemm(case, qtype):
    attrs, quant_out, per_column, c_shape = QGEMM_CASES[case]
    r = rng(5)
    M, K, N = 5, 32, 16
    a = q(r, (K, M) if attrs.get("transA") else (M, K), qtype)
    b = q(r, (N, K) if attrs.get("transB") else (K, N), "int8", -64, 64)
    ins = {"A": a, "a_scale": s(0.02), "a_zero_point": zp(100 if qtype == "uint8" else 2, qtype), "B": Const(b),
           "b_scale": Const((r.random(N) * 0.1).astype(F32) if per_column else s(0.05)),
           "b_zero_point": Const(np.zeros((N,) if per_column else (), np.int8)),
           "C": Const(r.integers(-500, 500, c_shape).astype(np.int32)) if c_shape else None,
           "y_scale": s(0.5) if quant_out else None, "y_zero_point": zp(120 if qtype == "uint8" else -3, qtype) if quant_out else None}
    compare("QGemm", ins, ["y"] if quant_out else [("y", F32)], **attrs)


# ---------------------------------------------------------------- QLinear pointwise
BINARY_SHAPES = [((2, 3, 64), (2, 3, 64)), ((2, 3, 64), (64,)), ((1,), (2, 3, 64)), ((2, 3, 64), ()),
                 ((2, 1, 64), (1, 3, 1)), ((64, 64), (64, 1)), ((64, 1), (1, 64))]


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=[f"{a}x{b}" for a, b in BINARY_SHAPES])
def test_qlinear_binary(op, qtype, shapes):
    r = rng(6)
    zps = (121, 133, 127) if qtype == "uint8" else (-3, 5, 1)  # odd output zero points exercise rounding ties
    ins = {"A": q(r, shapes[0], qtype), "A_scale": s(0.02), "A_zero_point": zp(zps[0], qtype),
           "B": q(r, shapes[1], qtype), "B_scale": s(0.03), "B_zero_point": zp(zps[1], qtype),
           "C_scale": s(0.05 if op == "QLinearAdd" else 0.3), "C_zero_point": zp(zps[2], qtype)}
    compare(op, ins, ["C"])


def test_qlinear_binary_default_zero_points_and_saturation():
    # ONNX Runtime's type inference refuses omitted A/B zero points; the same node with explicit
    # zero points, run in ONNX Runtime, is the reference. The large scales saturate many outputs.
    r = rng(7)
    for op in ["QLinearAdd", "QLinearMul"]:
        a, b = q(r, (300,), "uint8"), q(r, (300,), "uint8")
        explicit = {"A": a, "A_scale": s(0.5), "A_zero_point": zp(0, "uint8"), "B": b, "B_scale": s(0.4),
                    "B_zero_point": zp(0, "uint8"), "C_scale": s(0.1), "C_zero_point": zp(0, "uint8")}
        expected = ort_outputs(op, explicit, ["C"])[0]
        got = run_onyx_only(op, {"A": a, "A_scale": s(0.5), "A_zero_point": None, "B": b, "B_scale": s(0.4),
                                 "B_zero_point": None, "C_scale": s(0.1)}, ["C"])[0]
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("op,attrs", [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.1}),
                                      ("QLinearLeakyRelu", {"alpha": 0.37})])
@pytest.mark.parametrize("qtype", ["uint8", "int8"])
def test_qlinear_lookup_ops(op, attrs, qtype):
    t, lo, hi = QTYPES[qtype]
    r = rng(8)
    x = np.arange(lo, hi).astype(t)  # every input value
    for trial in range(3):
        xs, ys = F32(r.uniform(0.005, 0.2)), F32(r.uniform(0.5 / 256, 2 / 256) if op == "QLinearSigmoid" else 0.05)
        ins = {"X": x, "X_scale": s(xs), "X_zero_point": zp(r.integers(lo, hi), qtype), "Y_scale": s(ys),
               "Y_zero_point": zp(r.integers(lo, lo + 20), qtype)}
        compare(op, ins, ["Y"], **attrs)


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_qlinear_concat(qtype, axis):
    r = rng(9)
    shapes = {0: [(2, 3, 4), (3, 3, 4), (1, 3, 4)], 1: [(2, 3, 4), (2, 5, 4), (2, 1, 4)],
              -1: [(2, 3, 4), (2, 3, 2), (2, 3, 7)]}[axis]
    zy = 128 if qtype == "uint8" else 0
    ins = {"Y_scale": s(0.05), "Y_zero_point": zp(zy, qtype)}
    params = [(0.05, zy), (0.02, zy + 3), (0.11, zy - 7)]  # the first needs no requantization
    for i, (shape, (sc, z)) in enumerate(zip(shapes, params)):
        ins.update({f"X{i}": q(r, shape, qtype), f"X{i}_scale": s(sc), f"X{i}_zero_point": zp(z, qtype)})
    compare("QLinearConcat", ins, ["Y"], axis=axis)


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("shapes", [((16, 16), (16, 16), (16, 16)),   # every code of X and Y
                                    ((1, 16), (16, 16), (16, 1)),     # all three broadcast
                                    ((16, 16), (), (1,))])            # scalar X and Y
def test_qlinear_where(qtype, shapes):
    t, lo, hi = QTYPES[qtype]
    r = rng(12)
    c_shape, x_shape, y_shape = shapes
    x = np.arange(lo, hi).astype(t).reshape(16, 16) if x_shape == (16, 16) else q(r, x_shape, qtype)
    y = q(r, y_shape, qtype)
    # Z's parameters: X's own (a copy), then requantized with a larger and a smaller scale.
    for zs, zz in [(0.05, lo + 100), (0.11, lo + 3), (0.013, lo + 200)]:
        ins = {"condition": r.integers(0, 2, c_shape).astype(bool), "X": x, "x_scale": s(0.05),
               "x_zero_point": zp(lo + 100, qtype), "Y": y, "y_scale": s(0.031), "y_zero_point": zp(lo + 7, qtype),
               "z_scale": s(zs), "z_zero_point": zp(zz, qtype)}
        compare("QLinearWhere", ins, ["Z"])


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("opset,axis,shape", [(13, -1, (2, 3, 10)), (13, 1, (2, 7, 4)), (11, 1, (2, 3, 4)),
                                              (12, -1, (4, 17)), (13, 0, (5, 3)),
                                              (13, -1, (1, 4, 16, 128))])  # attention's rows (BERT QDQ)
def test_qlinear_softmax(qtype, opset, axis, shape):
    r = rng(10)
    ins = {"X": q(r, shape, qtype), "X_scale": s(0.08), "x_zero_point": zp(3, qtype), "y_scale": s(1 / 256),
           "y_zero_point": zp(0 if qtype == "uint8" else -128, qtype)}
    compare("QLinearSoftmax", ins, ["Y"], **{"opset": opset, "axis": axis})


# ---------------------------------------------------------------- QLinear pools
POOL_CASES = [
    dict(kernel_shape=[3, 3]),
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
    dict(kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER", count_include_pad=1),
    dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad="VALID"),
    dict(kernel_shape=[3, 3], channels_last=1, pads=[0, 1, 1, 0]),
]


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("attrs", POOL_CASES, ids=[str(i) for i in range(len(POOL_CASES))])
def test_qlinear_average_pool_2d(qtype, attrs):
    r = rng(11)
    zps = (120, 131) if qtype == "uint8" else (-3, 5)
    ins = {"X": q(r, (2, 3, 9, 10), qtype), "x_scale": s(0.05), "x_zero_point": zp(zps[0], qtype), "y_scale": s(0.03),
           "y_zero_point": zp(zps[1], qtype)}
    compare("QLinearAveragePool", ins, ["Y"], threads=2, **attrs)


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
def test_qlinear_average_pool_1d_3d(qtype):
    r = rng(12)
    base = {"x_scale": s(0.05), "x_zero_point": zp(7, qtype), "y_scale": s(0.03), "y_zero_point": zp(9, qtype)}
    compare("QLinearAveragePool", dict({"X": q(r, (2, 3, 11), qtype)}, **base), ["Y"], kernel_shape=[3], strides=[2],
            pads=[1, 1])
    compare("QLinearAveragePool", dict({"X": q(r, (1, 2, 5, 6, 7), qtype)}, **base), ["Y"], kernel_shape=[2, 2, 3],
            pads=[1, 0, 1, 0, 1, 1])


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("shape", [(2, 3, 9, 10), (1, 16, 7), (2, 5, 3, 4, 2), (2, 7, 7, 150)])
def test_qlinear_global_average_pool(qtype, channels_last, shape):
    r = rng(13)
    zps = (120, 131) if qtype == "uint8" else (-3, 5)
    ins = {"X": q(r, shape, qtype), "x_scale": s(0.05), "x_zero_point": zp(zps[0], qtype), "y_scale": s(0.03),
           "y_zero_point": zp(zps[1], qtype)}
    compare("QLinearGlobalAveragePool", ins, ["Y"], channels_last=channels_last)


def test_quant_rejections():
    r = rng(14)
    a = q(r, (4, 8), "uint8")
    run_both_fail("QLinearAdd", {"A": a, "A_scale": s(0.1), "A_zero_point": None, "B": q(r, (3, 8), "uint8"),
                                 "B_scale": s(0.1), "B_zero_point": None, "C_scale": s(0.1)}, ["C"])
    run_both_fail("MatMulIntegerToFloat", {"A": a, "B": q(r, (7, 5), "uint8"), "a_scale": s(0.1), "b_scale": s(0.1)},
                  ["y"])
    run_both_fail("QGemm", {"A": a, "a_scale": s(0.1), "a_zero_point": zp(0, "uint8"), "B": q(r, (8, 5), "uint8"),
                            "b_scale": s(np.ones(3) * 0.1), "b_zero_point": zp(np.zeros(3), "uint8")}, [("y", F32)])
    onyx_fails("QLinearAveragePool", {"X": q(r, (1, 2, 4, 4), "uint8"), "x_scale": s(0.1), "x_zero_point": None,
                                      "y_scale": s(0.1)}, ["Y"], kernel_shape=[3], match="kernel_shape")
    onyx_fails("QLinearConcat", {"Y_scale": s(0.1), "Y_zero_point": zp(0, "uint8"), "X0": a, "X0_scale": s(0.1),
                                 "X0_zero_point": zp(0, "uint8"), "X1": q(r, (4, 8), "int8"), "X1_scale": s(0.1),
                                 "X1_zero_point": zp(0, "int8")}, ["Y"], axis=0, match="element type")
    where = {"condition": r.integers(0, 2, (4, 8)).astype(bool), "X": a, "x_scale": s(0.1),
             "x_zero_point": zp(0, "uint8"), "Y": q(r, (3, 8), "uint8"), "y_scale": s(0.1),
             "y_zero_point": zp(0, "uint8"), "z_scale": s(0.1), "z_zero_point": zp(0, "uint8")}
    run_both_fail("QLinearWhere", where, ["Z"])  # (4, 8) and (3, 8) do not broadcast
    onyx_fails("QLinearWhere", {**where, "Y": q(r, (4, 8), "int8"), "y_zero_point": zp(0, "int8")}, ["Z"],
               match="one type")
