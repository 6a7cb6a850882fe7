"""QdqNhwcLayout (issue 15): chains of int8 QLinearConvs with symmetric weights run
channels-last (com.microsoft.QLinearConv channels_last = 1, the direct kernel) with Transposes
only where the chain meets NCHW readers, on CPUs with AVX-512 VNNI or AVX2 (elsewhere the graph
stays NCHW). The integer outputs must equal ONNX Runtime 1.31.1's exactly, whatever reads the chain's
values (graph outputs in the middle, other ops, a subgraph), for uint8 and int8 activations,
int8 and uint8 weights, per-tensor and per-channel scales, and symbolic batches; depthwise convs
of 64+ channels join (their own channels-last kernel); convs the direct kernel does not take
(asymmetric weights, other grouped ones) and few-filter convs on large images stay NCHW."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import ort_exact_s8, run_onyx, run_ort, save_model
import qdq_models as qm

C = 16  # channels of every conv in the chain


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return f.read()
    except OSError:
        return ""


# The CPUs whose channels-last int8 kernels the pass uses (linalg::Q8ConvNhwcAvailable: the
# AVX-512 VNNI kernel, or the AVX2 tile): elsewhere the graph stays NCHW. Depthwise convs join
# only with AVX-512 VNNI (linalg::Q8DepthwiseNhwcFast).
_FLAGS = _cpu_flags()
VNNI = "avx512_vnni" in _FLAGS
NHWC_KERNELS = VNNI or " avx2" in _FLAGS


def _chain(name, *, signed=False, per_channel=True, w_zero=False, w_unsigned=False, hw=7, mid_output=False, side_reader=False,
           group=1, subgraph=False, unknown_shape=False, seed=0, channels=C):
    """x [N, C, hw, hw] (int) -> 4 blocks of conv a (1x1) -> conv b (3x3, pad 1, `group`) ->
    conv c (1x1) -> QLinearAdd(c, a) -> QLinearGlobalAveragePool -> y (12 convs: a region needs 4
    convs per Transpose); options add readers of the first block's b."""
    rng = np.random.default_rng(seed)
    act = TensorProto.INT8 if signed else TensorProto.UINT8
    np_act = np.int8 if signed else np.uint8
    inits = []

    def const(value, nm):
        if all(i.name != nm for i in inits):  # a value's scale and zero point, made once
            inits.append(numpy_helper.from_array(np.asarray(value), nm))
        return nm

    def zp(value, nm):
        return const(np.array(value - (128 if signed else 0), np_act), nm)

    nodes = []
    scales = {"x": 0.05, "a": 0.04, "b": 0.06, "c": 0.05, "s": 0.07, "g": 0.03}
    zeros = {"x": 120, "a": 100, "b": 130, "c": 110, "s": 125, "g": 128}
    scales.update({f"{v}{i}": scales[v] for v in "abcs" for i in range(4)})
    zeros.update({f"{v}{i}": zeros[v] + i for v in "abcs" for i in range(4)})

    def conv(x, y, k, g=1):
        cg = channels // g
        w = ort_exact_s8(rng.integers(-90, 91, (channels, cg, k, k))).astype(np.int64)
        ws = (rng.uniform(0.002, 0.01, channels) if per_channel else np.array(0.006)).astype(np.float32)
        wz = ((rng.integers(-3, 4, channels) if per_channel else np.array(2)) if w_zero
              else (np.zeros(channels) if per_channel else np.array(0)))
        wt = np.uint8 if w_unsigned else np.int8  # uint8 weights: shifted by 128, symmetric about it
        shift = 128 if w_unsigned else 0
        ins = [x, const(np.float32(scales[x]), f"{x}_s"), zp(zeros[x], f"{x}_z"), const((w + shift).astype(wt), f"{y}_w"),
               const(ws, f"{y}_ws"), const((wz + shift).astype(wt), f"{y}_wz"), const(np.float32(scales[y]), f"{y}_s"),
               zp(zeros[y], f"{y}_z"), const(rng.integers(-500, 500, channels).astype(np.int32), f"{y}_b")]
        nodes.append(helper.make_node("QLinearConv", ins, [y], pads=[k // 2] * 4, group=g))

    x = "x"
    for i in range(4):
        a, b, c, s = (f"{v}{i}" for v in "abcs")
        conv(x, a, 1)
        conv(a, b, 3, group)
        conv(b, c, 1)
        nodes.append(helper.make_node("QLinearAdd", [c, f"{c}_s", f"{c}_z", a, f"{a}_s", f"{a}_z",
                                                     const(np.float32(scales[s]), f"{s}_s"), zp(zeros[s], f"{s}_z")], [s],
                                      domain="com.microsoft"))
        x = s
    nodes.append(helper.make_node("QLinearGlobalAveragePool", [x, f"{x}_s", f"{x}_z", const(np.float32(scales["g"]), "g_s"),
                                                               zp(zeros["g"], "g_z")], ["y"], domain="com.microsoft"))
    outputs = [helper.make_tensor_value_info("y", act, None)]
    inputs = [helper.make_tensor_value_info("x", act, None if unknown_shape else ["N", channels, hw, hw])]
    if mid_output:
        outputs.append(helper.make_tensor_value_info("b0", act, None))
    if side_reader:  # an NCHW reader of b: MaxPool on the integers
        nodes.append(helper.make_node("MaxPool", ["b0"], ["pooled"], kernel_shape=[2, 2], strides=[2, 2]))
        outputs.append(helper.make_tensor_value_info("pooled", act, None))
    if subgraph:  # a branch reads b from the outer scope
        branch = lambda tag: helper.make_graph([helper.make_node("Identity", ["b0"], [f"{tag}_out"])], tag, [],
                                               [helper.make_tensor_value_info(f"{tag}_out", act, None)])
        inputs.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
        nodes.append(helper.make_node("If", ["cond"], ["picked"], then_branch=branch("then"), else_branch=branch("else")))
        outputs.append(helper.make_tensor_value_info("picked", act, None))
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    return save_model(model, name + ".onnx")


def _feed(path, batch, seed=1):
    model = onnx.load(path)
    x = model.graph.input[0].type.tensor_type
    dtype = np.int8 if x.elem_type == TensorProto.INT8 else np.uint8
    shape = [batch] + [d.dim_value for d in x.shape.dim[1:]] if x.HasField("shape") else [batch, C, 7, 7]
    info = np.iinfo(dtype)
    feed = {"x": np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(dtype)}
    if len(model.graph.input) > 1:
        feed["cond"] = np.array(True)
    return feed


def _check(path, batches=(1, 2), threads=(1, 2)):
    for batch in batches:
        feed = _feed(path, batch, seed=batch)
        expected = run_ort(path, feed)
        for t in threads:
            got = run_onyx(path, feed, threads=t)
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, g.shape, e.dtype, e.shape)
                differ = np.count_nonzero(g != e)
                assert differ == 0, f"{differ} of {g.size} outputs differ from ONNX Runtime's (batch {batch}, {t} threads)"


def _ops(path):
    return qm.op_counts(qm.onyx_optimize(path))


def _expect_region(ops, transposes):
    if not NHWC_KERNELS:  # the channels-last kernels' CPUs only
        assert ops.get("QLinearConv") == 12 and "Transpose" not in ops, ops
        return
    # Each block's conv c and the add reading it run as one com.onyx.QLinearConvAdd (QLinearConvAddFusion).
    assert ops.get("com.microsoft.QLinearConv") == 8 and ops.get("com.onyx.QLinearConvAdd") == 4, ops
    assert "QLinearConv" not in ops and "com.microsoft.QLinearAdd" not in ops, ops
    assert ops.get("Transpose") == transposes, ops


# (ONNX Runtime has no QLinearConv for uint8 weights with per-channel scales or int8 activations.)
@pytest.mark.parametrize("signed,per_channel,w_unsigned",
                         [(False, True, False), (False, False, False), (True, True, False), (True, False, False),
                          (False, False, True)])
def test_chain_runs_channels_last_and_matches_onnxruntime(signed, per_channel, w_unsigned):
    path = _chain(f"nhwc_chain_{signed}_{per_channel}_{w_unsigned}", signed=signed, per_channel=per_channel,
                  w_unsigned=w_unsigned)
    # All three convs, the Add and the pool join one region: one Transpose in, one out.
    _expect_region(_ops(path), 2)
    _check(path)


@pytest.mark.parametrize("per_channel", [False, True])
def test_asymmetric_weights_stay_nchw(per_channel):
    path = _chain(f"nhwc_w_zero_{per_channel}", per_channel=per_channel, w_zero=True)
    ops = _ops(path)
    assert ops.get("QLinearConv") == 12 and "Transpose" not in ops, ops
    _check(path)


@pytest.mark.parametrize("reader", ["mid_output", "side_reader", "subgraph"])
def test_values_read_outside_the_chain_stay_nchw(reader):
    path = _chain(f"nhwc_{reader}", **{reader: True})
    _expect_region(_ops(path), 3)  # b's NCHW form for its outside reader
    _check(path)


def test_group_conv_breaks_the_chain():
    # The grouped convs stay NCHW; the 1x1 convs left would need a Transpose around each of them
    # (9 for 8 convs), more than they gain.
    path = _chain("nhwc_group", group=2)
    ops = _ops(path)
    assert ops.get("QLinearConv") == 12 and "Transpose" not in ops, ops
    _check(path)


@pytest.mark.parametrize("signed", [False, True])
def test_depthwise_convs_join_the_chain(signed):
    # MobileNet's blocks (1x1, depthwise 3x3, 1x1) of 64 channels, the channels-last depthwise
    # kernel's step (q8_dwconv_nhwc.h): the depthwise convs run channels-last too, so all 12 convs
    # are one region with a Transpose at each end.
    path = _chain(f"nhwc_depthwise_{signed}", signed=signed, channels=64, group=64)
    ops = _ops(path)
    if VNNI:
        _expect_region(ops, 2)
    else:  # each depthwise conv breaks the chain: no region of 4 convs per Transpose is left
        assert ops.get("QLinearConv") == 12 and "Transpose" not in ops, ops
    _check(path)


def test_few_filters_on_a_large_image_stay_nchw():
    # 16 filters fill a quarter of the direct kernel's 64-filter panels: at 56x56 that costs more
    # than NCHW (MobileNetV2's 1x1 convs to 16 and 24 channels), so no conv joins a region.
    path = _chain("nhwc_few_filters_56", hw=56)
    ops = _ops(path)
    assert ops.get("QLinearConv") == 12 and "Transpose" not in ops, ops
    _check(path, batches=(1,))


def test_unknown_rank_stays_nchw():
    # Without X's rank the pass cannot tell an image from anything else: nothing changes.
    path = _chain("nhwc_unknown", unknown_shape=True)
    ops = _ops(path)
    assert ops.get("QLinearConv") == 12 and "Transpose" not in ops, ops
    _check(path, batches=(1,), threads=(1,))


def test_larger_maps_run_channels_last_too():
    path = _chain("nhwc_14x14", hw=14)
    _expect_region(_ops(path), 2)
    _check(path, batches=(1,), threads=(1,))


@pytest.mark.parametrize("channels,w_zero,signed", [(8, 0, False), (8, 0, True), (8, 3, False), (6, 0, False), (6, 2, True)])
def test_channels_last_conv_matches_onnxruntime_alone(channels, w_zero, signed):
    # com.microsoft.QLinearConv channels_last = 1 as a model states it (stride 2, asymmetric pads):
    # the direct kernel (symmetric weights, C a multiple of 4) or the im2col rows and the GEMM.
    rng = np.random.default_rng(3)
    act, np_act = (TensorProto.INT8, np.int8) if signed else (TensorProto.UINT8, np.uint8)
    w = ort_exact_s8(rng.integers(-100, 101, (24, channels, 3, 3)))
    inits = [numpy_helper.from_array(v, n) for v, n in [
        (np.array(0.05, np.float32), "xs"), (np.array(7, np_act), "xz"), (w, "w"),
        (rng.uniform(0.001, 0.01, 24).astype(np.float32), "ws"), (np.full(24, w_zero, np.int8), "wz"),
        (np.array(0.04, np.float32), "ys"), (np.array(90, np_act), "yz"),
        (rng.integers(-900, 900, 24).astype(np.int32), "b")]]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
                            domain="com.microsoft", channels_last=1, strides=[2, 2], pads=[0, 1, 1, 0])
    graph = helper.make_graph([node], "nhwc_conv", [helper.make_tensor_value_info("x", act, [2, 11, 9, channels])],
                              [helper.make_tensor_value_info("y", act, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    path = save_model(model, f"nhwc_conv_alone_{channels}_{w_zero}_{signed}.onnx")
    info = np.iinfo(np_act)
    feed = {"x": rng.integers(info.min, info.max + 1, (2, 11, 9, channels)).astype(np_act)}
    expected = run_ort(path, feed)[0]
    for t in (1, 2):
        got = run_onyx(path, feed, threads=t)[0]
        assert got.shape == expected.shape == (2, 5, 4, 24)
        assert np.array_equal(got, expected)


def test_channels_last_group_conv_is_an_error():
    w = np.ones((4, 2, 1, 1), np.int8)
    inits = [numpy_helper.from_array(v, n) for v, n in [
        (np.array(0.05, np.float32), "xs"), (np.array(0, np.uint8), "xz"), (w, "w"), (np.array(0.01, np.float32), "ws"),
        (np.array(0, np.int8), "wz"), (np.array(0.05, np.float32), "ys"), (np.array(0, np.uint8), "yz")]]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], domain="com.microsoft",
                            channels_last=1, group=2)
    graph = helper.make_graph([node], "nhwc_group", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    path = save_model(model, "nhwc_group_error.onnx")
    with pytest.raises(RuntimeError, match="channels_last supports 2-D convolutions with group 1 or depthwise ones"):
        run_onyx(path, {"x": np.zeros((1, 3, 3, 4), np.uint8)})
