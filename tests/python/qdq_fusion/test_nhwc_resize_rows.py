"""Nearest Resize that keeps the innermost axis (a channels-last image scaled in H and W, as
QdqNhwcLayout makes YOLO's upsamplings) copies whole rows; its output must equal ONNX Runtime
1.31.1's for every nearest mode and coordinate mode, upsampling and downsampling, uint8 / float."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model


@pytest.mark.parametrize("dtype,scales,coord,nearest", [
    (np.uint8, [1, 2, 2, 1], "asymmetric", "floor"),
    (np.uint8, [1, 1.5, 3, 1], "half_pixel", "round_prefer_floor"),
    (np.float32, [1, 0.5, 2, 1], "align_corners", "round_prefer_ceil"),
    (np.int8, [2, 2, 1, 1], "pytorch_half_pixel", "ceil"),
])
def test_rows_match_onnxruntime(dtype, scales, coord, nearest):
    elem = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8, np.float32: TensorProto.FLOAT}[dtype]
    node = helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="nearest", coordinate_transformation_mode=coord,
                            nearest_mode=nearest)
    inits = [numpy_helper.from_array(np.array([], np.float32), "roi"), numpy_helper.from_array(np.array(scales, np.float32), "scales")]
    graph = helper.make_graph([node], "resize_rows", [helper.make_tensor_value_info("x", elem, [1, 6, 5, 24])],
                              [helper.make_tensor_value_info("y", elem, None)], inits)
    name = f"resize_rows_{np.dtype(dtype).name}_{coord}.onnx"
    path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), name)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((1, 6, 5, 24)) * 50).astype(dtype) if dtype == np.float32 else \
        rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, (1, 6, 5, 24)).astype(dtype)
    expected = run_ort(path, {"x": x})[0]
    for t in (1, 2):
        got = run_onyx(path, {"x": x}, threads=t)[0]
        assert got.shape == expected.shape and np.array_equal(got, expected)
