"""A nearest Resize inside an NCHWc region by whole scales, under a coordinate rule that maps
output pixel o to input pixel o / scale, becomes com.onyx.NchwcUpsample (a copy of pixel
vectors); other rules and fractional scales stay a blocked Resize. Outputs against ONNX Runtime
at 1 and 2 threads, which also checks the rule's claim of exactness."""
import os
import re
import subprocess
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import ONYX_BIN, _work_dir, assert_outputs_close, run_onyx, run_ort, save_model


def _op_counts(path):
    with tempfile.TemporaryDirectory(dir=_work_dir()) as tmp:
        out = os.path.join(tmp, "optimized.onnx")
        proc = subprocess.run([ONYX_BIN, "optimize", path, "-o", out, "--level", "all", "--require-kernels",
                               "--report"], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    return {op: int(after) for op, after in re.findall(r"^\s+([\w.]+): \d+ -> (\d+)$", proc.stdout, re.MULTILINE)}


def _conv(name, x, cin, cout, rng, inits, k):
    w = (rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32)
    inits.append(numpy_helper.from_array(w, name + "_w"))
    return helper.make_node("Conv", [x, name + "_w"], [name], kernel_shape=[k, k], pads=[k // 2] * 4)


def _model(scales, coords, rounding):
    """conv -> conv -> Resize -> conv, all in one region."""
    rng, inits = np.random.default_rng(3), []
    nodes = [_conv("a", "x", 16, 32, rng, inits, 3), _conv("b", "a", 32, 16, rng, inits, 3)]
    inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
    nodes.append(helper.make_node("Resize", ["b", "", "scales"], ["up"], mode="nearest",
                                  coordinate_transformation_mode=coords, nearest_mode=rounding))
    nodes.append(_conv("c", "up", 16, 24, rng, inits, 1))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 5, 7])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("scales,coords,rounding,upsample", [
    ([1, 1, 2, 2], "asymmetric", "floor", True),                 # PyTorch's nn.Upsample export
    ([1, 1, 2, 3], "half_pixel", "round_prefer_ceil", True),
    ([1, 1, 3, 1], "pytorch_half_pixel", "round_prefer_floor", True),
    ([1, 1, 2, 2], "asymmetric", "round_prefer_floor", True),
    ([1, 1, 3, 3], "asymmetric", "round_prefer_floor", False),  # pixel 2 rounds up to 1
    ([1, 1, 2, 2], "asymmetric", "round_prefer_ceil", False),
    ([1, 1, 2, 2], "half_pixel", "floor", False),
    ([1, 1, 2, 2], "align_corners", "round_prefer_floor", False),
    ([1, 1, 1.5, 2], "asymmetric", "floor", False),
])
def test_nearest_resize_by_whole_scales_becomes_upsample(scales, coords, rounding, upsample):
    path = save_model(_model(scales, coords, rounding), f"upsample_{coords}_{rounding}_{len(str(scales))}.onnx")
    x = np.random.default_rng(0).standard_normal((1, 16, 5, 7)).astype(np.float32)
    for threads in (1, 2):
        assert_outputs_close(run_ort(path, {"x": x}), run_onyx(path, {"x": x}, threads=threads))
    counts = _op_counts(path)
    assert counts.get("com.onyx.NchwcUpsample", 0) == (1 if upsample else 0), counts
    assert counts.get("Resize", 0) == (0 if upsample else 1), counts
    assert counts.get("com.onyx.NchwcConv") == 3, counts


def test_upsample_scale_below_one_is_an_error():
    node = helper.make_node("NchwcUpsample", ["x"], ["y"], domain="com.onyx", scale_h=0, scale_w=2)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.onyx", 1)])
    model.ir_version = 8
    path = save_model(model, "upsample_bad_scale.onnx")
    with pytest.raises(RuntimeError, match="scale_h and scale_w must be >= 1, got 0 and 2"):
        run_onyx(path, {"x": np.zeros((1, 1, 2, 2, 16), np.float32)})
