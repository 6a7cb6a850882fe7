"""A float Conv between DequantizeLinear and QuantizeLinear must compute exactly enough that
the requantized values match ONNX Runtime's: Winograd's transform rounding flips values lying
on a rounding tie (issue 15), so such convolutions take the direct or GEMM paths.

The model is built so that every exact result is representable: power-of-two scales and small
integer codes make the dequantized products and their sums exact in float32 whatever the
summation order, and the output scale puts half of the results exactly on a tie (x.5 steps,
rounded half to even). Any path that rounds on the way (Winograd's 1/6, 1/12, 1/24 weight
transform) then flips about half of those, while ONNX Runtime (float Conv, or its fused
QLinearConv in exact int32) and Onyx's direct / GEMM paths agree on every value."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model

CHANNELS, SIZE = 32, 20


def qdq_conv_model(name, layers=2):
    """x -> Q -> DQ -> [Conv 3x3 (DQ'd int8 weights, DQ'd int32 bias) -> Q -> DQ] x layers, uint8
    activations: 3x3, stride-1, 32-channel convolutions, the shape Winograd takes."""
    rng = np.random.default_rng(15)
    nodes, inits = [], []

    def const(n, a):
        inits.append(numpy_helper.from_array(np.asarray(a), n))

    xs, xz = np.float32(2.0 ** -4), np.uint8(128)
    const("xs", xs), const("xz", xz)
    nodes += [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["q0"]),
              helper.make_node("DequantizeLinear", ["q0", "xs", "xz"], ["d0"])]
    value, scale = "d0", xs
    for i in range(layers):
        w = rng.integers(-3, 4, size=(CHANNELS, CHANNELS, 3, 3), dtype=np.int8)
        ws = np.float32(2.0 ** -3) * np.ones(CHANNELS, np.float32)
        b = rng.integers(-40, 40, size=CHANNELS, dtype=np.int32)
        ys = np.float32(scale * ws[0] * (32 if i else 2))  # results are k / 2 (layer 0), k / 32 steps
        const(f"w{i}", w), const(f"ws{i}", ws), const(f"wz{i}", np.zeros(CHANNELS, np.int8))
        const(f"b{i}", b), const(f"bs{i}", (scale * ws).astype(np.float32))
        const(f"bz{i}", np.zeros(CHANNELS, np.int32))
        const(f"ys{i}", ys), const(f"yz{i}", np.uint8(128))
        nodes += [
            helper.make_node("DequantizeLinear", [f"w{i}", f"ws{i}", f"wz{i}"], [f"wd{i}"], axis=0),
            helper.make_node("DequantizeLinear", [f"b{i}", f"bs{i}", f"bz{i}"], [f"bd{i}"], axis=0),
            helper.make_node("Conv", [value, f"wd{i}", f"bd{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
            helper.make_node("QuantizeLinear", [f"c{i}", f"ys{i}", f"yz{i}"], [f"q{i + 1}"]),
        ]
        value = f"q{i + 1}"
        if i + 1 < layers:
            nodes.append(helper.make_node("DequantizeLinear", [value, f"ys{i}", f"yz{i}"], [f"d{i + 1}"]))
            value, scale = f"d{i + 1}", ys
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, SIZE, SIZE])],
        [helper.make_tensor_value_info(value, TensorProto.UINT8, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return save_model(model, f"{name}.onnx")


def feed():
    codes = np.random.default_rng(3).integers(-3, 4, size=(1, CHANNELS, SIZE, SIZE))
    return {"x": (codes * 2.0 ** -4).astype(np.float32)}


@pytest.mark.parametrize("ort_level", ["all", "disabled"])
@pytest.mark.parametrize("opt_level", ["all", "disabled"])
@pytest.mark.parametrize("threads", [1, 2])
def test_qdq_conv_matches_onnxruntime_exactly(ort_level, opt_level, threads):
    path = qdq_conv_model("qdq_conv")
    expected = run_ort(path, feed(), opt_level=ort_level)[0]
    got = run_onyx(path, feed(), threads=threads, extra_args=["--opt-level", opt_level])[0]
    assert got.dtype == np.uint8 and got.shape == expected.shape
    saturated = np.count_nonzero((expected == 0) | (expected == 255))
    assert saturated < expected.size // 20, "the model should keep its values inside the uint8 range"
    differ = np.count_nonzero(got != expected)
    assert differ == 0, f"{differ} of {got.size} quantized values differ from ONNX Runtime's"
