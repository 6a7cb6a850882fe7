"""RNN, GRU and LSTM against ONNX Runtime 1.30 on the options the ONNX conformance data leaves
out: directions, layout 1, sequence_lens, initial states, clip, parameterized activations,
linear_before_reset, input_forget, peepholes, Y_c, constant (pre-packed) weights and double."""
import os
import tempfile
import zlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import assert_outputs_close, run_onyx, run_ort

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
INPUT_NAMES = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]


def make_inputs(op, seq, batch, inp, hid, dirs, layout, rng, with_bias, with_lens, with_init, with_peep):
    g = GATES[op]
    x_shape = (seq, batch, inp) if layout == 0 else (batch, seq, inp)
    h_shape = (dirs, batch, hid) if layout == 0 else (batch, dirs, hid)
    vals = {
        "X": rng.standard_normal(x_shape).astype(np.float32),
        "W": (rng.standard_normal((dirs, g * hid, inp)) * 0.5).astype(np.float32),
        "R": (rng.standard_normal((dirs, g * hid, hid)) * 0.5).astype(np.float32),
    }
    if with_bias:
        vals["B"] = (rng.standard_normal((dirs, 2 * g * hid)) * 0.3).astype(np.float32)
    if with_lens:
        lens = rng.integers(1, seq + 1, size=batch).astype(np.int32)
        lens[0] = seq
        vals["sequence_lens"] = lens
    if with_init:
        vals["initial_h"] = rng.standard_normal(h_shape).astype(np.float32)
        if op == "LSTM":
            vals["initial_c"] = rng.standard_normal(h_shape).astype(np.float32)
    if with_peep and op == "LSTM":
        vals["P"] = (rng.standard_normal((dirs, 3 * hid)) * 0.3).astype(np.float32)
    return vals


def build_model(op, vals, attrs, n_outputs, opset, constant=(), dtype=np.float32):
    elem = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    node_inputs, graph_inputs, inits = [], [], []
    for name in INPUT_NAMES:
        if op != "LSTM" and name in ("initial_c", "P"):
            continue
        if name not in vals:
            node_inputs.append("")
            continue
        node_inputs.append(name)
        arr = vals[name]
        if name != "sequence_lens":
            arr = arr.astype(dtype)
        if name in constant:
            inits.append(numpy_helper.from_array(arr, name))
        else:
            t = TensorProto.INT32 if name == "sequence_lens" else elem
            graph_inputs.append(helper.make_tensor_value_info(name, t, arr.shape))
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    out_names = ["Y", "Y_h", "Y_c"][:n_outputs]
    node = helper.make_node(op, node_inputs, out_names, **attrs)
    outputs = [helper.make_tensor_value_info(n, elem, None) for n in out_names]
    graph = helper.make_graph([node], "g", graph_inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def feeds(vals, constant, dtype=np.float32):
    return {k: (v if k == "sequence_lens" else v.astype(dtype)) for k, v in vals.items() if k not in constant}


def compare(op, vals, attrs, opset=14, constant=(), onyx_dtype=np.float32, rtol=1e-3, atol=1e-4):
    n_out = 3 if op == "LSTM" else 2
    # ONNX Runtime has no batch-major layout: it runs the time-major equivalent and its outputs
    # are transposed back.
    batch_major = attrs.get("layout", 0) == 1
    ref_vals, ref_attrs = dict(vals), dict(attrs)
    if batch_major:
        ref_attrs["layout"] = 0
        for k in ("X", "initial_h", "initial_c"):
            if k in ref_vals:
                ref_vals[k] = np.ascontiguousarray(ref_vals[k].transpose(1, 0, 2))
    with tempfile.TemporaryDirectory() as tmp:
        ref_path = os.path.join(tmp, "ref.onnx")
        onnx.save(build_model(op, ref_vals, ref_attrs, n_out, opset, constant), ref_path)
        expected = run_ort(ref_path, feeds(ref_vals, constant))
        path = os.path.join(tmp, "onyx.onnx")
        onnx.save(build_model(op, vals, attrs, n_out, opset, constant, onyx_dtype), path)
        got = run_onyx(path, feeds(vals, constant, onyx_dtype))
    if batch_major:
        expected = [expected[0].transpose(2, 0, 1, 3)] + [e.transpose(1, 0, 2) for e in expected[1:]]
    got = [g.astype(np.float32) for g in got]
    assert_outputs_close(expected, got, rtol=rtol, atol=atol, names=["Y", "Y_h", "Y_c"][:n_out])


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_directions_layouts_lens_and_states(op, direction, layout):
    rng = np.random.default_rng(zlib.crc32(f"{op}{direction}{layout}".encode()))
    dirs = 2 if direction == "bidirectional" else 1
    vals = make_inputs(op, 5, 3, 4, 6, dirs, layout, rng, True, True, True, True)
    compare(op, vals, {"hidden_size": 6, "direction": direction, "layout": layout})


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_constant_weights_are_prepacked_the_same(op):
    rng = np.random.default_rng(7)
    vals = make_inputs(op, 4, 2, 3, 5, 2, 0, rng, True, False, True, True)
    compare(op, vals, {"hidden_size": 5, "direction": "bidirectional"}, constant=("W", "R", "B", "P"))


@pytest.mark.parametrize(
    "op,acts,alpha,beta",
    [
        ("RNN", ["Relu"], [], []),
        ("RNN", ["LeakyRelu", "ThresholdedRelu"], [0.2, 0.3], []),
        ("RNN", ["ScaledTanh"], [0.7], [1.3]),
        ("RNN", ["Affine"], [0.5], [0.2]),
        ("RNN", ["Elu"], [0.8], []),
        ("RNN", ["Softsign"], [], []),
        ("RNN", ["Softplus"], [], []),
        ("GRU", ["HardSigmoid", "Tanh"], [0.3], [0.4]),
        ("GRU", ["Sigmoid", "Softsign"], [], []),
        ("LSTM", ["HardSigmoid", "Tanh", "Relu"], [0.25], [0.45]),
        ("LSTM", ["Sigmoid", "Softsign", "Tanh"], [], []),
    ],
)
def test_activations(op, acts, alpha, beta):
    rng = np.random.default_rng(len(acts) * 31 + len(alpha))
    dirs = 2 if len(acts) == 2 * {"RNN": 1, "GRU": 2, "LSTM": 3}[op] else 1
    vals = make_inputs(op, 4, 2, 3, 4, dirs, 0, rng, True, False, True, False)
    attrs = {"hidden_size": 4, "activations": acts, "direction": "bidirectional" if dirs == 2 else "forward"}
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    compare(op, vals, attrs)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_clip(op):
    rng = np.random.default_rng(11)
    vals = make_inputs(op, 6, 2, 3, 4, 1, 0, rng, True, False, False, False)
    vals["X"] *= 4
    compare(op, vals, {"hidden_size": 4, "clip": 0.5})


@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_linear_before_reset(lbr):
    rng = np.random.default_rng(3 + lbr)
    vals = make_inputs("GRU", 5, 3, 4, 5, 2, 0, rng, True, True, True, False)
    compare("GRU", vals, {"hidden_size": 5, "direction": "bidirectional", "linear_before_reset": lbr})


def test_lstm_input_forget():
    rng = np.random.default_rng(5)
    vals = make_inputs("LSTM", 5, 2, 3, 4, 1, 0, rng, True, False, True, True)
    compare("LSTM", vals, {"hidden_size": 4, "input_forget": 1})


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_opset7_models(op):
    rng = np.random.default_rng(13)
    vals = make_inputs(op, 3, 2, 3, 4, 1, 0, rng, True, False, True, False)
    compare(op, vals, {"hidden_size": 4}, opset=7)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_double_matches_float_reference(op):
    rng = np.random.default_rng(17)
    vals = make_inputs(op, 4, 2, 3, 4, 2, 1, rng, True, True, True, True)
    compare(op, vals, {"hidden_size": 4, "direction": "bidirectional", "layout": 1}, onyx_dtype=np.float64)
