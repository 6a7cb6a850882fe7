"""ONNX Runtime's session.x64quantprecision in Onyx: ORT's u8 x s8 products on x86 without VNNI
add pairs of products into int16 (vpmaddubsw), which saturates past 32767; "1" makes ORT take its
exact u8 x u8 path instead. Onyx's products are exact on every CPU, so it takes "0" and "1" and
gives the exact results with both; any other value is an error naming the key."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx
from onyx_harness import require_ort, save_model

KEY = "session.x64quantprecision"


def _model():
    # Constant s8 weights of +-127 in pairs of one sign: with a = 255, every pair sums to
    # +-64770, past int16, wherever a CPU adds pairs of u8 x s8 products in 16 bits.
    b = np.where(np.arange(64 * 24).reshape(64, 24) % 4 < 2, 127, -127).astype(np.int8)
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    graph = helper.make_graph([node], "x64quantprecision",
                              [helper.make_tensor_value_info("a", TensorProto.UINT8, [3, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
                              [numpy_helper.from_array(b, "b")])
    path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), "x64quantprecision.onnx")
    return path, b


def _feed():
    a = np.random.default_rng(4).integers(200, 256, (3, 64)).astype(np.uint8)
    a[0] = 255
    return a


def _run(module, path, a, value):
    options = module.SessionOptions()
    if value is not None:
        options.add_session_config_entry(KEY, value)
    return module.InferenceSession(path, options, providers=["CPUExecutionProvider"]).run(None, {"a": a})[0]


@pytest.mark.parametrize("value", [None, "0", "1"])
def test_every_value_gives_the_exact_products(value):
    path, b = _model()
    a = _feed()
    exact = a.astype(np.int64) @ b.astype(np.int64)
    got = _run(onyx, path, a, value)
    assert got.dtype == np.int32 and np.array_equal(got, exact)
    # ONNX Runtime with "1" is the exact reference on every CPU.
    assert np.array_equal(_run(require_ort(), path, a, "1"), exact)


def test_other_values_are_an_error_naming_the_key():
    path, _ = _model()
    with pytest.raises(Exception, match=KEY):
        _run(onyx, path, _feed(), "yes")
