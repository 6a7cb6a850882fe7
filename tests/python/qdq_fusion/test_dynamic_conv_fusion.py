"""Dynamically quantized Convs (issue 15): onnxruntime.quantization.quantize_dynamic's Conv
(DynamicQuantizeLinear + ConvInteger + Cast + Mul + Add) runs in Onyx as one com.onyx
DynamicQuantizeConv, with a following Relu or Clip fused too.

Each small net (1x1, 3x3 pad 1, depthwise, stride 2; per-tensor int8 or uint8 weights, as
quantize_dynamic writes them for ConvInteger) is quantized by ONNX Runtime's own tool. The fused node computes
what the unfused graph computes, in the same float operations, so Onyx's outputs must equal
ONNX Runtime 1.31.1's exactly (the integer convolution is exact, DynamicQuantizeLinear's rules
and the float Mul and Add are the same), and equal Onyx's own unfused run bit for bit."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model
import qdq_models as qm

# name: (input channels, output channels, kernel, stride, pad, group, activation)
NETS = {
    "pointwise": (8, 16, 1, 1, 0, 1, "Relu"),
    "3x3_pad1": (6, 10, 3, 1, 1, 1, "Clip"),
    "depthwise": (12, 12, 3, 1, 1, 12, "Clip"),
    "stride2": (5, 7, 3, 2, 1, 1, None),
    "stride2_depthwise": (8, 8, 3, 2, 1, 8, "Relu"),
}


def conv_net(name, c, m, k, stride, pad, group, act):
    """Two Convs with bias (the second reads the first's activation), float; quantize_dynamic
    gives each its own DynamicQuantizeLinear."""
    rng = np.random.default_rng(sorted(NETS).index(name))
    nodes, inits = [], []
    x = "x"
    for i, (cin, cout) in enumerate([(c, m), (m, m)]):
        g = group
        w = rng.standard_normal((cout, cin // g, k, k)).astype(np.float32) * 0.3
        b = rng.standard_normal(cout).astype(np.float32) * 0.1
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        y = f"conv{i}"
        nodes.append(helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [y], kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[pad] * 4, group=g))
        if act == "Relu":
            nodes.append(helper.make_node("Relu", [y], [y + "_act"]))
            y += "_act"
        elif act == "Clip":
            if not any(t.name == "lo" for t in inits):
                inits += [numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
                          numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
            nodes.append(helper.make_node("Clip", [y, "lo", "hi"], [y + "_act"]))
            y += "_act"
        x = y
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 13, 13])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def quantized(name, weight_type):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    float_path = save_model(conv_net(name, *NETS[name]), f"{name}_fp32.onnx")
    path = float_path.replace("_fp32.onnx", f"_dyn_{weight_type}.onnx")
    quantize_dynamic(float_path, path, weight_type=getattr(QuantType, weight_type), op_types_to_quantize=["Conv"])
    model = onnx.load(path)
    assert any(n.op_type == "ConvInteger" for n in model.graph.node), "quantize_dynamic wrote no ConvInteger"
    return path


@pytest.mark.parametrize("weight_type", ["QInt8", "QUInt8"])
@pytest.mark.parametrize("name", sorted(NETS))
def test_fused_equals_ort_and_unfused(name, weight_type):
    path = quantized(name, weight_type)
    ops = qm.op_counts(qm.onyx_optimize(path))
    assert ops.get("com.onyx.DynamicQuantizeConv") == 2, ops
    assert "ConvInteger" not in ops and "Cast" not in ops and "DynamicQuantizeLinear" not in ops, ops
    assert "Relu" not in ops and "Clip" not in ops, ops
    rng = np.random.default_rng(7)
    for scale in (1.0, 40.0):
        feed = {"x": (rng.standard_normal((1, NETS[name][0], 13, 13)) * scale).astype(np.float32)}
        expected = run_ort(path, feed)[0]
        fused = run_onyx(path, feed)[0]
        unfused = run_onyx(path, feed, extra_args=["--config",
                                                   "optimization.disable_specified_optimizers=QdqDynamicConvFusion"])[0]
        assert fused.shape == expected.shape and fused.dtype == np.float32
        assert np.array_equal(fused.view(np.uint32), unfused.view(np.uint32)), "fused differs from unfused"
        differ = np.count_nonzero(fused != expected)
        assert differ == 0, f"{differ} of {fused.size} outputs differ from ONNX Runtime's " \
                            f"(max {np.max(np.abs(fused - expected))})"
