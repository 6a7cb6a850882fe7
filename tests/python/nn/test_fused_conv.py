"""FusedConv: com.microsoft FusedConv checked against ONNX Runtime 1.30 (its contrib kernel), and
the Onyx-own com.onyx FusedConv (adds Silu and HardSwish) checked against Conv followed by the
plain ONNX ops in Onyx. Shapes cover every convolution engine (direct, pointwise, depthwise,
Winograd, 1-D), each ISA variant is forced once, and bad attributes must fail cleanly."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import assert_outputs_close, run_onyx, run_ort, save_model

rng = np.random.default_rng(11)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# name: (x shape, w shape, conv attributes)
SHAPES = {
    "direct_strided": ((1, 5, 17, 19), (12, 5, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "pointwise": ((2, 24, 14, 15), (40, 24, 1, 1), {}),
    "winograd": ((1, 32, 20, 23), (24, 32, 3, 3), {"pads": [1, 1, 1, 1]}),
    "depthwise": ((1, 20, 21, 18), (20, 1, 5, 5), {"group": 20, "pads": [2, 2, 2, 2], "strides": [2, 1]}),
    "grouped_dilated": ((1, 8, 16, 16), (12, 2, 3, 3), {"group": 4, "dilations": [2, 2], "pads": [2, 1, 1, 2]}),
    "conv1d": ((2, 6, 40), (10, 6, 5), {"pads": [2, 2], "strides": [2]}),
}

# activation: attributes (ORT's activation_params: LeakyRelu [alpha], Clip [min, max],
# HardSigmoid [alpha, beta]).
ACTIVATIONS = {
    "none": {},
    "Relu": {"activation": "Relu"},
    "Tanh": {"activation": "Tanh"},
    "Sigmoid": {"activation": "Sigmoid"},
    "LeakyRelu": {"activation": "LeakyRelu", "activation_params": [0.15]},
    "Clip": {"activation": "Clip", "activation_params": [-0.5, 1.5]},
    "HardSigmoid": {"activation": "HardSigmoid", "activation_params": [0.3, 0.45]},
}


def fused_model(domain, xs, ws, attrs, act_attrs, with_bias=True, with_z=False, constant_w=True, opset=13):
    x, w = rand(*xs), rand(*ws) * 0.3
    b = rand(ws[0])
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, xs)]
    inits = []
    feeds = {"X": x}
    if constant_w:
        inits.append(numpy_helper.from_array(w, "W"))
    else:
        inputs.append(helper.make_tensor_value_info("W", TensorProto.FLOAT, ws))
        feeds["W"] = w
    if with_bias:
        inits.append(numpy_helper.from_array(b, "B"))
    node_inputs = ["X", "W", "B" if with_bias else ""]
    if with_z:
        node_inputs.append("Z")
    node = helper.make_node("FusedConv", node_inputs, ["Y"], domain=domain, **attrs, **act_attrs)
    nodes = [node]
    if with_z:
        # Z has the output's shape: produce it from X with a plain Conv of the same geometry, so
        # the test does not need to know the output size.
        inits.append(numpy_helper.from_array(rand(*ws) * 0.3, "Wz"))
        nodes.insert(0, helper.make_node("Conv", ["X", "Wz"], ["Z"], **attrs))
    graph = helper.make_graph(nodes, "fused", inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(domain, 1)])
    model.ir_version = 8
    return model, feeds


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
def test_microsoft_fused_conv_vs_ort(shape, act):
    xs, ws, attrs = SHAPES[shape]
    model, feeds = fused_model("com.microsoft", xs, ws, attrs, ACTIVATIONS[act])
    path = save_model(model, f"fusedconv_{shape}_{act}.onnx")
    assert_outputs_close(run_ort(path, feeds), run_onyx(path, feeds), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("shape", ["pointwise", "winograd", "depthwise", "direct_strided"])
@pytest.mark.parametrize("act", ["none", "Relu", "Clip"])
@pytest.mark.parametrize("threads", [1, 2])
def test_microsoft_fused_conv_residual_vs_ort(shape, act, threads):
    xs, ws, attrs = SHAPES[shape]
    model, feeds = fused_model("com.microsoft", xs, ws, attrs, ACTIVATIONS[act], with_z=True)
    path = save_model(model, f"fusedconv_z_{shape}_{act}.onnx")
    assert_outputs_close(run_ort(path, feeds), run_onyx(path, feeds, threads=threads), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("shape", ["pointwise", "winograd", "conv1d"])
def test_microsoft_fused_conv_fed_weight_no_bias(shape):
    xs, ws, attrs = SHAPES[shape]
    model, feeds = fused_model("com.microsoft", xs, ws, attrs, ACTIVATIONS["LeakyRelu"], with_bias=False,
                               constant_w=False)
    path = save_model(model, f"fusedconv_fed_{shape}.onnx")
    assert_outputs_close(run_ort(path, feeds), run_onyx(path, feeds), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("isa", ["avx512", "avx2", "scalar"])
@pytest.mark.parametrize("algo", ["auto", "direct", "gemm"])
def test_forced_isa_and_algorithm(monkeypatch, isa, algo):
    """Every ISA variant (on a machine that has it; others fall back to the best available) and
    every convolution path against ORT."""
    monkeypatch.setenv("ONYX_CONV_ISA", isa)
    monkeypatch.setenv("ONYX_LINALG_ISA", isa)  # the GEMM path
    monkeypatch.setenv("ONYX_CONV_ALGO", algo)
    for shape in sorted(SHAPES):
        xs, ws, attrs = SHAPES[shape]
        model, feeds = fused_model("com.microsoft", xs, ws, attrs, ACTIVATIONS["Clip"], with_z=True)
        path = save_model(model, f"fusedconv_isa_{isa}_{algo}_{shape}.onnx")
        assert_outputs_close(run_ort(path, feeds), run_onyx(path, feeds, threads=2), rtol=1e-3, atol=1e-4)


def reference_chain(xs, ws, attrs, act, with_z):
    """Conv, then Add(Z), then the activation as plain ONNX ops (opset 14)."""
    inits = [numpy_helper.from_array(rand(*ws) * 0.3, "W"), numpy_helper.from_array(rand(ws[0]), "B"),
             numpy_helper.from_array(rand(*ws) * 0.3, "Wz")]
    conv_nodes = [helper.make_node("Conv", ["X", "W", "B"], ["C"], **attrs)]
    fused_inputs = ["X", "W", "B"]
    pre = "C"
    if with_z:
        conv_nodes.insert(0, helper.make_node("Conv", ["X", "Wz"], ["Z"], **attrs))
        conv_nodes.append(helper.make_node("Add", ["C", "Z"], ["S"]))
        fused_inputs.append("Z")
        pre = "S"
    if act == "Silu":
        acts = [helper.make_node("Sigmoid", [pre], ["G"]), helper.make_node("Mul", [pre, "G"], ["Y"])]
    else:
        acts = [helper.make_node("HardSwish", [pre], ["Y"])]
    x_info = [helper.make_tensor_value_info("X", TensorProto.FLOAT, xs)]
    y_info = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)]
    plain = helper.make_model(helper.make_graph(conv_nodes + acts, "plain", x_info, y_info, inits),
                              opset_imports=[helper.make_opsetid("", 14)])
    fused_nodes = ([conv_nodes[0]] if with_z else []) + [
        helper.make_node("FusedConv", fused_inputs, ["Y"], domain="com.onyx", activation=act, **attrs)]
    fused = helper.make_model(helper.make_graph(fused_nodes, "fused", x_info, y_info, inits),
                              opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("com.onyx", 1)])
    plain.ir_version = fused.ir_version = 8
    return plain, fused


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("act", ["Silu", "HardSwish"])
@pytest.mark.parametrize("with_z", [False, True])
def test_onyx_fused_conv_matches_plain_ops(shape, act, with_z):
    xs, ws, attrs = SHAPES[shape]
    plain, fused = reference_chain(xs, ws, attrs, act, with_z)
    feeds = {"X": rand(*xs)}
    want = run_onyx(save_model(plain, f"onyxfused_plain_{shape}_{act}_{with_z}.onnx"), feeds)
    got = run_onyx(save_model(fused, f"onyxfused_{shape}_{act}_{with_z}.onnx"), feeds, threads=2)
    assert_outputs_close(want, got, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("domain,attrs,message", [
    ("com.microsoft", {"activation": "Gelu"}, "activation 'Gelu' is not supported"),
    ("com.microsoft", {"activation": "HardSwish"}, "activation 'HardSwish' is not supported"),
    ("com.microsoft", {"activation": "Silu"}, "activation 'Silu' is not supported"),  # as ORT 1.30
    ("com.onyx", {"activation": "Swish"}, "activation 'Swish' is not supported"),
    ("com.microsoft", {"activation": "LeakyRelu"}, "needs 1 activation_params, got 0"),
    ("com.onyx", {"activation": "Clip", "activation_params": [0.0]}, "needs 2 activation_params, got 1"),
])
def test_bad_activation_fails_cleanly(domain, attrs, message):
    xs, ws, conv_attrs = SHAPES["pointwise"]
    model, feeds = fused_model(domain, xs, ws, conv_attrs, attrs)
    with pytest.raises(RuntimeError, match=message):
        run_onyx(save_model(model, f"fusedconv_bad_{domain}_{attrs['activation']}.onnx"), feeds)


def test_residual_with_wrong_shape_fails_cleanly():
    xs, ws, attrs = SHAPES["pointwise"]
    x, w = rand(*xs), rand(*ws)
    node = helper.make_node("FusedConv", ["X", "W", "", "Z"], ["Y"], domain="com.microsoft", activation="Relu")
    graph = helper.make_graph([node], "bad_z", [helper.make_tensor_value_info("X", TensorProto.FLOAT, xs),
                                                helper.make_tensor_value_info("Z", TensorProto.FLOAT, [1, 3])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    with pytest.raises(RuntimeError, match="Z must have the output's shape"):
        run_onyx(save_model(model, "fusedconv_bad_z.onnx"), {"X": x, "Z": rand(1, 3)})


@pytest.mark.parametrize("with_bias", [True, False])
def test_conv_over_zero_input_channels_gives_the_bias(with_bias):
    """X [3, 0, 5] and a fed W [4, 0, 5]: each output is a sum over no channels, so its channel's
    bias (or 0), through Relu. The tiled kernels divided by the channel count: the session fuzz
    harness stopped on SIGFPE (tests/fuzz/regressions/session/conv_over_zero_input_channels.onnx)."""
    bias = np.array([1.5, -2.0, 0.0, 3.25], np.float32)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 0, 5]),
              helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 0, 5])]
    conv_inputs = ["x", "w"] + (["b"] if with_bias else [])
    nodes = [helper.make_node("Conv", conv_inputs, ["c"]), helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "conv0", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(bias, "b")] if with_bias else [])
    path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "conv0.onnx")
    got = run_onyx(path, {"x": np.zeros((3, 0, 5), np.float32), "w": np.zeros((4, 0, 5), np.float32)})[0]
    expected = np.broadcast_to(np.maximum(bias if with_bias else 0 * bias, 0)[None, :, None], (3, 4, 1))
    np.testing.assert_array_equal(got, expected)
