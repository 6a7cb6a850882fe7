"""DynamicQuantizeConv range links (issue 15): a com.onyx.DynamicQuantizeConv whose output only
other DynamicQuantizeConvs read (as their X) gets a second output, its output's range
[min(0, Y), max(0, Y)] taken while Y is written, and they read it as X_range instead of a pass
over X. An inverted-residual block (1x1 expand + Clip, 3x3 depthwise + Clip, 1x1 project, then
a residual Add) quantized by quantize_dynamic: expand -> depthwise -> project are linked, the
project conv (read by the Add) and the first conv's input are not; outputs equal ONNX Runtime
1.31.1's and Onyx's unfused graph bit for bit at 1 and 2 threads, also on the paths without
AVX-512 VNNI (ONYX_LINALG_ISA=avx2: int32 convolution then the float stage). A bad X_range is
refused with the node's error."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model
import qdq_models as qm

C, E, H = 16, 48, 14


@pytest.fixture(scope="module")
def quantized():
    from onnxruntime.quantization import QuantType, quantize_dynamic
    float_path = save_model(qm.inverted_residual_block(C, E, H), "range_block_fp32.onnx")
    path = float_path.replace("_fp32.onnx", "_dyn.onnx")
    quantize_dynamic(float_path, path, weight_type=QuantType.QInt8, op_types_to_quantize=["Conv"])
    return path


def test_linked_where_only_dynamic_convs_read(quantized):
    model = qm.onyx_optimize(quantized)
    convs = [n for n in model.graph.node if n.op_type == "DynamicQuantizeConv"]
    assert len(convs) == 3, qm.op_counts(model)
    # (expand and depthwise, cheap to recompute, also hand on their codes: test_dynamic_conv_code_link.py)
    with_range_out = [n for n in convs if len(n.output) >= 2 and n.output[1]]
    with_range_in = [n for n in convs if len(n.input) >= 6 and n.input[5]]  # (the project conv also takes the Add: Z)
    assert len(with_range_out) == 2 and len(with_range_in) == 2, [(list(n.input), list(n.output)) for n in convs]
    produced = {n.output[1] for n in with_range_out}
    assert {n.input[5] for n in with_range_in} == produced


@pytest.mark.parametrize("isa", ["auto", "avx2"])
def test_linked_equals_ort_and_unfused(quantized, isa, monkeypatch):
    if isa != "auto":
        monkeypatch.setenv("ONYX_LINALG_ISA", isa)
    rng = np.random.default_rng(4)
    for scale in (1.0, 30.0):
        feed = {"x": (rng.standard_normal((1, C, H, H)) * scale).astype(np.float32)}
        expected = run_ort(quantized, feed)[0]
        unfused = run_onyx(quantized, feed, extra_args=[
            "--config", "optimization.disable_specified_optimizers=QdqDynamicConvFusion"])[0]
        for threads in (1, 2):
            fused = run_onyx(quantized, feed, threads=threads)[0]
            assert np.array_equal(fused.view(np.uint32), unfused.view(np.uint32)), f"{threads} threads, {isa}"
            assert np.array_equal(fused, expected), f"differs from ORT: {threads} threads, {isa}, " \
                                                    f"max {np.max(np.abs(fused - expected))}"


def explicit_range_model(range_values, dtype=np.float32):
    """One com.onyx.DynamicQuantizeConv given X_range as a constant."""
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array(rng.integers(-20, 20, (4, 3, 1, 1)).astype(np.int8), "w"),
             numpy_helper.from_array(np.array(0.01, np.float32), "ws"),
             numpy_helper.from_array(np.array(range_values, dtype), "r")]
    node = helper.make_node("DynamicQuantizeConv", ["x", "w", "ws", "", "", "r"], ["y"], domain="com.onyx",
                            kernel_shape=[1, 1])
    graph = helper.make_graph([node], "explicit", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.onyx", 1)])


@pytest.mark.parametrize("values,dtype,message", [
    ([0.5, 2.0], np.float32, "X_range must be [min(0, X), max(0, X)]"),
    ([-1.0, 2.0, 3.0], np.float32, "X_range must be float with 2 values"),
    ([-1.0, 2.0], np.float64, "X_range must be float with 2 values"),
])
def test_bad_x_range_is_refused(values, dtype, message):
    path = save_model(explicit_range_model(values, dtype), f"explicit_range_{len(values)}_{np.dtype(dtype).name}.onnx")
    feed = {"x": np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32)}
    with pytest.raises(RuntimeError, match=r"DynamicQuantizeConv.*" + message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[")):
        run_onyx(path, feed)


def test_given_x_range_is_used():
    """The range given replaces the pass over X: a wider one than X's gives a coarser scale, so
    the output differs from the node run without it (and matches the formula with that range)."""
    x = np.random.default_rng(1).standard_normal((1, 3, 5, 5)).astype(np.float32)
    lo, hi = -8.0, 8.0
    path = save_model(explicit_range_model([lo, hi]), "explicit_range_used.onnx")
    got = run_onyx(path, {"x": x})[0]
    scale = np.float32((np.float32(hi) - np.float32(lo)) / np.float32(255))
    zp = np.float32(np.rint(np.clip(np.float32(0) - np.float32(lo) / scale, 0, 255)))
    q = np.clip(np.rint(x / scale) + zp, 0, 255).astype(np.int32) - int(zp)
    w = np.random.default_rng(2).integers(-20, 20, (4, 3, 1, 1)).astype(np.int32)
    acc = np.einsum("oc,nchw->nohw", w[:, :, 0, 0], q)
    expected = acc.astype(np.float32) * np.float32(scale * np.float32(0.01))
    assert np.array_equal(got, expected)
