"""DynamicQuantizeConv with a fused SiLU (issue 15): quantize_dynamic's conv followed by Sigmoid
and Mul(y, Sigmoid(y)) (YOLO's activation) runs as one node with activation "Silu". A pointwise
conv computes it a piece of pixels at a time (the SiLU while the piece is in cache), others over
their whole output. Outputs equal Onyx's unfused graph bit for bit (its Sigmoid and Mul kernels)
at 1 and 2 threads, also without AVX-512 VNNI, and ONNX Runtime's bit for bit: in a quantized
graph Onyx's Sigmoid is ONNX Runtime's logistic (linalg::VecSigmoidAsOnnxRuntime), whose last
bits decide the next layer's dynamic range and codes (docs/quantization.md)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model
import qdq_models as qm

C, H = 32, 64


def silu_model():
    rng = np.random.default_rng(21)
    inits, nodes = [], []

    def conv(name, src, cin, cout, k, group=1):
        w = rng.standard_normal((cout, cin // group, k, k)).astype(np.float32) * 0.2
        b = rng.standard_normal(cout).astype(np.float32) * 0.1
        inits.extend([numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")])
        nodes.append(helper.make_node("Conv", [src, name + "_w", name + "_b"], [name], kernel_shape=[k, k],
                                      pads=[k // 2] * 4, group=group))
        nodes.append(helper.make_node("Sigmoid", [name], [name + "_gate"]))
        nodes.append(helper.make_node("Mul", [name, name + "_gate"], [name + "_act"]))
        return name + "_act"

    y = conv("pw", "x", C, 64, 1)       # 64 x 4096: pieces of 512 pixels
    y = conv("c3", y, 64, 32, 3)        # implicit im2col
    y = conv("dw", y, 32, 32, 3, 32)    # depthwise
    graph = helper.make_graph(nodes, "silu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, H])],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.fixture(scope="module")
def quantized():
    from onnxruntime.quantization import QuantType, quantize_dynamic
    float_path = save_model(silu_model(), "silu_fp32.onnx")
    path = float_path.replace("_fp32.onnx", "_dyn.onnx")
    quantize_dynamic(float_path, path, weight_type=QuantType.QInt8, op_types_to_quantize=["Conv"])
    return path


def test_silu_joins_the_conv(quantized):
    model = qm.onyx_optimize(quantized)
    ops = qm.op_counts(model)
    assert ops.get("com.onyx.DynamicQuantizeConv") == 3 and "Sigmoid" not in ops and "Mul" not in ops, ops
    for n in model.graph.node:
        acts = [a.s for a in n.attribute if a.name == "activation"]
        assert acts == [b"Silu"], (n.name, acts)


@pytest.mark.parametrize("isa", ["auto", "avx2"])
def test_silu_fused_equals_unfused_and_ort(quantized, isa, monkeypatch):
    if isa != "auto":
        monkeypatch.setenv("ONYX_LINALG_ISA", isa)
    x = (np.random.default_rng(8).standard_normal((1, C, H, H)) * 2).astype(np.float32)
    unfused = run_onyx(quantized, {"x": x}, extra_args=[
        "--config", "optimization.disable_specified_optimizers=QdqDynamicConvFusion"])[0]
    for threads in (1, 2):
        fused = run_onyx(quantized, {"x": x}, threads=threads)[0]
        assert np.array_equal(fused.view(np.uint32), unfused.view(np.uint32)), f"{threads} threads, {isa}"
    expected = run_ort(quantized, {"x": x})[0]
    differ = np.count_nonzero(fused.view(np.uint32) != expected.view(np.uint32))
    assert differ == 0, f"{differ} of {fused.size} values differ from ONNX Runtime's ({isa})"
