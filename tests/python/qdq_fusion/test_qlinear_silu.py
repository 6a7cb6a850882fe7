"""QLinearSiluFusion (issue 15): com.microsoft QLinearSigmoid(x) then QLinearMul(x, sigmoid) -
YOLO's int8 SiLU - becomes com.onyx.QLinearSiLU, one 256-entry lookup. Its codes must equal
ONNX Runtime 1.31.1's two ops exactly, for every code, uint8 and int8, either Mul order, in
QOperator and QDQ form; the fusion must not happen when the Sigmoid's output is read elsewhere or
the Mul reads x or the sigmoid with other parameters."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model
import qdq_models as qm

SHAPE = [2, 8, 40, 40]  # large enough for both threads to take part


def _qop(name, *, signed=False, swap=False, sig_output=False, mul_x_scale=None, seed=0):
    rng = np.random.default_rng(seed)
    act, np_act = (TensorProto.INT8, np.int8) if signed else (TensorProto.UINT8, np.uint8)
    lo = -128 if signed else 0
    inits = [numpy_helper.from_array(v, n) for v, n in [
        (np.array(rng.uniform(0.02, 0.1), np.float32), "xs"), (np.array(lo + rng.integers(80, 170), np_act), "xz"),
        (np.array(1 / 256, np.float32), "ss"), (np.array(lo, np_act), "sz"),
        (np.array(rng.uniform(0.02, 0.08), np.float32), "ys"), (np.array(lo + rng.integers(10, 40), np_act), "yz"),
        (np.array(mul_x_scale or 0.0, np.float32), "xs2")]]
    xs = "xs2" if mul_x_scale else "xs"
    mul_in = (["s", "ss", "sz", "x", xs, "xz"] if swap else ["x", xs, "xz", "s", "ss", "sz"]) + ["ys", "yz"]
    nodes = [helper.make_node("QLinearSigmoid", ["x", "xs", "xz", "ss", "sz"], ["s"], domain="com.microsoft"),
             helper.make_node("QLinearMul", mul_in, ["y"], domain="com.microsoft")]
    outputs = [helper.make_tensor_value_info("y", act, None)]
    if sig_output:
        outputs.append(helper.make_tensor_value_info("s", act, None))
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", act, SHAPE)], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    return save_model(model, name + ".onnx")


def _qdq(name, signed=False):
    """x float -> Q -> DQ -> Sigmoid -> Q -> DQ, Mul(DQ(x), DQ(s)) -> Q -> DQ -> y float."""
    act, np_act = (TensorProto.INT8, np.int8) if signed else (TensorProto.UINT8, np.uint8)
    lo = -128 if signed else 0
    inits = [numpy_helper.from_array(v, n) for v, n in [
        (np.array(0.05, np.float32), "xs"), (np.array(lo + 128, np_act), "xz"),
        (np.array(1 / 256, np.float32), "ss"), (np.array(lo, np_act), "sz"),
        (np.array(0.04, np.float32), "ys"), (np.array(lo + 20, np_act), "yz")]]
    nodes = [helper.make_node("QuantizeLinear", ["xf", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("Sigmoid", ["xd"], ["sf"]),
             helper.make_node("QuantizeLinear", ["sf", "ss", "sz"], ["sq"]),
             helper.make_node("DequantizeLinear", ["sq", "ss", "sz"], ["sd"]),
             helper.make_node("Mul", ["xd", "sd"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("xf", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return save_model(model, name + ".onnx")


def _codes(signed):
    # Every code, repeated to fill the shape.
    codes = np.resize(np.arange(256, dtype=np.uint8), int(np.prod(SHAPE))).reshape(SHAPE)
    return codes.view(np.int8) if signed else codes


def _check(path, feed):
    expected = run_ort(path, feed)
    for t in (1, 2):
        got = run_onyx(path, feed, threads=t)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape
            assert np.count_nonzero(g != e) == 0, f"differs from ONNX Runtime's at {t} threads"


def _ops(path):
    return qm.op_counts(qm.onyx_optimize(path))


@pytest.mark.parametrize("signed,swap,seed", [(False, False, 0), (False, True, 1), (True, False, 2), (True, True, 3)])
def test_qoperator_silu_fuses_and_matches_onnxruntime(signed, swap, seed):
    path = _qop(f"silu_qop_{signed}_{swap}", signed=signed, swap=swap, seed=seed)
    ops = _ops(path)
    assert ops.get("com.onyx.QLinearSiLU") == 1, ops
    assert "com.microsoft.QLinearMul" not in ops and "com.microsoft.QLinearSigmoid" not in ops, ops
    _check(path, {"x": _codes(signed)})


def test_qdq_silu_fuses_and_matches_onnxruntime():
    # (uint8: the QDQ fusion makes int8 Sigmoid groups no QLinearSigmoid.)
    path = _qdq("silu_qdq", False)
    ops = _ops(path)
    assert ops.get("com.onyx.QLinearSiLU") == 1, ops
    xf = np.random.default_rng(5).uniform(-7, 7, SHAPE).astype(np.float32)
    _check(path, {"xf": xf})


def test_sigmoid_read_elsewhere_is_not_fused():
    path = _qop("silu_sig_out", sig_output=True)
    ops = _ops(path)
    assert "com.onyx.QLinearSiLU" not in ops and ops.get("com.microsoft.QLinearSigmoid") == 1, ops
    _check(path, {"x": _codes(False)})


def test_mul_with_other_x_parameters_is_not_fused():
    path = _qop("silu_other_scale", mul_x_scale=0.031)
    ops = qm.op_counts(qm.onyx_optimize(path, "--disable", "QLinearLookupFusion"))
    assert "com.onyx.QLinearSiLU" not in ops and ops.get("com.microsoft.QLinearMul") == 1, ops
    # Still a function of x's code: QLinearLookupFusion makes the pair one table (checked
    # against ONNX Runtime's two ops below).
    assert _ops(path) == {"com.onyx.QLinearLookup": 1}
    _check(path, {"x": _codes(False)})


def _direct(name, params_as_inputs, zp_type=None):
    """com.onyx.QLinearSiLU as a model states it; params_as_inputs: the scales and zero points are
    graph inputs (the table is made at each run), else initializers (made once)."""
    zp_type = zp_type or TensorProto.UINT8
    names = ["xs", "xz", "ss", "sz", "ys", "yz"]
    types = [TensorProto.FLOAT, zp_type] * 3
    node = helper.make_node("QLinearSiLU", ["x"] + names, ["y"], domain="com.onyx")
    inputs = [helper.make_tensor_value_info("x", TensorProto.UINT8, SHAPE)]
    if params_as_inputs:
        inputs += [helper.make_tensor_value_info(n, t, []) for n, t in zip(names, types)]
    graph = helper.make_graph([node], name, inputs, [helper.make_tensor_value_info("y", TensorProto.UINT8, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.onyx", 1)])
    return save_model(model, name + ".onnx")


def test_direct_op_with_runtime_parameters_matches_the_two_ops():
    path = _direct("silu_direct", True)
    params = {"xs": np.array(0.07, np.float32), "xz": np.array(140, np.uint8), "ss": np.array(1 / 255, np.float32),
              "sz": np.array(3, np.uint8), "ys": np.array(0.03, np.float32), "yz": np.array(25, np.uint8)}
    x = _codes(False)
    got = run_onyx(path, {"x": x, **params}, threads=2)[0]
    # ONNX Runtime's two ops on the same parameters.
    ref = _qop("silu_ref", seed=0)
    import onnx
    model = onnx.load(ref)
    for init in model.graph.initializer:
        if init.name in params:
            init.CopyFrom(numpy_helper.from_array(params[init.name], init.name))
    ref = save_model(model, "silu_ref_params.onnx")
    assert np.array_equal(got, run_ort(ref, {"x": x})[0])


def test_direct_op_rejects_a_zero_point_of_another_type():
    path = _direct("silu_bad_zp", True, zp_type=TensorProto.INT8)
    feed = {"x": _codes(False), "xs": np.array(0.07, np.float32), "xz": np.array(1, np.int8),
            "ss": np.array(0.004, np.float32), "sz": np.array(0, np.int8), "ys": np.array(0.03, np.float32),
            "yz": np.array(0, np.int8)}
    with pytest.raises(RuntimeError, match="X_zero_point' must be a scalar of type uint8"):
        run_onyx(path, feed)
