"""Initializers whose bytes sit misaligned in the model file (protobuf puts raw_data anywhere) are
copied while loading, onto small pages (docs/memory.md, "Weights"). Large ones, both a MatMul
weight that the kernel packs (its copy is then dropped) and a Gather table read at every Run,
must give ONNX Runtime's outputs, at 1 and 2 threads, through a model file and model bytes."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx as ort
import onyx_harness

VOCAB, HIDDEN = 1100, 768  # both initializers over 2 MB: the size that used to go on huge pages


def _serialized(pad, suffix):
    rng = np.random.default_rng(7)
    table = rng.standard_normal((VOCAB, HIDDEN), dtype=np.float32)
    weight = (rng.standard_normal((HIDDEN, HIDDEN), dtype=np.float32) / 16).astype(np.float32)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["emb"]),
             helper.make_node("MatMul", ["emb", "weight" + suffix], ["mm"]),
             helper.make_node("Add", ["mm", "emb"], ["y"])]
    graph = helper.make_graph(
        nodes, "misaligned", [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, HIDDEN])],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(weight, "weight" + suffix)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="p" * pad)
    return model.SerializeToString(), (table, weight)


def _misaligned_model():
    # The producer name comes before the graph and the second initializer's name before its bytes:
    # some pair of lengths leaves both raw_data fields off a 4-byte boundary.
    for pad in range(4):
        for suffix in ("", "_", "__", "___"):
            data, arrays = _serialized(pad, suffix)
            offsets = [data.find(a.tobytes()) for a in arrays]
            assert all(o > 0 for o in offsets)
            if all(o % 4 != 0 for o in offsets):
                return data
    raise AssertionError("no layout with both initializers misaligned")


@pytest.mark.parametrize("threads", [1, 2])
def test_misaligned_weights_match_ort(threads):
    onnxruntime = onyx_harness.require_ort()
    data = _misaligned_model()
    path = os.path.join(onyx_harness.SCRATCH, "misaligned.onnx")
    with open(path, "wb") as f:
        f.write(data)
    ids = np.array([[0, 5, 1099, 17, 5], [3, 1098, 640, 2, 0]], dtype=np.int64)
    ref_options = onnxruntime.SessionOptions()
    ref_options.intra_op_num_threads = 1
    expected = onnxruntime.InferenceSession(data, ref_options, providers=["CPUExecutionProvider"]).run(
        None, {"ids": ids})[0]
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    for source in (path, data):
        session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        for _ in range(2):  # the second Run reads the same kept table and pack
            got = session.run(None, {"ids": ids})[0]
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
