"""QLinearLookupFusion (issue 15): a chain of per-element ops from one uint8 / int8 value to another,
every other operand a one-element constant (an int8 BERT's GELU in QDQ form: DQ -> Div -> Erf -> Q,
then QLinearAdd(1), QLinearMul(x, .), QLinearMul(0.5)), becomes one com.onyx.QLinearLookup whose
256-entry table the chain's own kernels computed. Its codes must equal the unfused chain's in Onyx
for every input code, bit for bit, and ONNX Runtime's (in a quantized graph Onyx's Erf is ONNX
Runtime's, linalg::VecErfAsOnnxRuntime); chains whose inside values are read elsewhere, or whose constants are
not one element, or that mix two inputs, must not fuse."""
import os
import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import ONYX_BIN, run_onyx, run_ort, save_model
import qdq_models as qm

SHAPE = [2, 4, 63, 65]  # both threads take part; 32760 codes leave vector tails in every kernel


def _const(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype), name)


def _gelu(name, *, signed=False, quantized_constants=False, erf_output=False, vector_half=False,
          second_input=False):
    """x (8-bit codes) -> DQ -> GELU as a QDQ quantizer writes it -> Q -> y (8-bit codes).
    quantized_constants: the 1 and the 0.5 are DQ'd codes, as ONNX Runtime's quantizer writes
    them (the Add and the Muls then fuse into QLinearAdd / QLinearMul first); else float.
    erf_output: the Erf's quantized value is also a graph output (read outside the chain);
    vector_half: the 0.5 is a per-channel [1, C, 1, 1] constant; second_input: the Mul by x
    reads another input's codes instead of x."""
    act, np_act = (TensorProto.INT8, np.int8) if signed else (TensorProto.UINT8, np.uint8)
    lo = -128 if signed else 0
    half = np.full([1, SHAPE[1], 1, 1], 0.5, np.float32) if vector_half else np.array(0.5, np.float32)
    inits = [_const("xs", 0.04, np.float32), _const("xz", lo + 120, np_act),
             _const("sqrt2", 1.4142135, np.float32), _const("one", 1.0, np.float32),
             _const("es", 2 / 255, np.float32), _const("ez", lo + 128, np_act),
             _const("as", 2 / 255, np.float32), _const("az", lo, np_act),
             _const("ms", 0.05, np.float32), _const("mz", lo + 10, np_act),
             numpy_helper.from_array(half, "half"),
             _const("ys", 0.025, np.float32), _const("yz", lo + 12, np_act)]
    if quantized_constants:
        inits += [_const("one_q", 255, np.uint8), _const("one_s", 1 / 255, np.float32), _const("c_z", 0, np.uint8),
                  _const("half_q", 255, np.uint8), _const("half_s", 0.5 / 255, np.float32)]
    other = "x2" if second_input else "x"
    const_nodes = [helper.make_node("DequantizeLinear", ["one_q", "one_s", "c_z"], ["one_d"]),
                   helper.make_node("DequantizeLinear", ["half_q", "half_s", "c_z"], ["half_d"])]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", [other, "xs", "xz"], ["xd_mul"]) if second_input else None,
             helper.make_node("Div", ["xd", "sqrt2"], ["div"]),
             helper.make_node("Erf", ["div"], ["erf"]),
             helper.make_node("QuantizeLinear", ["erf", "es", "ez"], ["erf_q"]),
             helper.make_node("DequantizeLinear", ["erf_q", "es", "ez"], ["erf_d"]),
             helper.make_node("Add", ["erf_d", "one_d" if quantized_constants else "one"], ["add"]),
             helper.make_node("QuantizeLinear", ["add", "as", "az"], ["add_q"]),
             helper.make_node("DequantizeLinear", ["add_q", "as", "az"], ["add_d"]),
             helper.make_node("Mul", ["xd_mul" if second_input else "xd", "add_d"], ["mul"]),
             helper.make_node("QuantizeLinear", ["mul", "ms", "mz"], ["mul_q"]),
             helper.make_node("DequantizeLinear", ["mul_q", "ms", "mz"], ["mul_d"]),
             helper.make_node("Mul", ["mul_d", "half_d" if quantized_constants else "half"], ["y_f"]),
             helper.make_node("QuantizeLinear", ["y_f", "ys", "yz"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", act, SHAPE)]
    if second_input:
        inputs.append(helper.make_tensor_value_info("x2", act, SHAPE))
    outputs = [helper.make_tensor_value_info("y", act, None)]
    if erf_output:
        outputs.append(helper.make_tensor_value_info("erf_q", act, None))
    if quantized_constants:
        nodes = const_nodes + nodes
    graph = helper.make_graph([n for n in nodes if n is not None], name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return save_model(model, name + ".onnx")


def _codes(signed, seed=0):
    # Every code, then the rest at random, so both the lookup's vector loop and its tail see them.
    rng = np.random.default_rng(seed)
    n = int(np.prod(SHAPE))
    codes = np.concatenate([np.arange(256, dtype=np.uint8), rng.integers(0, 256, n - 256, dtype=np.uint8)])
    codes = codes.reshape(SHAPE)
    return codes.view(np.int8) if signed else codes


def _unfused(path, feed, threads):
    """Onyx's outputs with every pass but this one: the model optimized without it, run as saved."""
    out = path.replace(".onnx", "_no_lookup.onnx")
    proc = subprocess.run([ONYX_BIN, "optimize", path, "-o", out, "--require-kernels", "--disable",
                           "QLinearLookupFusion"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    try:
        return run_onyx(out, feed, threads=threads, extra_args=["--opt-level", "disabled"])
    finally:
        os.remove(out)


def _ops(path):
    return qm.op_counts(qm.onyx_optimize(path))


@pytest.mark.parametrize("signed,quantized_constants", [(False, False), (True, False), (False, True)])
def test_gelu_chain_becomes_one_lookup_with_the_chains_codes(signed, quantized_constants):
    path = _gelu(f"lookup_gelu_{signed}_{quantized_constants}", signed=signed, quantized_constants=quantized_constants)
    ops = _ops(path)
    assert ops == {"com.onyx.QLinearLookup": 1}, ops
    feed = {"x": _codes(signed)}
    for threads in (1, 2):
        got = run_onyx(path, feed, threads=threads)
        want = _unfused(path, feed, threads)
        assert got[0].dtype == want[0].dtype and got[0].shape == want[0].shape
        assert np.array_equal(got[0], want[0]), f"differs from the unfused chain at {threads} threads"
    ort = run_ort(path, feed)[0]
    assert np.array_equal(got[0], ort), f"{np.count_nonzero(got[0] != ort)} codes differ from ONNX Runtime's"


def test_chain_with_an_inside_value_read_elsewhere_stops_before_it():
    path = _gelu("lookup_erf_output", erf_output=True)
    ops = _ops(path)
    # The Erf's codes are an output, so they stay: DQ -> Div -> Erf -> Q is one lookup of x, the
    # + 1 one of the Erf's codes, and the Mul of x by that reads two values (it stays a
    # QLinearMul); the 0.5 after it is a lookup of its codes.
    assert ops == {"com.onyx.QLinearLookup": 3, "com.microsoft.QLinearMul": 1}, ops
    feed = {"x": _codes(False, 1)}
    got, want = run_onyx(path, feed, threads=2), _unfused(path, feed, 2)
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_per_channel_constant_ends_the_chain():
    path = _gelu("lookup_vector_half", vector_half=True)
    ops = _ops(path)
    # The per-channel 0.5 keeps its DQ -> Mul -> Q outside the lookup.
    assert ops == {"com.onyx.QLinearLookup": 1, "DequantizeLinear": 1, "Mul": 1, "QuantizeLinear": 1}, ops
    feed = {"x": _codes(False, 2)}
    got, want = run_onyx(path, feed, threads=1), _unfused(path, feed, 1)
    assert np.array_equal(got[0], want[0])


def test_two_inputs_are_not_one_lookup():
    path = _gelu("lookup_two_inputs", second_input=True)
    ops = _ops(path)
    # x -> Erf -> +1 is one lookup; the Mul by x2 and the 0.5 after it are not x's function.
    assert ops.get("com.onyx.QLinearLookup", 0) >= 1 and ops.get("com.microsoft.QLinearMul") == 1, ops
    feed = {"x": _codes(False, 3), "x2": _codes(False, 4)}
    got, want = run_onyx(path, feed, threads=2), _unfused(path, feed, 2)
    assert np.array_equal(got[0], want[0])


def _direct(name, table):
    node = helper.make_node("QLinearLookup", ["x", "table"], ["y"], domain="com.onyx")
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.UINT8, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, None)],
                              [numpy_helper.from_array(table, "table")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.onyx", 1)])
    return save_model(model, name + ".onnx")


def test_direct_op_looks_codes_up_in_the_tables_type():
    table = (np.arange(256) * 7 % 256 - 128).astype(np.int8)
    x = _codes(False, 5)
    y = run_onyx(_direct("lookup_direct", table), {"x": x}, threads=2)[0]
    assert y.dtype == np.int8 and np.array_equal(y, table[x])


def test_direct_op_rejects_a_table_of_another_size():
    path = _direct("lookup_short", np.zeros(255, np.int8))
    with pytest.raises(RuntimeError, match=r"Table must hold 256 uint8 or int8 codes, not int8 \[255\]"):
        run_onyx(path, {"x": _codes(False)})


def _chain(name, x_shape, body, out_type, inits):
    """x (uint8, declared shape x_shape; None: no shape) -> the nodes of `body` -> y."""
    graph = helper.make_graph(body, name, [helper.make_tensor_value_info("x", TensorProto.UINT8, x_shape)],
                              [helper.make_tensor_value_info("y", out_type, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return save_model(model, name + ".onnx")


def test_uint8_to_int8_chain_with_a_quantizer_axis_and_no_known_rank():
    # DQ -> Relu -> Q into int8 with an axis attribute on scalar parameters, on an input of unknown
    # rank: the table is int8, made on 256 codes of rank 1.
    inits = [_const("xs", 0.05, np.float32), _const("xz", 100, np.uint8), _const("ys", 0.03, np.float32),
             _const("yz", -20, np.int8)]
    body = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["d"]),
            helper.make_node("Relu", ["d"], ["r"]),
            helper.make_node("QuantizeLinear", ["r", "ys", "yz"], ["y"], axis=1)]
    path = _chain("lookup_u8_to_s8", None, body, TensorProto.INT8, inits)
    assert _ops(path) == {"com.onyx.QLinearLookup": 1}
    feed = {"x": _codes(False, 6)}
    got, want = run_onyx(path, feed, threads=2), _unfused(path, feed, 2)
    assert got[0].dtype == np.int8 and np.array_equal(got[0], want[0])
    assert np.array_equal(got[0], run_ort(path, feed)[0])


def test_constant_of_higher_rank_is_not_folded_into_a_table():
    # A [1, 1, 1, 1, 1] constant makes the rank-4 input's result rank 5: the chain keeps its Mul.
    inits = [_const("xs", 0.05, np.float32), _const("xz", 100, np.uint8), _const("ys", 0.03, np.float32),
             _const("yz", 20, np.uint8), numpy_helper.from_array(np.full([1, 1, 1, 1, 1], 1.5, np.float32), "c")]
    body = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["d"]),
            helper.make_node("Mul", ["d", "c"], ["m"]),
            helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["y"])]
    path = _chain("lookup_rank_widening", SHAPE, body, TensorProto.UINT8, inits)
    ops = _ops(path)
    assert "com.onyx.QLinearLookup" not in ops and ops.get("Mul") == 1, ops
    feed = {"x": _codes(False, 7)}
    got = run_onyx(path, feed, threads=1)[0]
    assert got.shape == (1, *SHAPE) and np.array_equal(got, run_ort(path, feed)[0])
