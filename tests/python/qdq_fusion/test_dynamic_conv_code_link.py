"""DynamicQuantizeConv code links (issue 15): a DynamicQuantizeConv read only by other
DynamicQuantizeConvs whose output is cheap to recompute (a 1x1 conv over few channels, or a
depthwise one) hands them DynamicQuantizeLinear's codes of its output (output 2, Y_codes, uint8)
instead of the float output, which it drops; they read the codes as X (with X_range) and skip
quantizing it. Past 1 MB a pointwise producer computes its output twice in pieces that stay in
cache (the range, then the codes), so the float output never goes to memory; others compute it
once into a buffer and quantize it there. Outputs equal ONNX
Runtime 1.31.1's and Onyx's unfused graph bit for bit; the codes equal DynamicQuantizeLinear's
formula over the float output."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model
import qdq_models as qm

C, E = 16, 48


# 14x14: the producers' outputs are computed whole; 80x80 (48 x 6400 floats, 1.2 MB): the expand in pieces.
@pytest.fixture(scope="module", params=[14, 80])
def quantized(request):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    h = request.param
    float_path = save_model(qm.inverted_residual_block(C, E, h), f"code_block_{h}_fp32.onnx")
    path = float_path.replace("_fp32.onnx", "_dyn.onnx")
    quantize_dynamic(float_path, path, weight_type=QuantType.QInt8, op_types_to_quantize=["Conv"])
    return path, h


def test_codes_linked_where_cheap(quantized):
    model = qm.onyx_optimize(quantized[0])
    convs = [n for n in model.graph.node if n.op_type == "DynamicQuantizeConv"]
    assert len(convs) == 3, qm.op_counts(model)
    producers = [n for n in convs if len(n.output) == 3]
    assert len(producers) == 2, [(list(n.input), list(n.output)) for n in convs]
    for p in producers:
        assert p.output[0] == "" and p.output[1] and p.output[2]
        readers = [n for n in convs if p.output[2] in n.input]
        assert len(readers) == 1 and readers[0].input[0] == p.output[2] and readers[0].input[5] == p.output[1]


@pytest.mark.parametrize("isa", ["auto", "avx2"])
def test_code_linked_equals_ort_and_unfused(quantized, isa, monkeypatch):
    path, h = quantized
    if isa != "auto":
        monkeypatch.setenv("ONYX_LINALG_ISA", isa)
    rng = np.random.default_rng(4)
    for scale in (1.0, 30.0):
        feed = {"x": (rng.standard_normal((1, C, h, h)) * scale).astype(np.float32)}
        expected = run_ort(path, feed)[0]
        unfused = run_onyx(path, feed, extra_args=[
            "--config", "optimization.disable_specified_optimizers=QdqDynamicConvFusion"])[0]
        for threads in (1, 2):
            fused = run_onyx(path, feed, threads=threads)[0]
            assert np.array_equal(fused.view(np.uint32), unfused.view(np.uint32)), f"{threads} threads, {isa}"
            assert np.array_equal(fused, expected), f"differs from ORT: {threads} threads, {isa}, " \
                                                    f"max {np.max(np.abs(fused - expected))}"


def dynamic_quantize(y):
    """DynamicQuantizeLinear's formula in float32: the range with 0, scale, zero point, codes."""
    lo, hi = np.float32(min(0.0, float(y.min()))), np.float32(max(0.0, float(y.max())))
    scale = np.float32((hi - lo) / np.float32(255))
    zp = np.float32(np.rint(np.clip(np.float32(0) - lo / scale, 0, 255))) if scale != 0 else np.float32(0)
    return np.clip(np.rint(y / scale) + zp, 0, 255).astype(np.uint8), np.array([lo, hi], np.float32)


def codes_model(kind, h, with_y, batch=1, m=64):
    """One DynamicQuantizeConv (pointwise 24 -> m, or 3x3 depthwise m stride 2) with Y_range
    and Y_codes outputs, and Y too when with_y."""
    rng = np.random.default_rng(5)
    cin = 24 if kind == "pointwise" else m
    if kind == "pointwise":
        w = rng.integers(-127, 128, (m, cin, 1, 1)).astype(np.int8)
        attrs = dict(kernel_shape=[1, 1])
    else:
        w = rng.integers(-127, 128, (m, 1, 3, 3)).astype(np.int8)
        attrs = dict(kernel_shape=[3, 3], group=m, strides=[2, 2], pads=[1, 1, 1, 1])
    inits = [numpy_helper.from_array(w, "w"),
             numpy_helper.from_array((rng.random(m) * 0.01).astype(np.float32), "ws"),
             numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "b")]
    outputs = ["y" if with_y else "", "r", "c"]
    node = helper.make_node("DynamicQuantizeConv", ["x", "w", "ws", "", "b"], outputs, domain="com.onyx",
                            activation="Clip", activation_params=[-3.0, 5.0], **attrs)
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT if n != "c" else TensorProto.UINT8, None)
            for n in outputs if n]
    graph = helper.make_graph([node], "codes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, cin, h, h])],
                              outs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.onyx", 1)])


# Pointwise: 20 whole, 112 (64 x 12544 floats) and two images of 80 in pieces (across the batch).
# Depthwise (always whole): 40, 224 (stride 2) and two images of 160.
@pytest.mark.parametrize("kind,h,batch", [("pointwise", 20, 1), ("pointwise", 112, 1), ("pointwise", 80, 2),
                                          ("depthwise", 40, 1), ("depthwise", 224, 1), ("depthwise", 160, 2)])
@pytest.mark.parametrize("threads", [1, 2])
def test_codes_are_dynamic_quantize_linear_of_y(kind, h, batch, threads):
    x = (np.random.default_rng(3).standard_normal((batch, 24 if kind == "pointwise" else 64, h, h)) * 4).astype(np.float32)
    y, r, c = run_onyx(save_model(codes_model(kind, h, True, batch), f"codes_{kind}_{h}_{batch}_y.onnx"), {"x": x},
                       threads=threads)
    expected_codes, expected_range = dynamic_quantize(y)
    assert np.array_equal(r, expected_range)
    assert np.array_equal(c, expected_codes)
    r2, c2 = run_onyx(save_model(codes_model(kind, h, False, batch), f"codes_{kind}_{h}_{batch}.onnx"), {"x": x},
                      threads=threads)
    assert np.array_equal(r2, expected_range) and np.array_equal(c2, expected_codes)


# A producer's codes are made by the tasks that computed its output channels (ConvToCodesOnce:
# runs of channels, two a thread, the range merged between the two phases; a pointwise conv in
# runs of 8-row panels of W): 3 images of 37 channels at 3 threads give runs that cross the
# images, and the codes must still be DynamicQuantizeLinear's of the whole Y, and the same at
# every thread count.
@pytest.mark.parametrize("kind", ["depthwise", "pointwise"])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_codes_split_across_tasks_and_images(kind, threads):
    x = (np.random.default_rng(8).standard_normal((3, 37 if kind == "depthwise" else 24, 13, 13)) * 3).astype(np.float32)
    y, r, c = run_onyx(save_model(codes_model(kind, 13, True, 3, 37), f"codes_{kind}_odd_y.onnx"), {"x": x},
                       threads=threads)
    expected_codes, expected_range = dynamic_quantize(y)
    path = save_model(codes_model(kind, 13, False, 3, 37), f"codes_{kind}_odd.onnx")
    r2, c2 = run_onyx(path, {"x": x}, threads=threads)
    assert np.array_equal(r2.view(np.uint32), expected_range.view(np.uint32))
    assert np.array_equal(c2, expected_codes)
    r1, c1 = run_onyx(path, {"x": x}, threads=1)
    assert np.array_equal(c2, c1) and np.array_equal(r2.view(np.uint32), r1.view(np.uint32))


def test_uint8_x_needs_x_range():
    node = helper.make_node("DynamicQuantizeConv", ["x", "w", "ws"], ["y"], domain="com.onyx", kernel_shape=[1, 1])
    graph = helper.make_graph([node], "codes_in", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.ones((2, 3, 1, 1), np.int8), "w"),
                               numpy_helper.from_array(np.array(0.5, np.float32), "ws")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.onyx", 1)])
    with pytest.raises(RuntimeError, match=r"DynamicQuantizeConv.*X as uint8 codes needs X_range"):
        run_onyx(save_model(model, "codes_in_no_range.onnx"), {"x": np.ones((1, 3, 4, 4), np.uint8)})
