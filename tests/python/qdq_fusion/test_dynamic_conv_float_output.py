"""com.onyx DynamicQuantizeConv's float output written by the int8 GEMM itself (q8_gemm.h's
Q8Output::kFloat: scale, bias and Relu / Clip from the registers, no int32 pass) on the shapes
test_dynamic_conv_fusion.py leaves out: grouped (not depthwise), no bias (no Add at all), a
batch of 2, 1-D, a 7x7 map whose few pixel panels make 2 threads split the
output channels, a 14x14 map ending in a 16-pixel panel; at 1 and 2 threads. Each Conv is
quantized by onnxruntime.quantization.quantize_dynamic; the fused node must equal ONNX Runtime
1.31.1's outputs exactly and Onyx's unfused graph bit for bit."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model
import qdq_models as qm

# name: (batch, input channels, output channels, spatial shape, kernel, stride, pad, group, bias, activation)
CASES = {
    "grouped": (1, 8, 12, (9, 9), 3, 1, 1, 2, True, "Relu"),
    "pointwise_no_bias_7x7": (1, 16, 40, (7, 7), 1, 1, 0, 1, False, None),
    "batch2_3x3": (2, 4, 24, (10, 10), 3, 1, 1, 1, True, None),
    "conv1d": (1, 6, 9, (37,), 3, 2, 1, 1, True, "Clip"),
    "pointwise_14x14": (1, 64, 96, (14, 14), 1, 1, 0, 1, True, "Relu"),
}


def conv_model(name):
    n, c, m, spatial, k, stride, pad, group, bias, act = CASES[name]
    rng = np.random.default_rng(sorted(CASES).index(name))
    rank = len(spatial)
    inits = [numpy_helper.from_array(rng.standard_normal((m, c // group) + (k,) * rank).astype(np.float32) * 0.3, "w")]
    inputs = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32) * 0.1, "b"))
        inputs.append("b")
    nodes = [helper.make_node("Conv", inputs, ["conv"], kernel_shape=[k] * rank, strides=[stride] * rank,
                              pads=[pad] * (2 * rank), group=group)]
    y = "conv"
    if act == "Relu":
        nodes.append(helper.make_node("Relu", [y], ["act"]))
        y = "act"
    elif act == "Clip":
        inits += [numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
                  numpy_helper.from_array(np.array(2.0, np.float32), "hi")]
        nodes.append(helper.make_node("Clip", [y, "lo", "hi"], ["act"]))
        y = "act"
    nodes.append(helper.make_node("Identity", [y], ["y"]))
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, *spatial])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("name", sorted(CASES))
def test_float_output_equals_ort_and_unfused(name):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    float_path = save_model(conv_model(name), f"{name}_fp32.onnx")
    path = float_path.replace("_fp32.onnx", "_dyn.onnx")
    quantize_dynamic(float_path, path, weight_type=QuantType.QInt8, op_types_to_quantize=["Conv"])
    ops = qm.op_counts(qm.onyx_optimize(path))
    assert ops.get("com.onyx.DynamicQuantizeConv") == 1, ops
    n, c, _, spatial = CASES[name][:4]
    rng = np.random.default_rng(3)
    feed = {"x": (rng.standard_normal((n, c, *spatial)) * 4.0).astype(np.float32)}
    expected = run_ort(path, feed)[0]
    unfused = run_onyx(path, feed, extra_args=["--config",
                                               "optimization.disable_specified_optimizers=QdqDynamicConvFusion"])[0]
    for threads in (1, 2):
        fused = run_onyx(path, feed, threads=threads)[0]
        assert fused.shape == expected.shape and fused.dtype == np.float32
        assert np.array_equal(fused.view(np.uint32), unfused.view(np.uint32)), \
            f"fused differs from unfused ({threads} threads)"
        differ = np.count_nonzero(fused != expected)
        assert differ == 0, f"{differ} of {fused.size} outputs differ from ONNX Runtime's ({threads} threads, " \
                            f"max {np.max(np.abs(fused - expected))})"
