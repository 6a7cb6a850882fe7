"""com.onyx.QLinearConvAdd (issue 15): a channels-last com.microsoft.QLinearConv and the residual
QLinearAdd that reads it, one node whose kernel sums each requantized code with the other image's
code in registers (QLinearConvAddFusion makes it; ResNet-50's 16 residual blocks, MobileNetV2's 10).
Its codes must equal ONNX Runtime 1.31.1's QLinearConv (channels_last) + QLinearAdd exactly: the
op stated directly with the add's parameters as run-time inputs (many scales and zero points, the
conv as the add's A and as its B), and the fused graphs (here and in test_qdq_nhwc_layout.py)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import ort_exact_s8, run_onyx, run_ort, save_model
import qdq_models as qm

M, C, H, W = 40, 8, 9, 7
CONV_INPUTS = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]


def _conv_inits(rng, np_act, lo, w_zero=0, ys=0.06, yz=100):
    return [numpy_helper.from_array(v, n) for v, n in [
        (np.array(0.05, np.float32), "xs"), (np.array(lo + 120, np_act), "xz"),
        (ort_exact_s8(rng.integers(-100, 101, (M, C, 3, 3))), "w"),
        (rng.uniform(0.001, 0.01, M).astype(np.float32), "ws"), (np.full(M, w_zero, np.int8), "wz"),
        (np.array(ys, np.float32), "ys"), (np.array(lo + yz, np_act), "yz"),
        (rng.integers(-900, 900, M).astype(np.int32), "b")]]


def _conv(out="y"):
    return helper.make_node("QLinearConv", CONV_INPUTS, [out], domain="com.microsoft", channels_last=1, pads=[1] * 4)


def _model(name, nodes, inits, inputs, outputs, domains=("com.microsoft",)):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    opsets = [helper.make_opsetid("", 13)] + [helper.make_opsetid(d, 1) for d in domains]
    return save_model(helper.make_model(graph, opset_imports=opsets), name + ".onnx")


def _add(conv_input, out="z", other="r", a_params=("ys", "yz")):
    y = ["y", *a_params]
    r = [other, "rs", "rz"]
    ins = (y + r if conv_input == 0 else r + y) + ["cs", "cz"]
    return helper.make_node("QLinearAdd", ins, [out], domain="com.microsoft")


def _codes(rng, np_act, shape):
    info = np.iinfo(np_act)
    return rng.integers(info.min, info.max + 1, shape).astype(np_act)


# (r_scale, c_scale, r_zero, c_zero) over y's (0.06, 100): ratios from 1/8 to 6, sums that saturate.
ADD_PARAMS = [(0.05, 0.07, 128, 0), (0.011, 0.2, 3, 250), (0.31, 0.05, 77, 128), (0.06, 0.06, 100, 100),
              (0.0123, 0.0101, 200, 17)]


# w_zero 3: asymmetric weights, which the direct kernel does not take: the im2col rows and the GEMM,
# then QLinearAdd's row over the output.
@pytest.mark.parametrize("signed,w_zero", [(False, 0), (True, 0), (False, 3)])
@pytest.mark.parametrize("conv_input", [0, 1])
def test_direct_op_with_runtime_add_parameters_matches_onnxruntime(signed, w_zero, conv_input):
    act, np_act, lo = (TensorProto.INT8, np.int8, -128) if signed else (TensorProto.UINT8, np.uint8, 0)
    shape = [2, H, W, C]
    out_shape = (2, H, W, M)
    x_info = helper.make_tensor_value_info("x", act, shape)
    z_info = helper.make_tensor_value_info("z", act, None)
    fused_node = helper.make_node("QLinearConvAdd", CONV_INPUTS + ["r", "rs", "rz", "cs", "cz"], ["z"], domain="com.onyx",
                                  channels_last=1, pads=[1] * 4, conv_input=conv_input)
    params = [helper.make_tensor_value_info(n, t, []) for n, t in [("rs", TensorProto.FLOAT), ("rz", act),
                                                                   ("cs", TensorProto.FLOAT), ("cz", act)]]
    r_info = helper.make_tensor_value_info("r", act, list(out_shape))
    fused = _model(f"conv_add_direct_{signed}_{w_zero}_{conv_input}", [fused_node],
                   _conv_inits(np.random.default_rng(7), np_act, lo, w_zero), [x_info, r_info, *params], [z_info],
                   ("com.onyx",))
    rng = np.random.default_rng(8)
    x, r = _codes(rng, np_act, shape), _codes(rng, np_act, out_shape)
    for k, (rs, cs, rz, cz) in enumerate(ADD_PARAMS):
        consts = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in [
            ("rs", rs, np.float32), ("cs", cs, np.float32), ("rz", lo + rz, np_act), ("cz", lo + cz, np_act)]]
        ref = _model(f"conv_add_ref_{signed}_{w_zero}_{conv_input}_{k}", [_conv(), _add(conv_input)],
                     _conv_inits(np.random.default_rng(7), np_act, lo, w_zero) + consts, [x_info, r_info], [z_info])
        expected = run_ort(ref, {"x": x, "r": r})[0]
        feeds = {"x": x, "r": r, "rs": np.array(rs, np.float32), "cs": np.array(cs, np.float32),
                 "rz": np.array(lo + rz, np_act), "cz": np.array(lo + cz, np_act)}
        for t in (1, 2):
            got = run_onyx(fused, feeds, threads=t)[0]
            assert got.shape == expected.shape == out_shape
            assert np.array_equal(got, expected), f"{np.count_nonzero(got != expected)} codes differ (params {k}, {t} threads)"


def test_channels_first_is_an_error():
    node = helper.make_node("QLinearConvAdd", CONV_INPUTS + ["r", "ys", "yz", "ys", "yz"], ["z"], domain="com.onyx")
    path = _model("conv_add_nchw", [node], _conv_inits(np.random.default_rng(1), np.uint8, 0),
                  [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, C, H, W]),
                   helper.make_tensor_value_info("r", TensorProto.UINT8, [1, M, H, W])],
                  [helper.make_tensor_value_info("z", TensorProto.UINT8, None)], ("com.onyx",))
    with pytest.raises(RuntimeError, match="supports channels_last = 1 only"):
        run_onyx(path, {"x": np.zeros((1, C, H, W), np.uint8), "r": np.zeros((1, M, H, W), np.uint8)})


def _graph_case(name, *, conv_input=0, y_output=False, other_scale=False, broadcast=False, twice=False):
    """x -> channels-last conv y -> QLinearAdd(y, r) -> z, with r a second conv's output (also a
    graph output, so its conv stays; or a [1, 1, 1, M] constant when broadcast) and the given
    reasons not to fuse."""
    rng = np.random.default_rng(11)
    inits = _conv_inits(rng, np.uint8, 0)
    inits += [numpy_helper.from_array(np.array(v, t), n) for n, v, t in [
        ("rs", 0.05, np.float32), ("rz", 128, np.uint8), ("cs", 0.08, np.float32), ("cz", 5, np.uint8),
        ("ys2", 0.07, np.float32)]]
    nodes = [_conv()]
    if broadcast:
        inits.append(numpy_helper.from_array(rng.integers(0, 256, (1, 1, 1, M)).astype(np.uint8), "r"))
    else:  # r: a 1x1 conv of x into M channels
        inits += [numpy_helper.from_array(ort_exact_s8(rng.integers(-100, 101, (M, C, 1, 1))), "w1"),
                  numpy_helper.from_array(rng.integers(-900, 900, M).astype(np.int32), "b1")]
        nodes.append(helper.make_node("QLinearConv", ["x", "xs", "xz", "w1", "ws", "wz", "rs", "rz", "b1"], ["r"],
                                      domain="com.microsoft", channels_last=1))
    if twice:
        nodes.append(helper.make_node("QLinearAdd", ["y", "ys", "yz", "y", "ys", "yz", "cs", "cz"], ["z"],
                                      domain="com.microsoft"))
    else:
        nodes.append(_add(conv_input, a_params=("ys2" if other_scale else "ys", "yz")))
    outputs = [helper.make_tensor_value_info("z", TensorProto.UINT8, None)]
    if not broadcast:  # r's conv read elsewhere too: only y's conv may fuse
        outputs.append(helper.make_tensor_value_info("r", TensorProto.UINT8, None))
    if y_output:
        outputs.append(helper.make_tensor_value_info("y", TensorProto.UINT8, None))
    return _model(name, nodes, inits, [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, H, W, C])], outputs)


@pytest.mark.parametrize("case,fused", [({}, 1), ({"conv_input": 1}, 1), ({"y_output": True}, 0),
                                        ({"other_scale": True}, 0), ({"broadcast": True}, 0), ({"twice": True}, 0)],
                         ids=["conv_is_a", "conv_is_b", "y_is_a_graph_output", "add_reads_other_params", "broadcast",
                              "add_of_y_and_y"])
def test_fusion_fires_only_where_it_may_and_matches_onnxruntime(case, fused):
    path = _graph_case("conv_add_graph_" + "_".join(f"{k}{v}" for k, v in case.items()), **case)
    model = qm.onyx_optimize(path)
    ops = qm.op_counts(model)
    assert ops.get("com.onyx.QLinearConvAdd", 0) == fused, ops
    if fused:
        node = next(n for n in model.graph.node if n.op_type == "QLinearConvAdd")
        attrs = {a.name: a.i for a in node.attribute if a.type == 2}
        assert attrs["conv_input"] == case.get("conv_input", 0) and attrs["channels_last"] == 1
        assert ops.get("com.microsoft.QLinearAdd", 0) == 0, ops
    x = _codes(np.random.default_rng(5), np.uint8, (1, H, W, C))
    expected = run_ort(path, {"x": x})
    for t in (1, 2):
        got = run_onyx(path, {"x": x}, threads=t)
        for g, e in zip(got, expected):
            assert g.shape == e.shape and np.array_equal(g, e), f"{np.count_nonzero(g != e)} codes differ ({t} threads)"


def test_fusion_is_off_below_level_all():
    path = _graph_case("conv_add_graph_extended")
    ops = qm.op_counts(qm.onyx_optimize(path, "--level", "extended"))
    assert "com.onyx.QLinearConvAdd" not in ops and ops.get("com.microsoft.QLinearAdd") == 1, ops
