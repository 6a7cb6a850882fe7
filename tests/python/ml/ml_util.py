"""Builds single-node ai.onnx.ml models and compares Onyx with ONNX Runtime on them."""
import itertools

import numpy as np
import onnx
from onnx import TensorProto, helper

from onyx_harness import assert_outputs_close, run_onyx, run_ort, save_model

_counter = itertools.count()

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int16): TensorProto.INT16,
}


def elem_type(array):
    if array.dtype.kind in "OU":
        return TensorProto.STRING
    return NP_TO_ONNX[array.dtype]


def ml_model(op_type, inputs, outputs, ml_opset=3, onnx_opset=17, **attrs):
    """inputs: {name: numpy array or (elem_type, shape)}; outputs: [(name, elem_type or None)]."""
    in_infos = []
    for name, value in inputs.items():
        if isinstance(value, np.ndarray):
            in_infos.append(helper.make_tensor_value_info(name, elem_type(value), list(value.shape)))
        else:
            in_infos.append(helper.make_tensor_value_info(name, value[0], value[1]))
    out_infos = []
    for name, et in outputs:
        if isinstance(et, onnx.TypeProto):
            out_infos.append(helper.make_value_info(name, et))
        else:
            out_infos.append(helper.make_tensor_value_info(name, et, None))
    node = helper.make_node(op_type, list(inputs), [n for n, _ in outputs], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], f"{op_type}_graph", in_infos, out_infos)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", onnx_opset), helper.make_opsetid("ai.onnx.ml", ml_opset)])
    model.ir_version = 8
    return model


def save(model, stem):
    return save_model(model, f"ml_{stem}_{next(_counter)}.onnx")


def compare_with_ort(model, feeds, stem, rtol=1e-4, atol=1e-5):
    """Runs the model in Onyx and ONNX Runtime and asserts the outputs agree."""
    path = save(model, stem)
    expected = run_ort(path, feeds)
    got = run_onyx(path, feeds)
    _normalize_strings(expected)
    _normalize_strings(got)
    assert_outputs_close(expected, got, rtol=rtol, atol=atol)
    return got


def _normalize_strings(arrays):
    for i, a in enumerate(arrays):
        if a.dtype.kind in "OU":
            arrays[i] = a.astype(object)
