"""Runs at ever new input shapes on one session, growing and shrinking (the memory-pattern blocks
borrowed, outgrown and grown in place, graph outputs' blocks grown for larger shapes:
docs/memory.md, "The first Run at a new shape"): every result matches ONNX Runtime's, with the
memory pattern on and off, at 1 and 2 threads."""
import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import onyx as ort

HIDDEN = 64
# Lengths whose intermediates reach past the 256 KiB the arena maps directly (where blocks grow).
LENGTHS = [128, 128, 136, 8, 160, 1, 300, 144, 512, 16, 520, 96]


def _attention_like():
    """x [1, S, 64] -> scores = softmax(x x^T / 8) [1, S, S] -> y = scores x + relu(x W): an output
    and intermediates that grow with S, quadratically in places."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [HIDDEN, HIDDEN],
                           np.random.default_rng(1).standard_normal(HIDDEN * HIDDEN).astype(np.float32) * 0.1)
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [], [0.125])
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["x", "xt"], ["s"]), helper.make_node("Mul", ["s", "scale"], ["ss"]),
             helper.make_node("Softmax", ["ss"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "x"], ["c"]),
             helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Add", ["c", "r"], ["y"])]
    graph = helper.make_graph(nodes, "new_shapes",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "S", HIDDEN])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "S", HIDDEN])], [w, scale])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mem_pattern", [True, False])
def test_growing_and_shrinking_shapes_match_onnxruntime(threads, mem_pattern):
    model = _attention_like()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_mem_pattern = mem_pattern
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    reference = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for length in LENGTHS:
        x = rng.standard_normal((1, length, HIDDEN)).astype(np.float32)
        got = session.run(None, {"x": x})[0]
        want = reference.run(None, {"x": x})[0]
        assert got.shape == want.shape, length
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"length {length}")
        # The same shape again (the pattern's block now fits it) gives the same bits.
        np.testing.assert_array_equal(session.run(None, {"x": x})[0], got, err_msg=f"length {length}, repeated")
