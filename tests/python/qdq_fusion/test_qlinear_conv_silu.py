"""com.onyx.QLinearConvSiLU (issue 15): a channels-last com.microsoft.QLinearConv and the SiLU that
reads it (com.onyx.QLinearSiLU), one node whose kernel looks each requantized code up in the SiLU's
table before storing it (QLinearConvSiluFusion makes it; YOLO's 56 conv + SiLU pairs). Its codes
must equal ONNX Runtime 1.31.1's QLinearConv (channels_last) + QLinearSigmoid + QLinearMul exactly:
the fused graph (test_qdq_nhwc_yolo.py), and the op stated directly with its SiLU's parameters as
run-time inputs (the table made at each run)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import ort_exact_s8, run_onyx, run_ort, save_model
import qdq_models as qm

M, C, H, W = 40, 8, 9, 7


def _conv_inits(rng, np_act, lo, w_zero=0):
    return [numpy_helper.from_array(v, n) for v, n in [
        (np.array(0.05, np.float32), "xs"), (np.array(lo + 120, np_act), "xz"),
        (ort_exact_s8(rng.integers(-100, 101, (M, C, 3, 3))), "w"),
        (rng.uniform(0.001, 0.01, M).astype(np.float32), "ws"), (np.full(M, w_zero, np.int8), "wz"),
        (np.array(0.06, np.float32), "ys"), (np.array(lo + 100, np_act), "yz"),
        (rng.integers(-900, 900, M).astype(np.int32), "b")]]


CONV_INPUTS = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]
PARAMS = {"ss": (TensorProto.FLOAT, np.float32(1 / 250)), "sz": (None, 2), "zs": (TensorProto.FLOAT, np.float32(0.035)),
          "zz": (None, 30)}


def _model(name, nodes, inits, act, inputs_extra=(), domains=("com.microsoft",)):
    inputs = [helper.make_tensor_value_info("x", act, [1, H, W, C])] + list(inputs_extra)
    graph = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info("z", act, None)], inits)
    opsets = [helper.make_opsetid("", 13)] + [helper.make_opsetid(d, 1) for d in domains]
    return save_model(helper.make_model(graph, opset_imports=opsets), name + ".onnx")


# w_zero 3: asymmetric weights, which the direct kernel does not take: the im2col rows and the GEMM,
# then the table over the output.
@pytest.mark.parametrize("signed,w_zero", [(False, 0), (True, 0), (False, 3)])
def test_direct_op_with_runtime_silu_parameters_matches_onnxruntime(signed, w_zero):
    rng = np.random.default_rng(7)
    act, np_act, lo = (TensorProto.INT8, np.int8, -128) if signed else (TensorProto.UINT8, np.uint8, 0)
    values = {n: (np.array(v, np.float32) if t else np.array(lo + v, np_act)) for n, (t, v) in PARAMS.items()}
    # ORT: the conv, then the Sigmoid and the Mul with the same parameters as constants.
    ref_nodes = [helper.make_node("QLinearConv", CONV_INPUTS, ["y"], domain="com.microsoft", channels_last=1, pads=[1] * 4),
                 helper.make_node("QLinearSigmoid", ["y", "ys", "yz", "ss", "sz"], ["s"], domain="com.microsoft"),
                 helper.make_node("QLinearMul", ["y", "ys", "yz", "s", "ss", "sz", "zs", "zz"], ["z"], domain="com.microsoft")]
    ref_inits = _conv_inits(rng, np_act, lo, w_zero) + [numpy_helper.from_array(v, n) for n, v in values.items()]
    ref = _model(f"conv_silu_ref_{signed}_{w_zero}", ref_nodes, ref_inits, act)
    # Onyx: the fused op, the SiLU's parameters fed at run time.
    rng = np.random.default_rng(7)
    node = helper.make_node("QLinearConvSiLU", CONV_INPUTS + list(PARAMS), ["z"], domain="com.onyx", channels_last=1,
                            pads=[1] * 4)
    extra = [helper.make_tensor_value_info(n, t or act, []) for n, (t, _) in PARAMS.items()]
    fused = _model(f"conv_silu_direct_{signed}_{w_zero}", [node], _conv_inits(rng, np_act, lo, w_zero), act, extra,
                   ("com.onyx",))
    info = np.iinfo(np_act)
    x = np.random.default_rng(8).integers(info.min, info.max + 1, (1, H, W, C)).astype(np_act)
    expected = run_ort(ref, {"x": x})[0]
    for t in (1, 2):
        got = run_onyx(fused, {"x": x, **values}, threads=t)[0]
        assert got.shape == expected.shape == (1, H, W, M)
        assert np.array_equal(got, expected), f"{np.count_nonzero(got != expected)} codes differ at {t} threads"


def test_channels_first_is_an_error():
    rng = np.random.default_rng(1)
    node = helper.make_node("QLinearConvSiLU", CONV_INPUTS + ["ss", "sz", "zs", "zz"], ["z"], domain="com.onyx")
    inits = _conv_inits(rng, np.uint8, 0) + [numpy_helper.from_array(np.array(v, np.float32) if t else np.array(v, np.uint8), n)
                                            for n, (t, v) in PARAMS.items()]
    path = _model("conv_silu_nchw", [node], inits, TensorProto.UINT8, domains=("com.onyx",))
    with pytest.raises(RuntimeError, match="supports channels_last = 1 only"):
        run_onyx(path, {"x": np.zeros((1, H, W, C), np.uint8)})
