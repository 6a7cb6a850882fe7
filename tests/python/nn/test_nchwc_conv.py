"""The com.onyx NCHWc convolution ops (ReorderToNchwc, NchwcConv, ReorderFromNchwc): a chain of
convolutions kept in blocked layout between one reorder at each end must give what the same chain
of plain Conv + activation + Add nodes gives in Onyx, for each channel block the CPU offers."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import assert_outputs_close, run_onyx, save_model

rng = np.random.default_rng(5)

# (name, out channels, kernel, attrs, activation, add the residual)
CHAIN = [
    ("winograd", 24, 3, {"pads": [1, 1, 1, 1]}, "Relu", False),
    ("depthwise", 24, 3, {"pads": [1, 1, 1, 1], "strides": [2, 2], "group": 24}, "Clip", False),
    ("pointwise_residual", 24, 1, {}, None, True),
    ("strided_direct", 20, 3, {"pads": [0, 1, 2, 1], "strides": [2, 2]}, "Silu", False),
    ("dilated_5x5", 20, 5, {"pads": [4, 4, 4, 4], "dilations": [2, 2]}, "HardSwish", False),
]

ISA_FOR_BLOCK = {16: "avx512", 8: "avx2"}


def plain_activation(name, x, out, nodes):
    if name is None:
        nodes.append(helper.make_node("Identity", [x], [out]))
    elif name == "Relu":
        nodes.append(helper.make_node("Relu", [x], [out]))
    elif name == "Clip":
        nodes.append(helper.make_node("Clip", [x, "clip_lo", "clip_hi"], [out]))
    elif name == "Silu":
        nodes += [helper.make_node("Sigmoid", [x], [out + "_g"]), helper.make_node("Mul", [x, out + "_g"], [out])]
    else:
        nodes.append(helper.make_node("HardSwish", [x], [out]))


# A wide 3x3 layer (C * M >= 2^17): Winograd on larger maps, direct on maps of at most 49 pixels.
WIDE_CHAIN = [("wide_3x3", 384, 3, {"pads": [1, 1, 1, 1]}, "Relu", False),
              ("wide_3x3_residual", 384, 3, {"pads": [1, 1, 1, 1]}, None, True)]


def build(block, in_channels=16, size=(19, 22), chain=CHAIN):
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "clip_lo"),
             numpy_helper.from_array(np.array(0.8, np.float32), "clip_hi")]
    plain, blocked = [], [helper.make_node("ReorderToNchwc", ["X"], ["xb0"], domain="com.onyx", block=block)]
    c, prev_p, prev_b = in_channels, "X", "xb0"
    for i, (name, m, k, attrs, act, residual) in enumerate(chain):
        fan_in = c // attrs.get("group", 1) * k * k
        scale = 0.3 if fan_in <= 1000 else fan_in**-0.5  # wide layers: outputs of unit scale for the tolerance
        w = (rng.standard_normal((m, c // attrs.get("group", 1), k, k)) * scale).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(rng.standard_normal(m).astype(np.float32),
                                                                                 f"b{i}")]
        conv_out = f"c{i}"
        plain.append(helper.make_node("Conv", [prev_p, f"w{i}", f"b{i}"], [conv_out], **attrs))
        fused_inputs = [prev_b, f"w{i}", f"b{i}"]
        if residual:  # Z is the chain's input to this node (same shape: 1x1, same channels)
            plain.append(helper.make_node("Add", [conv_out, prev_p], [conv_out + "_z"]))
            conv_out += "_z"
            fused_inputs.append(prev_b)
        plain_activation(act, conv_out, f"p{i}", plain)
        act_attrs = {}
        if act is not None:
            act_attrs["activation"] = act
        if act == "Clip":
            act_attrs["activation_params"] = [0.0, 0.8]
        blocked.append(helper.make_node("NchwcConv", fused_inputs, [f"xb{i + 1}"], domain="com.onyx", **attrs,
                                        **act_attrs))
        c, prev_p, prev_b = m, f"p{i}", f"xb{i + 1}"
    plain.append(helper.make_node("Identity", [prev_p], ["Y"]))
    blocked.append(helper.make_node("ReorderFromNchwc", [prev_b], ["Y"], domain="com.onyx", channels=c))
    x_info = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, in_channels, *size])]
    y_info = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)]
    models = []
    for nodes, name in ((plain, "plain"), (blocked, "nchwc")):
        model = helper.make_model(helper.make_graph(nodes, name, x_info, y_info, inits),
                                  opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("com.onyx", 1)])
        model.ir_version = 8
        models.append(model)
    return models, {"X": rng.standard_normal((2, in_channels, *size)).astype(np.float32)}


@pytest.mark.parametrize("block", [8, 16])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("size", [(19, 22), (7, 7), (5, 6), (1, 9)])
@pytest.mark.parametrize("wide", [False, True])
def test_nchwc_chain_matches_plain_convs(monkeypatch, block, threads, size, wide):
    monkeypatch.setenv("ONYX_CONV_ISA", ISA_FOR_BLOCK[block])
    (plain, blocked), feeds = build(block, **({"in_channels": 384, "chain": WIDE_CHAIN} if wide else {}), size=size)
    tag = f"{block}_{size[0]}x{size[1]}_{'wide' if wide else 'narrow'}"
    want = run_onyx(save_model(plain, f"nchwc_plain_{tag}.onnx"), feeds)
    try:
        got = run_onyx(save_model(blocked, f"nchwc_chain_{tag}.onnx"), feeds, threads=threads)
    except RuntimeError as e:
        if "is not the channel block" in str(e):
            pytest.skip(f"this CPU has no {ISA_FOR_BLOCK[block]} kernels")
        raise
    assert_outputs_close(want, got, rtol=1e-4, atol=1e-4)


def test_wrong_block_fails_cleanly(monkeypatch):
    monkeypatch.setenv("ONYX_CONV_ISA", "scalar")  # block 8
    (_, blocked), feeds = build(16)
    with pytest.raises(RuntimeError, match="block 16 is not the channel block"):
        run_onyx(save_model(blocked, "nchwc_wrong_block.onnx"), feeds)
