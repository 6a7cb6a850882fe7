"""A float LayerNormalization between DequantizeLinear and QuantizeLinear (as ONNX Runtime's
quantizer leaves it in a BERT) must give ONNX Runtime's floats, not only close ones: a last-bit
difference flips the code its output rounds to, and the flipped codes grow through the layers
after it (BERT-base QDQ ended 4 output steps from ONNX Runtime's before Onyx matched them). Such a
LayerNormalization runs linalg::LayerNormRowsCentered, ONNX Runtime 1.31's arithmetic on x86-64,
for rows of 8 values or more.

The rows have offsets and spreads of their own, and lengths around the 4- and 8-lane widths, so
every lane, reduction and tail step is exercised; the control checks that on these rows Onyx's own
LayerNormalization (a float model, no quantize node beside it) gives other floats, so agreement
here is not an accident of the data."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model

ROWS = 64
X_SCALE, X_ZERO = np.float32(0.05), np.uint8(120)


def ln_model(n, quantized, name):
    """quantized: codes -> DequantizeLinear -> LayerNormalization (int8 gamma through its own
    DequantizeLinear, float beta) -> [y, QuantizeLinear(y)]; else the same LayerNormalization on
    a float input, y only."""
    rng = np.random.default_rng(n)
    gamma_codes = rng.integers(40, 127, size=n, dtype=np.int8)
    beta = (rng.standard_normal(n) * 0.1).astype(np.float32)
    inits = [numpy_helper.from_array(beta, "beta")]
    nodes = []
    if quantized:
        inits += [numpy_helper.from_array(X_SCALE, "xs"), numpy_helper.from_array(X_ZERO, "xz"),
                  numpy_helper.from_array(gamma_codes, "gq"), numpy_helper.from_array(np.float32(0.01), "gs"),
                  numpy_helper.from_array(np.int8(0), "gz"), numpy_helper.from_array(np.float32(0.03), "ys"),
                  numpy_helper.from_array(np.uint8(128), "yz")]
        nodes += [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
                  helper.make_node("DequantizeLinear", ["gq", "gs", "gz"], ["gamma"])]
        data = "xd"
        x_info = helper.make_tensor_value_info("x", TensorProto.UINT8, [ROWS, n])
    else:
        inits.append(numpy_helper.from_array((gamma_codes.astype(np.float32) * np.float32(0.01)), "gamma"))
        data = "x"
        x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, n])
    nodes.append(helper.make_node("LayerNormalization", [data, "gamma", "beta"], ["y"], axis=-1, epsilon=1e-12))
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [ROWS, n])]
    if quantized:
        nodes.append(helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["q"]))
        outputs.append(helper.make_tensor_value_info("q", TensorProto.UINT8, [ROWS, n]))
    graph = helper.make_graph(nodes, name, [x_info], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return save_model(model, f"{name}.onnx")


def codes(n):
    """Rows of codes around their own centres with their own spreads."""
    rng = np.random.default_rng(1000 + n)
    centres = rng.integers(60, 200, size=(ROWS, 1))
    spreads = rng.uniform(2, 40, size=(ROWS, 1))
    return np.clip(np.rint(centres + spreads * rng.standard_normal((ROWS, n))), 0, 255).astype(np.uint8)


LENGTHS = [8, 9, 12, 20, 64, 100, 768, 771, 1030]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", LENGTHS)
def test_layer_norm_between_quantizers_gives_onnxruntime_floats(n, threads):
    path = ln_model(n, True, f"qdq_ln_{n}")
    feeds = {"x": codes(n)}
    want_y, want_q = run_ort(path, feeds)
    got_y, got_q = run_onyx(path, feeds, threads=threads)
    differ = np.count_nonzero(got_y.view(np.uint32) != want_y.view(np.uint32))
    assert differ == 0, f"{differ} of {got_y.size} floats differ from ONNX Runtime's (n {n})"
    assert np.array_equal(got_q, want_q)


def test_control_plain_layer_norm_rounds_otherwise():
    """On the same values as floats, with no quantize node beside it, Onyx's own LayerNormalization
    (one pass, in another order) differs from ONNX Runtime's in some last bits: the rows above can
    tell the two arithmetics apart."""
    differ = 0
    for n in (768, 1030):
        path = ln_model(n, False, f"plain_ln_{n}")
        feeds = {"x": (codes(n).astype(np.float32) - np.float32(X_ZERO)) * X_SCALE}
        want, got = run_ort(path, feeds)[0], run_onyx(path, feeds)[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        differ += np.count_nonzero(got.view(np.uint32) != want.view(np.uint32))
    assert differ > 0
