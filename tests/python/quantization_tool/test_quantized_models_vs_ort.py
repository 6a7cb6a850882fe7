"""Models written by onyx.quantization are standard ONNX that ONNX Runtime 1.31.1 runs: ONNX
Runtime and Onyx (the `onyx run` command) agree on them, on the same inputs, integer tensors
exactly (every quantized activation exposed as an extra graph output) and float outputs within
one quantization step of the output's scale."""
import numpy as np
import onnx
import pytest
from onnx import helper

import qt_models as qm
from onyx_harness import run_onyx, run_ort, save_model
from onyx.quantization import QuantFormat, QuantType
from onyx.quantization.quantize import dynamic_quantize, static_quantize

STATIC_CONFIGS = [(fmt, act, pc) for fmt in (QuantFormat.QDQ, QuantFormat.QOperator)
                  for act in (QuantType.QInt8, QuantType.QUInt8) for pc in (False, True)]
INT_TYPES = (onnx.TensorProto.INT8, onnx.TensorProto.UINT8, onnx.TensorProto.INT32)


def output_steps(model):
    """{graph output: the scale of the DequantizeLinear writing it}."""
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    steps = {}
    for n in model.graph.node:
        if n.op_type == "DequantizeLinear" and n.output[0] in {o.name for o in model.graph.output}:
            steps[n.output[0]] = float(np.max(inits[n.input[1]]))
    return steps


def with_integer_outputs(model, names):
    """A copy with the integer tensors `names` ({name: element type}) added as graph outputs."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for name, elem in names.items():
        m.graph.output.append(helper.make_tensor_value_info(name, elem, None))
    return m


def integer_tensors(result):
    """Quantized tensors of a model onyx.quantization wrote: QuantizeLinear outputs of
    activations, the QLinear ops' 8-bit outputs, the integer ops' int32 outputs, the rows gathered
    from 8-bit tables."""
    model = result.model
    inits = {i.name for i in model.graph.initializer}
    act_type = {}
    for n in model.graph.node:
        if n.op_type == "QuantizeLinear" and n.input[0] not in inits:
            act_type[n.output[0]] = result.plan.options.activation_type
        if n.op_type in ("MatMulInteger", "ConvInteger"):
            act_type[n.output[0]] = onnx.TensorProto.INT32
        if n.op_type == "DynamicQuantizeLinear":
            act_type[n.output[0]] = onnx.TensorProto.UINT8
        if n.op_type == "Gather" and n.input[0] in inits:  # rows of an 8-bit table
            act_type[n.output[0]] = result.plan.options.weight_type
    for t, (q, _, _) in result.plan.qnames.items():
        act_type[q] = result.plan.options.activation_type
    graph_outputs = {o.name for o in model.graph.output}
    return {k: v for k, v in act_type.items() if k not in graph_outputs}


def compare(result, feeds, float_rtol=None, float_conv_slack=0.0):
    """float_conv_slack: the share of an integer tensor's values that may differ when the model
    keeps float convolutions between DQ and Q (int8 activations in QDQ, which ONNX Runtime leaves
    float on x86): the last bit of a float sum depends on each engine's summation order, so a
    value at a rounding boundary can take the neighbouring code, and later layers carry it on."""
    onnx.checker.check_model(result.model, full_check=True)  # valid ONNX, types and shapes included
    path = save_model(result.model, "quantized.onnx")
    steps = output_steps(result.model)
    for feed in feeds:
        expected, got = run_ort(path, feed), run_onyx(path, feed)
        for o, e, g in zip(result.model.graph.output, expected, got):
            assert e.shape == g.shape and e.dtype == g.dtype, o.name
            worst = float(np.max(np.abs(e.astype(np.float64) - g))) if e.size else 0.0
            bound = steps[o.name] * 1.0001 if float_rtol is None else float_rtol * float(np.max(np.abs(e)))
            assert worst <= bound, f"{o.name}: Onyx and ONNX Runtime differ by {worst} (> {bound})"
    ints = integer_tensors(result)
    assert ints, "no integer tensor to compare"
    exposed = with_integer_outputs(result.model, ints)
    path = save_model(exposed, "quantized_exposed.onnx")
    names = [o.name for o in exposed.graph.output]
    for feed in feeds[:2]:
        expected, got = run_ort(path, feed), run_onyx(path, feed)
        for name, e, g in zip(names, expected, got):
            if name in ints:
                assert e.dtype == g.dtype, name
                differ = int(np.count_nonzero(e != g))
                allowed = max(1.0, float_conv_slack * e.size) if float_conv_slack else 0.0  # a pooled value too
                assert differ <= allowed, \
                    f"{name}: {differ} of {e.size} integer values differ from ONNX Runtime's"


@pytest.mark.parametrize("fmt,act,per_channel", STATIC_CONFIGS,
                         ids=[f"{f.name}-{a.name}-{'pc' if p else 'pt'}" for f, a, p in STATIC_CONFIGS])
def test_static_conv_net(fmt, act, per_channel):
    model = qm.conv_net()
    feeds = qm.feeds_for(model, 8)
    result = static_quantize(model, qm.ListReader(feeds), quant_format=fmt, activation_type=act,
                             per_channel=per_channel)
    ops = {n.op_type for n in result.model.graph.node}
    if fmt == QuantFormat.QOperator:
        assert {"QLinearConv", "QLinearAdd", "QLinearSigmoid", "QLinearGlobalAveragePool", "QGemm"} <= ops, ops
        assert "Conv" not in ops and "Relu" not in ops
    else:
        assert "Relu" not in ops  # folded into the Conv output's range
        assert len(qm.nodes_of(result.model, "DequantizeLinear")) > 10
    # QDQ with int8 activations: the convs stay float in both engines on x86. On an AVX2 Zen 3, one
    # of 8192 codes of a conv output sat at a rounding boundary (8 of 2048 after two more layers).
    slack = 0.005 if fmt == QuantFormat.QDQ and act == QuantType.QInt8 else 0.0
    compare(result, qm.feeds_for(model, 3, seed=9, batch=2), float_conv_slack=slack)


@pytest.mark.parametrize("fmt", [QuantFormat.QDQ, QuantFormat.QOperator], ids=["QDQ", "QOperator"])
@pytest.mark.parametrize("act", [QuantType.QInt8, QuantType.QUInt8], ids=["QInt8", "QUInt8"])
def test_static_mlp_net(fmt, act):
    model = qm.mlp_net()
    feeds = qm.feeds_for(model, 8, batch=4)
    result = static_quantize(model, qm.ListReader(feeds), quant_format=fmt, activation_type=act)
    if fmt == QuantFormat.QOperator:
        ops = {n.op_type for n in result.model.graph.node}
        assert {"QLinearMatMul", "QLinearAdd", "QLinearLeakyRelu", "QLinearConcat", "QLinearMul",
                "QLinearSoftmax", "QLinearAveragePool", "Transpose"} <= ops, ops
    compare(result, qm.feeds_for(model, 3, seed=9, batch=3))


@pytest.mark.parametrize("per_channel", [False, True], ids=["pt", "pc"])
@pytest.mark.parametrize("wtype", [QuantType.QInt8, QuantType.QUInt8], ids=["QInt8", "QUInt8"])
def test_dynamic(per_channel, wtype):
    models = [qm.conv_net(), qm.mlp_net()]
    if per_channel and wtype == QuantType.QUInt8:
        # asymmetric per-channel zero points: ONNX Runtime's ConvInteger takes one zero point only
        with pytest.raises(ValueError, match="per_channel=True on Conv"):
            dynamic_quantize(models.pop(0), per_channel=True, weight_type=wtype)
    for model in models:
        result = dynamic_quantize(model, per_channel=per_channel, weight_type=wtype)
        ops = {n.op_type for n in result.model.graph.node}
        assert "DynamicQuantizeLinear" in ops and ("ConvInteger" in ops or "MatMulInteger" in ops)
        compare(result, qm.feeds_for(model, 2, seed=3, batch=2), float_rtol=1e-5)


def test_real_classifier_dynamic():
    """PaddleOCR's text-direction classifier (a real export; opset 9 moved to 13, its weights
    Constant nodes), dynamically quantized and run by ONNX Runtime and Onyx: the first layer's
    integer tensors (DynamicQuantizeLinear of the model's input, ConvInteger) are equal. Every later
    layer's input is a float result the two runtimes round differently in the last bit, so a value
    on a rounding tie may quantize one step apart there; the outputs agree to 1e-3."""
    from onnx import version_converter
    from onyx_harness import require_shared
    src = require_shared("models", "real", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    model = version_converter.convert_version(onnx.load(src), 13)
    model.ir_version = 8
    result = dynamic_quantize(model)
    nodes = result.model.graph.node
    assert sum(n.op_type == "ConvInteger" for n in nodes) > 40
    first = [n for n in nodes if n.op_type == "DynamicQuantizeLinear"][0]
    assert first.input[0] == "x"
    conv = next(n for n in nodes if n.op_type == "ConvInteger" and n.input[0] == first.output[0])
    exposed = with_integer_outputs(result.model, {first.output[0]: onnx.TensorProto.UINT8,
                                                  conv.output[0]: onnx.TensorProto.INT32})
    path = save_model(exposed, "cls_dynamic.onnx")
    rng = np.random.default_rng(4)
    feed = {"x": rng.uniform(-1, 1, size=(2, 3, 48, 192)).astype(np.float32)}
    expected, got = run_ort(path, feed), run_onyx(path, feed)
    np.testing.assert_array_equal(got[1], expected[1])
    np.testing.assert_array_equal(got[2], expected[2])
    np.testing.assert_allclose(got[0], expected[0], atol=1e-3)


def test_qlinearadd_tie_rounds_like_ort():
    """The smallest model showing the one integer difference once found between the runtimes on
    models this quantizer writes (HardSwish's +3 before a folded Clip(0, 6) in PaddleOCR's
    classifier): (0 + 3.0) / (6/255) - 128 is -0.5 exactly, but ONNX Runtime's constant term
    zc - fma(ra, za, rb zb) lands just below it and gives -1, as Onyx's now does."""
    c = onnx.numpy_helper.from_array
    inits = [c(np.array(0.0452469177544117, np.float32), "sa"), c(np.array(-34, np.int8), "za"),
             c(np.array([127], np.int8), "b"), c(np.array(3 / 255, np.float32), "sb"), c(np.array(-128, np.int8), "zb"),
             c(np.array(6 / 255, np.float32), "sy"), c(np.array(-128, np.int8), "zy")]
    node = helper.make_node("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"], domain="com.microsoft")
    graph = helper.make_graph([node], "tie", [helper.make_tensor_value_info("a", onnx.TensorProto.INT8, [4])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.INT8, [4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.microsoft", 1)])
    path = save_model(model, "qlinearadd_tie.onnx")
    feed = {"a": np.array([-34, -33, -35, 0], np.int8)}
    np.testing.assert_array_equal(run_onyx(path, feed)[0], run_ort(path, feed)[0])


@pytest.mark.parametrize("mode", ["QDQ", "QOperator", "dynamic"])
def test_embedding_gather(mode):
    """A Gather from a constant table reads the 8-bit table and dequantizes the rows it took."""
    model = qm.embed_net()
    if mode == "dynamic":
        result = dynamic_quantize(model)
    else:
        result = static_quantize(model, qm.ListReader(qm.embed_feeds(6)), quant_format=getattr(QuantFormat, mode))
    gather = [n for n in result.model.graph.node if n.op_type == "Gather"]
    assert len(gather) == 1 and gather[0].input[0] == "E_quantized"
    assert onnx.numpy_helper.to_array(
        next(i for i in result.model.graph.initializer if i.name == "E_quantized")).dtype == np.int8
    compare(result, qm.embed_feeds(2, seed=8), float_rtol=1e-5 if mode == "dynamic" else None)


@pytest.mark.xfail(strict=True, reason="at the default optimization level Onyx (like ONNX Runtime) runs "
                   "DQ -> Softmax -> Q as QLinearSoftmax and returns 0 for the larger probabilities when the output "
                   "scale is not 1/256 or 1/255; unoptimized, both give the right values. onyx.quantization fixes "
                   "Softmax outputs to [0, 1] because of it: reported with issue 15, item 4")
def test_softmax_between_qdq_keeps_its_values_when_optimized():
    c = onnx.numpy_helper.from_array
    inits = [c(np.array(0.005, np.float32), "xs"), c(np.array(-6, np.int8), "xz"),
             c(np.array(0.0030664175, np.float32), "ys"), c(np.array(-128, np.int8), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("Softmax", ["xd"], ["s"], axis=-1),
             helper.make_node("QuantizeLinear", ["s", "ys", "yz"], ["sq"]),
             helper.make_node("DequantizeLinear", ["sq", "ys", "yz"], ["y"])]
    x_info = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3, 2])
    graph = helper.make_graph(nodes, "softmax_qdq", [x_info],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [3, 2])], inits)
    path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), "softmax_qdq.onnx")
    feed = {"x": np.array([[0.1, 0.3], [-0.2, 0.4], [0.5, -0.5]], np.float32)}
    unoptimized = run_onyx(path, feed, extra_args=["--opt-level", "disabled"])[0]
    expected = np.exp(feed["x"]) / np.exp(feed["x"]).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(unoptimized, expected, atol=0.004)  # one step
    np.testing.assert_allclose(run_onyx(path, feed)[0], unoptimized, atol=1e-6)
