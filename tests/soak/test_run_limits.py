"""Run-time size limits through the Python API: an Expand, Tile, ConstantOfShape or Range that
asks at run time for 2^40 elements raises, within a second, the class ONNX Runtime raises for a
failed allocation (Fail), with a message naming the node, its op and opset, and the shape; a
configured onyx.run.max_tensor_bytes is honoured, and a malformed one is an InvalidArgument."""
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onyx
from onyx.capi.onnxruntime_pybind11_state import Fail, InvalidArgument
from onyx_harness import require_ort

SIDE = 1 << 20  # SIDE x SIDE = 2^40 elements


def model(node, inputs, out_type):
    graph = helper.make_graph([node], "limits", inputs, [helper.make_tensor_value_info("y", out_type, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


CASES = {
    "Expand": (model(helper.make_node("Expand", ["x", "shape"], ["y"], name="expand0"),
                     [vi("x", TensorProto.FLOAT, [1]), vi("shape", TensorProto.INT64, [2])], TensorProto.FLOAT),
               {"x": np.ones(1, np.float32), "shape": np.array([SIDE, SIDE], np.int64)}, "float[1048576,1048576]"),
    "Tile": (model(helper.make_node("Tile", ["x", "repeats"], ["y"], name="tile0"),
                   [vi("x", TensorProto.FLOAT, [1, 1]), vi("repeats", TensorProto.INT64, [2])], TensorProto.FLOAT),
             {"x": np.ones((1, 1), np.float32), "repeats": np.array([SIDE, SIDE], np.int64)}, "float[1048576,1048576]"),
    "ConstantOfShape": (model(helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill0"),
                              [vi("shape", TensorProto.INT64, [2])], TensorProto.FLOAT),
                        {"shape": np.array([SIDE, SIDE], np.int64)}, "float[1048576,1048576]"),
    "Range": (model(helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range0"),
                    [vi(n, TensorProto.INT64, []) for n in ("start", "limit", "delta")], TensorProto.INT64),
              {"start": np.array(0, np.int64), "limit": np.array(SIDE * SIDE, np.int64),
               "delta": np.array(1, np.int64)}, "int64[1099511627776]"),
}


@pytest.mark.parametrize("op", sorted(CASES))
def test_2_pow_40_elements_fail_fast_with_a_named_error(op):
    model_bytes, feeds, shape = CASES[op]
    session = onyx.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    start = time.perf_counter()
    with pytest.raises(Fail) as caught:
        session.run(None, feeds)
    assert time.perf_counter() - start < 1.0
    message = str(caught.value)
    node_name = session_node_name(model_bytes)
    for piece in (f"node '{node_name}' ({op}, opset 17)", shape, "onyx.run.max_tensor_bytes"):
        assert piece in message, message
    # ONNX Runtime fails on the same model and feeds too: Fail where its allocation fails (Tile
    # alone has its own 4 GiB check, an InvalidArgument).
    ort = require_ort()
    with pytest.raises(Exception) as ort_caught:
        ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, feeds)
    assert type(ort_caught.value).__name__ == ("InvalidArgument" if op == "Tile" else "Fail"), ort_caught.value


def session_node_name(model_bytes):
    return onnx.load_from_string(model_bytes).graph.node[0].name


def test_a_configured_limit_holds_and_the_session_runs_on():
    model_bytes, _, _ = CASES["Expand"]
    so = onyx.SessionOptions()
    so.add_session_config_entry("onyx.run.max_tensor_bytes", str(1 << 20))
    session = onyx.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    x = np.array([2.5], np.float32)
    (y,) = session.run(None, {"x": x, "shape": np.array([256, 1024], np.int64)})  # 1 MiB: allowed
    np.testing.assert_array_equal(y, np.full((256, 1024), 2.5, np.float32))
    with pytest.raises(Fail, match=r"float\[257,1024\]: 1052672 bytes, more than the limit of 1048576"):
        session.run(None, {"x": x, "shape": np.array([257, 1024], np.int64)})
    assert session.run(None, {"x": x, "shape": np.array([2, 3], np.int64)})[0].shape == (2, 3)


def test_a_feed_over_the_limit_is_refused():
    relu = model(helper.make_node("Relu", ["x"], ["y"], name="relu0"), [vi("x", TensorProto.FLOAT, ["n"])],
                 TensorProto.FLOAT)
    so = onyx.SessionOptions()
    so.add_session_config_entry("onyx.run.max_tensor_bytes", "4096")
    session = onyx.InferenceSession(relu, so, providers=["CPUExecutionProvider"])
    x = np.linspace(-1, 1, 1024, dtype=np.float32)
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], np.maximum(x, 0))
    with pytest.raises(Fail, match=r"input 'x' float\[1025\]: 4100 bytes, more than the limit of 4096"):
        session.run(None, {"x": np.ones(1025, np.float32)})


@pytest.mark.parametrize("value", ["0", "-1", "lots", ""])
def test_a_malformed_limit_is_an_invalid_argument(value):
    so = onyx.SessionOptions()
    so.add_session_config_entry("onyx.run.max_tensor_bytes", value)
    with pytest.raises(InvalidArgument, match="onyx.run.max_tensor_bytes"):
        onyx.InferenceSession(CASES["Expand"][0], so, providers=["CPUExecutionProvider"])
