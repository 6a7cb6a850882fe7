"""Builds single-node com.microsoft models and compares Onyx with ONNX Runtime 1.30 on them."""
import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import assert_outputs_close, run_onyx, run_ort, save_model

_counter = itertools.count()

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int16): TensorProto.INT16,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
}


class Const:
    """An input given as an initializer (constant weights) instead of a feed."""

    def __init__(self, array):
        self.array = np.asarray(array)


def model(op_type, inputs, outputs, domain="com.microsoft", onnx_opset=17, **attrs):
    """inputs: ordered {name: numpy array | Const | None (omitted optional input)};
    outputs: [name, (name, numpy dtype) or None (omitted optional output)]; untyped outputs are
    left to inference."""
    in_infos, inits, names = [], [], []
    for name, value in inputs.items():
        if value is None:
            names.append("")
            continue
        names.append(name)
        if isinstance(value, Const):
            inits.append(numpy_helper.from_array(value.array, name))
        else:
            in_infos.append(helper.make_tensor_value_info(name, NP_TO_ONNX[value.dtype], list(value.shape)))
    out_names, out_infos = [], []
    for o in outputs:
        if not o:
            out_names.append("")
        elif isinstance(o, tuple):
            out_names.append(o[0])
            out_infos.append(helper.make_tensor_value_info(o[0], NP_TO_ONNX[np.dtype(o[1])], None))
        else:
            out_names.append(o)
            out_infos.append(helper.make_empty_tensor_value_info(o))
    node = helper.make_node(op_type, names, out_names, domain=domain, **attrs)
    graph = helper.make_graph([node], f"{op_type}_graph", in_infos, out_infos, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_opset), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


def feeds_of(inputs):
    return {k: v for k, v in inputs.items() if v is not None and not isinstance(v, Const)}


def save(m, stem):
    return save_model(m, f"contrib_{stem}_{next(_counter)}.onnx")


def compare(op_type, inputs, outputs, stem=None, rtol=1e-3, atol=1e-4, threads=1, domain="com.microsoft", **attrs):
    """Runs one node in ONNX Runtime and Onyx on the same inputs; asserts the outputs agree.
    Returns ONNX Runtime's outputs."""
    path = save(model(op_type, inputs, outputs, domain=domain, **attrs), stem or op_type)
    feeds = feeds_of(inputs)
    expected = run_ort(path, feeds)
    got = run_onyx(path, feeds, threads=threads)
    assert_outputs_close(expected, got, rtol=rtol, atol=atol, names=[o if isinstance(o, str) else o[0] for o in outputs if o])
    return expected


def run_both_fail(op_type, inputs, outputs, stem=None, domain="com.microsoft", **attrs):
    """Asserts ONNX Runtime and Onyx both reject the node (bad attributes or inputs)."""
    path = save(model(op_type, inputs, outputs, domain=domain, **attrs), stem or op_type)
    feeds = feeds_of(inputs)
    with pytest.raises(RuntimeError):
        run_ort(path, feeds)
    with pytest.raises(RuntimeError):
        run_onyx(path, feeds)


def onyx_fails(op_type, inputs, outputs, match=None, domain="com.microsoft", **attrs):
    """Asserts Onyx rejects the node with a clear error (optionally containing `match`)."""
    path = save(model(op_type, inputs, outputs, domain=domain, **attrs), op_type)
    with pytest.raises(RuntimeError) as err:
        run_onyx(path, feeds_of(inputs))
    if match:
        assert match in str(err.value), str(err.value)


def ort_outputs(op_type, inputs, outputs, domain="com.microsoft", **attrs):
    path = save(model(op_type, inputs, outputs, domain=domain, **attrs), op_type)
    return run_ort(path, feeds_of(inputs))


def run_onyx_only(op_type, inputs, outputs, threads=1, domain="com.microsoft", **attrs):
    path = save(model(op_type, inputs, outputs, domain=domain, **attrs), op_type)
    return run_onyx(path, feeds_of(inputs), threads=threads)


def rng(seed=0):
    return np.random.default_rng(seed)
