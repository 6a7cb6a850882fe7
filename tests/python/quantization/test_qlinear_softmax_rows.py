"""com.microsoft QLinearSoftmax over contiguous rows (BERT's int8 attention: [1, heads, 128, 128]
on the last axis) against ONNX Runtime, exactly: rows go 16 at a time with their sums side by side
in vector lanes, the rest row by row; row counts that leave remainders inside each thread's
share, 1 and 2 threads, uint8 and int8, peaked and flat rows, and a y_scale so small that the
blocked path must hand its rows back to the general loop."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model

RNG = np.random.default_rng(15)
QT = {"uint8": (np.uint8, TensorProto.UINT8, 0, 256), "int8": (np.int8, TensorProto.INT8, -128, 128)}


def softmax_model(name, shape, qtype, x_scale, x_zero, y_scale, y_zero):
    t, onnx_t, _, _ = QT[qtype]
    consts = [numpy_helper.from_array(np.array(x_scale, np.float32), "xs"),
              numpy_helper.from_array(np.array(x_zero, t), "xz"),
              numpy_helper.from_array(np.array(y_scale, np.float32), "ys"),
              numpy_helper.from_array(np.array(y_zero, t), "yz")]
    node = helper.make_node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft",
                            axis=-1, opset=13)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", onnx_t, list(shape))],
                              [helper.make_tensor_value_info("y", onnx_t, None)], consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return save_model(model, f"{name}.onnx")


def codes(shape, qtype, peaked):
    t, _, lo, hi = QT[qtype]
    x = RNG.integers(lo, hi, shape)
    if peaked:  # one large code a row, the rest far below: sums dominated by one term
        x = np.minimum(x, lo + 60)
        x[..., RNG.integers(0, shape[-1])] = hi - 1
    return x.astype(t)


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(1, 12, 128, 128), (3, 37, 100), (17, 16), (5, 31)])
@pytest.mark.parametrize("peaked", [False, True])
def test_rows_match_ort(qtype, threads, shape, peaked):
    zero = 0 if qtype == "uint8" else -128
    path = softmax_model(f"qsm_{qtype}_{len(shape)}_{shape[-1]}", shape, qtype, 0.11, 3, 1 / 256, zero)
    feeds = {"x": codes(shape, qtype, peaked)}
    (want,) = run_ort(path, feeds, threads=threads)
    (got,) = run_onyx(path, feeds, threads=threads)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
def test_tiny_y_scale_takes_the_general_loop(qtype):
    # floor(1 / y_scale) >= 2^22: the blocked rows' rounding trick would not be exact there.
    shape = (2, 40, 64)
    path = softmax_model(f"qsm_tiny_{qtype}", shape, qtype, 0.05, 0, 1e-7, 0)
    feeds = {"x": codes(shape, qtype, False)}
    (want,) = run_ort(path, feeds)
    (got,) = run_onyx(path, feeds)
    np.testing.assert_array_equal(got, want)
