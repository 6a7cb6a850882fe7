"""In-place reuse: elementwise outputs that take over an intermediate input's buffer
(OpKernel::InPlaceInputsFor, docs/memory.md). Results must match ONNX Runtime and be the same
bits with enable_mem_reuse off (every value its own buffer), through run() and IO binding, for
graphs where taking a buffer over would be wrong (values read again, shared by a Reshape,
broadcast operands, graph outputs)."""
import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

import onyx as ort


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "in_place", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _chain():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Sigmoid", ["b"], ["c"]), helper.make_node("Mul", ["c", "x"], ["d"]),
             helper.make_node("Add", ["d", "row"], ["e"]), helper.make_node("Tanh", ["e"], ["y"])]
    return _model(nodes, [_vi("x", [8, 16]), _vi("row", [16])], [_vi("y", [8, 16])])


def _shared_by_reshape():
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [16, 8])
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Reshape", ["a", "shape"], ["r"]),
             helper.make_node("Neg", ["a"], ["n"]), helper.make_node("Reshape", ["n", "shape"], ["n2"]),
             helper.make_node("Sub", ["n2", "r"], ["c"]), helper.make_node("Exp", ["c"], ["y"]),
             helper.make_node("Sigmoid", ["c"], ["z"])]
    return _model(nodes, [_vi("x", [8, 16]), _vi("row", [16])], [_vi("y", [16, 8]), _vi("z", [16, 8])], [shape])


def _read_again():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Sigmoid", ["a"], ["s"]),
             helper.make_node("Add", ["row", "a"], ["t"]), helper.make_node("Mul", ["s", "t"], ["u"]),
             helper.make_node("Div", ["u", "a"], ["y"]), helper.make_node("Abs", ["a"], ["z"])]
    return _model(nodes, [_vi("x", [8, 16]), _vi("row", [16])], [_vi("y", [8, 16]), _vi("z", [8, 16])])


MODELS = {"chain": _chain, "shared_by_reshape": _shared_by_reshape, "read_again": _read_again}


def _feeds():
    rng = np.random.default_rng(3)
    return {"x": rng.standard_normal((8, 16)).astype(np.float32) + 0.1,
            "row": rng.standard_normal(16).astype(np.float32)}


def _session(model, mem_reuse, parallel=False):
    options = ort.SessionOptions()
    options.enable_mem_reuse = mem_reuse
    options.intra_op_num_threads = 1
    if parallel:
        options.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_matches_onnxruntime_and_separate_buffers(name):
    model, feeds = MODELS[name](), _feeds()
    feeds_copy = {k: v.copy() for k, v in feeds.items()}
    want = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    reused = _session(model, True)
    for _ in range(2):  # the second Run places values from the memory pattern
        got = reused.run(None, feeds)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    separate = _session(model, False).run(None, feeds)
    parallel = _session(model, True, parallel=True).run(None, feeds)
    for g, s, p in zip(got, separate, parallel):
        assert g.tobytes() == s.tobytes()
        assert g.tobytes() == p.tobytes()
    for k in feeds:  # fed arrays are never written over
        assert feeds[k].tobytes() == feeds_copy[k].tobytes()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_io_binding_outputs_and_inputs_are_left_alone(name):
    model, feeds = MODELS[name](), _feeds()
    want = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    session = _session(model, True)
    binding = session.io_binding()
    inputs = {k: ort.OrtValue.ortvalue_from_numpy(v.copy()) for k, v in feeds.items()}
    for k, v in inputs.items():
        binding.bind_ortvalue_input(k, v)
    buffers = [np.full(w.shape, 7.0, dtype=np.float32) for w in want]
    for out, buffer in zip(session.get_outputs(), buffers):
        binding.bind_ortvalue_output(out.name, ort.OrtValue.ortvalue_from_numpy(buffer))
    for _ in range(2):
        session.run_with_iobinding(binding)
        for buffer, w in zip(buffers, want):
            np.testing.assert_allclose(buffer, w, rtol=1e-5, atol=1e-6)
    for k, v in inputs.items():
        assert v.numpy().tobytes() == feeds[k].tobytes()
