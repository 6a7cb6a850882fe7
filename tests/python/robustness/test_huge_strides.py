"""Convolutions and pools whose stride is far larger than the input (2^31 - 1, 2^62, INT64_MAX,
as mutated models carry) have one output position along that dimension and must give ONNX
Runtime's values. The kernels stepped by the stride: INT64_MAX overflowed the depthwise kernel's
offsets and 2^31 - 1 ended in a heap corruption (mutation campaign, issue 17); the stride of a
dimension with one output position is now 1, and a 1x1 convolution is only treated as pointwise
when its output plane is its input plane."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import assert_outputs_close, run_onyx, run_ort, save_model

C = 16
CASES = {
    "pointwise_w": ("Conv", {"strides": [1, 2**31 - 1]}, (C, C, 1, 1), 1),
    "pointwise_h": ("Conv", {"strides": [2**31 - 1, 1]}, (C, C, 1, 1), 1),
    "conv3x3": ("Conv", {"strides": [1, 2**62], "pads": [1, 1, 1, 1]}, (8, C, 3, 3), 1),
    "depthwise_w": ("Conv", {"strides": [1, 2**63 - 1], "pads": [2, 2, 2, 2], "group": C}, (C, 1, 5, 5), C),
    "depthwise_hw": ("Conv", {"strides": [2**63 - 1, 2**63 - 1], "group": C}, (C, 1, 5, 5), C),
    "maxpool": ("MaxPool", {"kernel_shape": [3, 3], "strides": [1, 2**62]}, None, 1),
    "avgpool": ("AveragePool", {"kernel_shape": [3, 3], "strides": [2**62, 3]}, None, 1),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("opt_level", ["disabled", "all"])
def test_huge_stride_matches_onnxruntime(case, opt_level):
    op, attrs, w_shape, _ = CASES[case]
    r = np.random.default_rng(3)
    inputs = ["x"] + (["w"] if w_shape else [])
    inits = [numpy_helper.from_array(r.standard_normal(w_shape).astype(np.float32), "w")] if w_shape else []
    graph = helper.make_graph([helper.make_node(op, inputs, ["y"], **attrs)], case,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, 14, 15])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"stride_{case}.onnx")
    feeds = {"x": r.standard_normal((1, C, 14, 15)).astype(np.float32)}
    expected = run_ort(path, feeds, opt_level=opt_level)
    got = run_onyx(path, feeds, extra_args=["--opt-level", opt_level])
    assert got[0].shape == expected[0].shape
    assert_outputs_close(expected, got)
