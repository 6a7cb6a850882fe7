"""Transpose of 8-bit maps (the ends of a channels-last int8 region: NCHW <-> NHWC), run by the
blocked byte transpose (linalg/x8_transpose.h) at 1 and 2 threads, against numpy on odd shapes
(ragged against its 16 x 64 blocks and 64 x 64 tiles), uint8, int8 and bool."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from onyx_harness import run_onyx, save_model

TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8, np.bool_: TensorProto.BOOL}


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.bool_])
@pytest.mark.parametrize("shape,perm", [((1, 64, 56, 56), (0, 2, 3, 1)), ((2, 17, 9, 13), (0, 2, 3, 1)),
                                        ((1, 7, 7, 2048), (0, 3, 1, 2)), ((3, 5, 11, 70), (0, 3, 1, 2)),
                                        ((1, 130, 1, 1), (0, 2, 3, 1)), ((2, 33, 65), (2, 1, 0))])
@pytest.mark.parametrize("threads", [1, 2])
def test_byte_transpose_matches_numpy(dtype, shape, perm, threads):
    node = helper.make_node("Transpose", ["x"], ["y"], perm=list(perm))
    graph = helper.make_graph([node], "t", [helper.make_tensor_value_info("x", TYPES[dtype], list(shape))],
                              [helper.make_tensor_value_info("y", TYPES[dtype], None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    name = f"u8_transpose_{np.dtype(dtype).name}_{'x'.join(map(str, shape))}_{''.join(map(str, perm))}.onnx"
    path = save_model(model, name)
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-128 if dtype == np.int8 else 0, 2 if dtype == np.bool_ else 128 if dtype == np.int8 else 256,
                     shape).astype(dtype)
    (y,) = run_onyx(path, {"x": x}, threads=threads)
    np.testing.assert_array_equal(y, np.transpose(x, perm))
