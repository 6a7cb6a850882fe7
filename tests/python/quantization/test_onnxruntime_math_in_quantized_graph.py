"""In a quantized graph Onyx's float Sigmoid, Erf and Tanh are ONNX Runtime's bit for bit (MLAS's
rational logistic, erf and tanh: linalg::VecSigmoidAsOnnxRuntime, VecErfAsOnnxRuntime,
VecTanhAsOnnxRuntime): their results are quantized on, and a last bit that differs moves a
DynamicQuantizeLinear's range or a code, and every layer after it (a dynamically quantized YOLO's
outputs were up to 5.3 apart for the Sigmoid alone, docs/quantization.md). QLinearSigmoid's table
is built with the same logistic, as ONNX Runtime builds its own. The controls check that outside a
quantized graph Onyx keeps its own, more accurate functions, which differ from ONNX Runtime's on
these inputs: the exact checks can fail."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model

N = 200_003  # a tail past every vector width


def sigmoid_model(quantized, silu, name, op="Sigmoid"):
    """x -> op (-> Mul by x: a SiLU) -> y, and with quantized also y -> DynamicQuantizeLinear."""
    nodes = [helper.make_node(op, ["x"], ["s" if silu else "y"])]
    if silu:
        nodes.append(helper.make_node("Mul", ["x", "s"], ["y"]))
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N])]
    if quantized:
        nodes.append(helper.make_node("DynamicQuantizeLinear", ["y"], ["q", "qs", "qz"]))
        outputs += [helper.make_tensor_value_info("q", TensorProto.UINT8, [N]),
                    helper.make_tensor_value_info("qs", TensorProto.FLOAT, []),
                    helper.make_tensor_value_info("qz", TensorProto.UINT8, [])]
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N])], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return save_model(model, f"{name}.onnx")


def inputs():
    rng = np.random.default_rng(5)
    x = rng.uniform(-20, 20, N).astype(np.float32)
    x[:8] = [-18.5, -18, 18, 18.5, 0, -0.0, 1e-8, -1e-30]  # the clamps, zero, tiny values
    return {"x": x}


def different_bits(a, b):
    return np.count_nonzero(a.view(np.uint32) != b.view(np.uint32))


@pytest.mark.parametrize("isa", ["auto", "avx2", "scalar"])
@pytest.mark.parametrize("silu", [False, True])
def test_sigmoid_in_quantized_graph_is_onnxruntimes(silu, isa, monkeypatch):
    if isa != "auto":
        monkeypatch.setenv("ONYX_LINALG_ISA", isa)
    path = sigmoid_model(True, silu, f"q_sigmoid_{int(silu)}")
    want = run_ort(path, inputs())
    for threads in (1, 2):
        got = run_onyx(path, inputs(), threads=threads)
        assert different_bits(got[0], want[0]) == 0, f"{threads} threads, {isa}"
        for g, w in zip(got[1:], want[1:]):
            assert np.array_equal(g, w)


# Erf over [-5, 5] (both of its branches, split at 0.921875), Tanh over [-10, 10] (its clamp at 9).
SPANS = {"Erf": 4, "Tanh": 2}


@pytest.mark.parametrize("isa", ["auto", "avx2", "scalar"])
@pytest.mark.parametrize("op", ["Erf", "Tanh"])
def test_erf_and_tanh_in_quantized_graph_are_onnxruntimes(op, isa, monkeypatch):
    """A quantized GELU's Erf (BERT's, in QDQ form) and a Tanh, as ONNX Runtime computes them."""
    if isa != "auto":
        monkeypatch.setenv("ONYX_LINALG_ISA", isa)
    path = sigmoid_model(True, False, f"q_{op}", op=op)
    feeds = {"x": inputs()["x"] / np.float32(SPANS[op])}
    want = run_ort(path, feeds)
    for threads in (1, 2):
        got = run_onyx(path, feeds, threads=threads)
        assert different_bits(got[0], want[0]) == 0, f"{threads} threads, {isa}"
        for g, w in zip(got[1:], want[1:]):
            assert np.array_equal(g, w)


@pytest.mark.parametrize("op", ["Erf", "Tanh"])
def test_control_plain_erf_and_tanh_are_onyxs_own(op):
    path = sigmoid_model(False, False, f"plain_{op}", op=op)
    feeds = {"x": inputs()["x"] / np.float32(SPANS[op])}
    want, got = run_ort(path, feeds)[0], run_onyx(path, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert different_bits(got, want) > 1000


def test_qlinear_sigmoid_table_is_onnxruntimes():
    """Every code of a QLinearSigmoid. The last scales are rare ones (2 in 3000 random pairs) where
    a code of the table depends on which logistic builds it: one code apart with 1 / (1 + exp(-x))."""
    codes = np.arange(256, dtype=np.uint8)
    for x_scale, y_scale in [(0.05, 1 / 256), (0.11, 1 / 255), (0.13484381139278412, 0.00039024848956614733)]:
        inits = [numpy_helper.from_array(np.float32(x_scale), "xs"), numpy_helper.from_array(np.uint8(128), "xz"),
                 numpy_helper.from_array(np.float32(y_scale), "ys"), numpy_helper.from_array(np.uint8(0), "yz")]
        node = helper.make_node("QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft")
        graph = helper.make_graph([node], "qs", [helper.make_tensor_value_info("x", TensorProto.UINT8, [256])],
                                  [helper.make_tensor_value_info("y", TensorProto.UINT8, [256])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                        helper.make_opsetid("com.microsoft", 1)])
        model.ir_version = 8
        path = save_model(model, "qlinear_sigmoid.onnx")
        np.testing.assert_array_equal(run_onyx(path, {"x": codes})[0], run_ort(path, {"x": codes})[0],
                                      err_msg=f"scales {x_scale}, {y_scale}")


def test_control_plain_sigmoid_is_onyxs_own():
    path = sigmoid_model(False, False, "plain_sigmoid")
    want, got = run_ort(path, inputs())[0], run_onyx(path, inputs())[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert different_bits(got, want) > 1000


@pytest.mark.parametrize("disabled", ["", "QLinearLookupFusion", "QLinearLookupFusion,QdqOpFusion"])
@pytest.mark.parametrize("halve", [False, True])
def test_qdq_sigmoid_chain_is_onnxruntimes(halve, disabled):
    """DequantizeLinear -> Sigmoid [-> Mul by 0.5] -> QuantizeLinear on every code, at the rare
    scale pair above (halved with the Mul, so the same quotients round): whichever op ends up
    computing it (a fused QLinearSigmoid; with the Mul, a QLinearLookup whose table the optimizer
    builds by running the chain's kernels; or the float Sigmoid itself), the codes are ONNX
    Runtime's."""
    y_scale = np.float32(0.00039024848956614733) * np.float32(0.5 if halve else 1.0)
    inits = [numpy_helper.from_array(np.float32(0.13484381139278412), "xs"),
             numpy_helper.from_array(np.uint8(128), "xz"), numpy_helper.from_array(y_scale, "ys"),
             numpy_helper.from_array(np.uint8(0), "yz"), numpy_helper.from_array(np.float32(0.5), "half")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
             helper.make_node("Sigmoid", ["xd"], ["s"])]
    if halve:
        nodes.append(helper.make_node("Mul", ["s", "half"], ["sh"]))
    nodes.append(helper.make_node("QuantizeLinear", ["sh" if halve else "s", "ys", "yz"], ["y"]))
    graph = helper.make_graph(nodes, "qdq_sigmoid", [helper.make_tensor_value_info("x", TensorProto.UINT8, [256])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [256])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = save_model(model, "qdq_sigmoid.onnx")
    codes = {"x": np.arange(256, dtype=np.uint8)}
    extra = ["--config", f"optimization.disable_specified_optimizers={disabled}"] if disabled else []
    np.testing.assert_array_equal(run_onyx(path, codes, extra_args=extra)[0], run_ort(path, codes)[0])


@pytest.mark.parametrize("op", ["Sigmoid", "Erf", "Tanh"])
def test_op_in_an_if_body_of_a_quantized_graph_is_onnxruntimes(op):
    """The op sits in an If's branches and only the enclosing graph quantizes (a
    DynamicQuantizeLinear after the If): the body counts as part of a quantized graph, so its
    results and the codes after them are ONNX Runtime's (the controls above show Onyx's own forms
    differ on these inputs)."""
    def branch(name):
        return helper.make_graph([helper.make_node(op, ["x"], [f"{name}_y"])], name, [],
                                 [helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, [N])])
    nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=branch("then"), else_branch=branch("other")),
             helper.make_node("DynamicQuantizeLinear", ["y"], ["q", "qs", "qz"])]
    inputs_ = [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
               helper.make_tensor_value_info("x", TensorProto.FLOAT, [N])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N]),
               helper.make_tensor_value_info("q", TensorProto.UINT8, [N]),
               helper.make_tensor_value_info("qs", TensorProto.FLOAT, []),
               helper.make_tensor_value_info("qz", TensorProto.UINT8, [])]
    graph = helper.make_graph(nodes, f"if_{op}", inputs_, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = save_model(model, f"if_{op}.onnx")
    feeds = {"cond": np.array(True), "x": inputs()["x"] / np.float32(SPANS.get(op, 1))}
    want, got = run_ort(path, feeds), run_onyx(path, feeds)
    assert different_bits(got[0], want[0]) == 0
    for g, w in zip(got[1:], want[1:]):
        assert np.array_equal(g, w)
