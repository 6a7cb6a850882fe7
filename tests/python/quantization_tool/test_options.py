"""Every argument and extra_options key onyx.quantization honours changes the model it writes
(each test checks the change against what the option means, computed here from the model's
weights or the calibration data with numpy), and the ones it does not honour raise an error
naming them."""
import json
import os
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import qt_models as qm
from onyx_harness import run_ort, save_model
import onyx.quantization as oq
from onyx.quantization import CalibrationMethod, QuantFormat, QuantType
from onyx.quantization.quantize import dynamic_quantize, static_quantize

QDQ, QOP = QuantFormat.QDQ, QuantFormat.QOperator


def quantize(model=None, feeds=None, **kw):
    model = model or qm.conv_net()
    feeds = feeds if feeds is not None else qm.feeds_for(model, 6)
    return static_quantize(model, qm.ListReader(feeds), **kw).model


def ops(model):
    return [n.op_type for n in model.graph.node]


def consumers(model, tensor, op_type=None):
    return [n for n in model.graph.node if tensor in n.input and (op_type is None or n.op_type == op_type)]


def stacked(feeds, name="x"):
    return np.stack([f[name] for f in feeds])


# --- which nodes -------------------------------------------------------------------------------

def test_op_types_to_quantize():
    m = quantize(quant_format=QOP, op_types_to_quantize=["Conv"])
    assert ops(m).count("QLinearConv") == 3
    assert "QLinearAdd" not in ops(m) and "Add" in ops(m) and "Gemm" in ops(m) and "QGemm" not in ops(m)


def test_nodes_to_exclude_and_nodes_to_quantize():
    m = quantize(quant_format=QOP, nodes_to_exclude=["conv2"])
    assert ops(m).count("QLinearConv") == 2 and [n.name for n in qm.nodes_of(m, "Conv")] == ["conv2"]
    m = quantize(quant_format=QOP, nodes_to_quantize=["conv1"])
    assert ops(m).count("QLinearConv") == 1 and ops(m).count("Conv") == 2 and "QGemm" not in ops(m)


def test_force_quantize_no_input_check():
    w = numpy_helper.from_array(np.random.default_rng(0).normal(size=(4, 3, 1, 1)).astype(np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[2, 2]),
         helper.make_node("Conv", ["p", "W"], ["y"], name="conv")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 7, 7])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    plain = quantize(model, quant_format=QOP)
    assert consumers(plain, "x", "MaxPool")  # MaxPool reads the float input
    forced = quantize(model, quant_format=QOP, extra_options={"ForceQuantizeNoInputCheck": True})
    pool = qm.nodes_of(forced, "MaxPool")[0]
    assert pool.input[0] != "x" and consumers(forced, "x", "QuantizeLinear")


def _act_matmul_model():
    graph = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["xt"], name="t", perm=[1, 0]),
         helper.make_node("MatMul", ["x", "xt"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_matmul_const_b_only():
    model = _act_matmul_model()
    feeds = qm.feeds_for(model, 4)
    assert "QLinearMatMul" in ops(quantize(model, feeds, quant_format=QOP))
    m = quantize(model, feeds, quant_format=QOP, extra_options={"MatMulConstBOnly": True})
    assert "QLinearMatMul" not in ops(m) and "MatMul" in ops(m)


# --- weights -----------------------------------------------------------------------------------

def test_per_channel_scales_follow_each_output_channel():
    model = qm.conv_net()
    w1 = qm.initializer(model, "W1")
    m = quantize(model, per_channel=True)
    scale = qm.initializer(m, "W1_scale")
    expected = np.abs(w1).reshape(16, -1).max(axis=1) / 127.0  # symmetric int8: [-127, 127]
    np.testing.assert_allclose(scale, expected, rtol=1e-6)
    assert qm.initializer(quantize(model), "W1_scale").shape == ()


def test_reduce_range_uses_7_bits():
    wide = qm.initializer(quantize(), "W1_quantized")
    narrow = qm.initializer(quantize(reduce_range=True), "W1_quantized")
    assert np.abs(wide.astype(int)).max() == 127
    assert np.abs(narrow.astype(int)).max() == 64


def test_activation_and_weight_types():
    m = quantize(activation_type=QuantType.QUInt8, weight_type=QuantType.QUInt8)
    assert qm.initializer(m, "x_zero_point").dtype == np.uint8
    w, zp = qm.initializer(m, "W1_quantized"), qm.initializer(m, "W1_zero_point")
    assert w.dtype == np.uint8 and w.min() == 0 and w.max() == 255  # asymmetric by default for QUInt8
    w1 = qm.initializer(qm.conv_net(), "W1")
    assert int(zp) == int(np.round(-w1.min() / ((w1.max() - w1.min()) / 255)))


def test_activation_symmetric():
    assert int(qm.initializer(quantize(), "r1_zero_point")) == -128  # after Relu: [0, max]
    m = quantize(extra_options={"ActivationSymmetric": True, "QDQKeepRemovableActivations": True})
    assert int(qm.initializer(m, "r1_zero_point")) == 0 and int(qm.initializer(m, "x_zero_point")) == 0


def test_weight_symmetric_off():
    m = quantize(extra_options={"WeightSymmetric": False})
    zps = []
    for name in ("W1", "W2", "W3"):
        w = qm.initializer(qm.conv_net(), name)
        expected = np.round(-128 - w.min() / ((w.max() - w.min()) / 255))
        zps.append(int(qm.initializer(m, name + "_zero_point")))
        assert zps[-1] == int(expected)
        assert int(qm.initializer(quantize(), name + "_zero_point")) == 0
    assert any(zps)


def test_add_qdq_pair_to_weight():
    m = quantize(extra_options={"AddQDQPairToWeight": True})
    assert consumers(m, "W1", "QuantizeLinear")
    assert "W1_quantized" not in {i.name for i in m.graph.initializer}
    assert not consumers(quantize(), "W1")


def test_quantize_bias_off_keeps_float_bias():
    m = quantize(extra_options={"QuantizeBias": False})
    assert "B1" in qm.nodes_of(m, "Conv")[0].input
    assert "B1" not in qm.nodes_of(quantize(), "Conv")[0].input
    assert qm.initializer(quantize(), "B1_quantized").dtype == np.int32


def test_bias_that_does_not_fit_int32_raises():
    model = qm.conv_net()
    for i in model.graph.initializer:
        if i.name == "B1":
            i.CopyFrom(numpy_helper.from_array(np.full(16, 3e8, np.float32), "B1"))
    with pytest.raises(ValueError, match="does not fit int32"):
        quantize(model)
    assert "B1" in qm.nodes_of(quantize(model, extra_options={"QuantizeBias": False}), "Conv")[0].input


def test_per_channel_axis_option():
    model = qm.mlp_net()
    feeds = qm.feeds_for(model, 4, batch=2)
    assert qm.initializer(quantize(model, feeds, per_channel=True), "Wa_scale").shape == (24,)
    m = quantize(model, feeds, per_channel=True, extra_options={"QDQOpTypePerChannelSupportToAxis": {"MatMul": 0}})
    assert qm.initializer(m, "Wa_scale").shape == (32,)
    with pytest.raises(ValueError, match="output-channel axis"):  # conv1's bias has one entry per output channel
        quantize(per_channel=True, extra_options={"QDQOpTypePerChannelSupportToAxis": {"Conv": 1}})
    m = quantize(per_channel=True, extra_options={"QDQOpTypePerChannelSupportToAxis": {"Conv": 1},
                                                  "QuantizeBias": False})
    assert qm.initializer(m, "W1_scale").shape == (3,)


# --- QDQ placement -----------------------------------------------------------------------------

def test_op_types_to_exclude_output_quantization():
    assert [n.op_type for n in quantize().graph.node if "y" in n.output] == ["DequantizeLinear"]
    m = quantize(extra_options={"OpTypesToExcludeOutputQuantization": ["Gemm"]})
    assert [n.op_type for n in m.graph.node if "y" in n.output] == ["Gemm"]


def test_dedicated_qdq_pair():
    # p2 (MaxPool's output) feeds conv3 and add3
    assert len(consumers(quantize(), "p2_prequant", "QuantizeLinear")) == 1
    m = quantize(extra_options={"DedicatedQDQPair": True})
    assert len(consumers(m, "p2", "QuantizeLinear")) == 2


def test_keep_removable_activations():
    assert "Relu" not in ops(quantize())
    assert ops(quantize(extra_options={"QDQKeepRemovableActivations": True})).count("Relu") == 2


# --- calibration -------------------------------------------------------------------------------

def _x_range(m):
    scale, zp = float(qm.initializer(m, "x_scale")), int(qm.initializer(m, "x_zero_point"))
    return scale * (-128 - zp), scale * (127 - zp)


def test_minmax_range_is_the_data_range():
    feeds = qm.feeds_for(qm.conv_net(), 6)
    x = stacked(feeds)
    scale = float(qm.initializer(quantize(feeds=feeds), "x_scale"))
    assert scale == pytest.approx((x.max() - x.min()) / 255, rel=1e-6)


def test_minimum_real_range():
    scale = float(qm.initializer(quantize(extra_options={"MinimumRealRange": 1000.0}), "x_scale"))
    assert scale == pytest.approx(1000.0 / 255, rel=1e-3)


def test_calib_tensor_range_symmetric():
    feeds = qm.feeds_for(qm.conv_net(), 6)
    absmax = np.abs(stacked(feeds)).max()
    m = quantize(feeds=feeds, extra_options={"CalibTensorRangeSymmetric": True})
    assert float(qm.initializer(m, "x_scale")) == pytest.approx(2 * absmax / 255, rel=1e-6)
    assert int(qm.initializer(m, "x_zero_point")) == 0


def test_calib_moving_average():
    feeds = qm.feeds_for(qm.conv_net(), 6)
    lo, hi = feeds[0]["x"].min(), feeds[0]["x"].max()
    for f in feeds[1:]:
        lo, hi = lo + 0.3 * (f["x"].min() - lo), hi + 0.3 * (f["x"].max() - hi)
    m = quantize(feeds=feeds, extra_options={"CalibMovingAverage": True, "CalibMovingAverageConstant": 0.3})
    assert float(qm.initializer(m, "x_scale")) == pytest.approx((hi - lo) / 255, rel=1e-5)


def _outlier_feeds(count=6):
    feeds = qm.feeds_for(qm.conv_net(), count)
    feeds[2]["x"][0, 0, 0, 0] = 60.0  # one value far outside the others
    return feeds


def test_percentile_cuts_the_outlier():
    feeds = _outlier_feeds()
    x = stacked(feeds).ravel()  # 4608 values: 99.9 % cuts 0.05 % (2.3 values) on each side
    _, hi_all = _x_range(quantize(feeds=feeds, calibrate_method=CalibrationMethod.Percentile))
    assert hi_all > 50  # the default 99.999 % keeps it: 0.0005 % of 4608 values is less than one
    bin_width = 2 * 60.0 / 2048
    lo, hi = _x_range(quantize(feeds=feeds, calibrate_method=CalibrationMethod.Percentile,
                               extra_options={"CalibPercentile": 99.9}))
    assert hi < 10  # the outlier is gone
    assert hi == pytest.approx(np.percentile(x, 99.95), abs=2 * bin_width)
    assert lo == pytest.approx(np.percentile(x, 0.05), abs=2 * bin_width)
    _, hi99 = _x_range(quantize(feeds=feeds, calibrate_method=CalibrationMethod.Percentile,
                                extra_options={"CalibPercentile": 99.0}))
    assert hi99 < hi and hi99 == pytest.approx(np.percentile(x, 99.5), abs=2 * bin_width)
    _, hi_coarse = _x_range(quantize(feeds=feeds, calibrate_method=CalibrationMethod.Percentile,
                                     extra_options={"CalibPercentile": 99.0, "CalibNumBins": 64}))
    assert hi_coarse != pytest.approx(hi99, abs=1e-3)


def test_entropy_with_enough_bins_clips_the_outlier():
    feeds = _outlier_feeds()
    _, hi_default = _x_range(quantize(feeds=feeds, calibrate_method=CalibrationMethod.Entropy))
    assert hi_default > 50  # ONNX Runtime's defaults: 128 bins, 128 levels: no clipping
    _, hi = _x_range(quantize(feeds=feeds, calibrate_method=CalibrationMethod.Entropy,
                              extra_options={"CalibNumBins": 2048}))
    assert 2 < hi < 20
    _, hi_fewer = _x_range(quantize(feeds=feeds, calibrate_method=CalibrationMethod.Entropy,
                                    extra_options={"CalibNumBins": 2048, "CalibNumQuantizedBins": 32}))
    assert hi_fewer != pytest.approx(hi, rel=1e-3)


def test_calibration_cache(tmp_path):
    cache = str(tmp_path / "ranges.json")
    model = qm.conv_net()
    first = static_quantize(model, qm.ListReader(qm.feeds_for(model, 4)), calibration_cache_path=cache).model
    with open(cache) as f:
        assert "x" in json.load(f)
    second = static_quantize(model, None, calibration_cache_path=cache).model  # no data: the cache's ranges
    assert first.SerializeToString() == second.SerializeToString()


def test_use_external_data_format(tmp_path):
    model = qm.conv_net()
    out = str(tmp_path / "q.onnx")
    oq.quantize_static(model, out, qm.ListReader(qm.feeds_for(model, 2)), use_external_data_format=True)
    assert os.path.exists(out + ".data")
    feed = qm.feeds_for(model, 1)[0]
    assert run_ort(out, feed)[0].shape == (1, 10)


def test_calibration_data_reader_subclass(tmp_path):
    class Reader(oq.CalibrationDataReader):
        def __init__(self, feeds):
            self.feeds = iter(feeds)

        def get_next(self):
            return next(self.feeds, None)

    model = qm.conv_net()
    out = str(tmp_path / "q.onnx")
    oq.quantize_static(model, out, Reader(qm.feeds_for(model, 2)))
    assert "QuantizeLinear" in ops(onnx.load(out))


# --- quant_pre_process -------------------------------------------------------------------------

def test_quant_pre_process(tmp_path):
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for a, n in [
        (rng.normal(size=(4, 3, 3, 3)), "W"), (rng.uniform(0.5, 2, 4), "g"), (rng.normal(size=4), "b"),
        (rng.normal(size=4), "mean"), (rng.uniform(0.5, 2, 4), "var")]]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["c"], name="conv"),
         helper.make_node("BatchNormalization", ["c", "g", "b", "mean", "var"], ["bn"], name="bn"),
         helper.make_node("Relu", ["bn"], ["y"], name="relu")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    src, out = save_model(model, "bn.onnx"), str(tmp_path / "pre.onnx")
    oq.quant_pre_process(src, out)
    pre = onnx.load(out)
    assert "BatchNormalization" not in ops(pre)
    assert {vi.name for vi in pre.graph.value_info} | {o.name for o in pre.graph.output} >= {"y"}
    assert pre.graph.output[0].type.tensor_type.shape.dim[1].dim_value == 4  # shapes inferred
    feed = {"x": rng.normal(size=(1, 3, 8, 8)).astype(np.float32)}
    np.testing.assert_allclose(run_ort(out, feed)[0], run_ort(src, feed)[0], rtol=1e-4, atol=1e-5)
    oq.quant_pre_process(src, out, skip_optimization=True)
    assert "BatchNormalization" in ops(onnx.load(out))
    with pytest.raises(ValueError, match="auto_merge"):
        oq.quant_pre_process(src, out, auto_merge=True)


# --- what is refused ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    ({"activation_type": QuantType.QInt16}, "activation_type=QuantType.QInt16"),
    ({"weight_type": QuantType.QFLOAT8E4M3FN}, "weight_type=QuantType.QFLOAT8E4M3FN"),
    ({"calibrate_method": CalibrationMethod.Distribution}, "Distribution"),
    ({"extra_options": {"EnableSubgraph": True}}, "EnableSubgraph"),
    ({"extra_options": {"SmoothQuant": True}}, "SmoothQuant"),
    ({"calibration_providers": ["CUDAExecutionProvider"]}, "calibration_providers"),
    ({"op_types_to_quantize": ["LSTM"]}, "LSTM"),
    ({"quant_format": QOP, "extra_options": {"DedicatedQDQPair": True}}, "DedicatedQDQPair"),
    ({"quant_format": QOP, "extra_options": {"QDQOpTypePerChannelSupportToAxis": {"Conv": 1}}},
     "QDQOpTypePerChannelSupportToAxis"),
    ({"extra_options": {"CalibMovingAverage": True}, "calibrate_method": CalibrationMethod.Entropy},
     "CalibMovingAverage"),
])
def test_unsupported_options_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        quantize(**kwargs)


def test_dynamic_refusals():
    with pytest.raises(ValueError, match="ActivationSymmetric"):
        dynamic_quantize(qm.mlp_net(), extra_options={"ActivationSymmetric": True})
    with pytest.raises(ValueError, match="Gemm"):
        dynamic_quantize(qm.mlp_net(), op_types_to_quantize=["Gemm"])
    with pytest.raises(ValueError, match="MatMulConstBOnly=False"):
        dynamic_quantize(qm.mlp_net(), extra_options={"MatMulConstBOnly": False})
    with pytest.raises(ValueError, match="AddQDQPairToWeight"):  # a static-only key
        dynamic_quantize(qm.mlp_net(), extra_options={"AddQDQPairToWeight": True})


def test_dynamic_weight_symmetric_and_axis_options():
    model = qm.mlp_net()
    sym = dynamic_quantize(model, per_channel=True).model
    assert not np.any(qm.initializer(sym, "Wa_zero_point")) and qm.initializer(sym, "Wa_scale").shape == (24,)
    asym = dynamic_quantize(model, per_channel=True, extra_options={"WeightSymmetric": False}).model
    assert np.any(qm.initializer(asym, "Wa_zero_point"))
    with pytest.raises(ValueError, match="QDQOpTypePerChannelSupportToAxis"):  # QDQ's key
        dynamic_quantize(model, per_channel=True, extra_options={"QDQOpTypePerChannelSupportToAxis": {"MatMul": 0}})


def test_per_channel_needs_opset_13():
    model = qm.mlp_net()
    model.opset_import[0].version = 12
    with pytest.raises(ValueError, match="per_channel=True needs ai.onnx opset 13"):
        quantize(model, qm.feeds_for(model, 2, batch=2), per_channel=True)


def test_without_onnx_the_import_works_and_the_call_names_the_install(tmp_path):
    """In a fresh interpreter where `import onnx` fails: onyx.quantization imports, quantize_static
    raises an ImportError that names `pip install onnx`."""
    import subprocess
    code = ("import sys; sys.modules['onnx'] = None\n"
            "import onyx.quantization as q\n"
            "try:\n    q.quantize_static('m.onnx', 'o.onnx', None)\n"
            "except ImportError as e:\n    print('IMPORT-ERROR', e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.returncode == 0, proc.stderr
    assert "IMPORT-ERROR" in proc.stdout and "pip install onnx" in proc.stdout


def test_constant_node_weights_are_quantized():
    """Weights exported as Constant nodes (paddle2onnx does) are quantized like initializers."""
    model = qm.conv_net()
    w1 = [i for i in model.graph.initializer if i.name == "W1"][0]
    model.graph.node.insert(0, helper.make_node("Constant", [], ["W1"], name="w1_const", value=w1))
    model.graph.initializer.remove(w1)
    m = quantize(model, quant_format=QOP)
    assert ops(m).count("QLinearConv") == 3 and "Constant" not in ops(m)
    np.testing.assert_array_equal(qm.initializer(m, "W1_quantized"), qm.initializer(quantize(quant_format=QOP),
                                                                                    "W1_quantized"))


def test_quantize_with_configs_matches_the_functions(tmp_path):
    model = qm.conv_net()
    feeds = qm.feeds_for(model, 3)
    a, b = str(tmp_path / "a.onnx"), str(tmp_path / "b.onnx")
    oq.quantize(model, a, oq.StaticQuantConfig(qm.ListReader(feeds), quant_format=QOP, per_channel=True))
    oq.quantize_static(model, b, qm.ListReader(feeds), quant_format=QOP, per_channel=True)
    assert onnx.load(a).SerializeToString() == onnx.load(b).SerializeToString()
    assert "QLinearConv" in ops(onnx.load(a))
    oq.quantize(model, a, oq.DynamicQuantConfig(op_types_to_quantize=["Conv"]))
    assert "ConvInteger" in ops(onnx.load(a))
    with pytest.raises(TypeError, match="quant_config"):
        oq.quantize(model, a, {"per_channel": True})


def test_gather_follows_op_types_and_weight_options():
    model = qm.embed_net()
    table = qm.initializer(model, "E")
    m = dynamic_quantize(model, weight_type=QuantType.QUInt8).model
    q, scale, zp = (qm.initializer(m, n) for n in ("E_quantized", "E_scale", "E_zero_point"))
    assert q.dtype == np.uint8 and float(scale) == pytest.approx((table.max() - table.min()) / 255, rel=1e-6)
    m = dynamic_quantize(model, op_types_to_quantize=["MatMul"]).model
    assert [n.input[0] for n in qm.nodes_of(m, "Gather")] == ["E"]
    m = static_quantize(model, qm.ListReader(qm.embed_feeds(2)), nodes_to_exclude=["embed"]).model
    assert [n.input[0] for n in qm.nodes_of(m, "Gather")] == ["E"]
