"""com.microsoft QLinearAdd / QLinearMul on same-shape tensors large enough that Onyx splits them
over the threads (MobileNetV2's residual adds): outputs equal ONNX Runtime 1.31.1's exactly at
1, 2 and 3 threads, for sizes that do and do not divide into the threads' blocks."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from onyx_harness import run_onyx, run_ort, save_model

QTYPES = {"uint8": (np.uint8, TensorProto.UINT8, 0, 256), "int8": (np.int8, TensorProto.INT8, -128, 128)}


def binary_model(op, shape, qtype):
    elem = QTYPES[qtype][1]
    scales = {"sa": 0.02, "sb": 0.03, "sc": 0.05 if op == "QLinearAdd" else 0.3}
    inits = [helper.make_tensor(n, TensorProto.FLOAT, [], [v]) for n, v in scales.items()]
    zps = (121, 133, 127) if qtype == "uint8" else (-3, 5, 1)  # odd output zero points: rounding ties
    inits += [helper.make_tensor(n, elem, [], [z]) for n, z in zip(("za", "zb", "zc"), zps)]
    node = helper.make_node(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["c"], domain="com.microsoft")
    inputs = [helper.make_tensor_value_info(n, elem, shape) for n in ("a", "b")]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("c", elem, shape)], inits)
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets)


# 75,264 elements (MobileNetV2's largest residual add), 40,961 (just past the split, odd), and
# 40,959 (just below it: one thread).
SHAPES = [(1, 24, 56, 56), (1, 40961), (1, 40959)]


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_same_shape_split_matches_ort(op, qtype, shape):
    dtype, _, lo, hi = QTYPES[qtype]
    r = np.random.default_rng(11)
    feeds = {"a": r.integers(lo, hi, shape).astype(dtype), "b": r.integers(lo, hi, shape).astype(dtype)}
    path = save_model(binary_model(op, list(shape), qtype), f"qlinear_threads_{op}_{qtype}_{shape[-1]}")
    expected = run_ort(path, feeds)[0]
    for threads in (1, 2, 3):
        got = run_onyx(path, feeds, threads=threads)[0]
        assert got.dtype == expected.dtype
        differ = np.count_nonzero(got != expected)
        assert differ == 0, f"{threads} threads: {differ} of {got.size} outputs differ from ONNX Runtime's"
