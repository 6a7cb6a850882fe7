"""QdqNhwcLayout on YOLO's int8 ops (issue 15): SiLU (QLinearSigmoid then QLinearMul, which
QLinearSiluFusion makes one com.onyx.QLinearSiLU), QLinearConcat on channels, LeakyRelu, nearest
Resize and a uint8 MaxPool beside the convs. The pointwise ops,
channel concats and nearest Resizes join the convs' channels-last region (the Resize with its scales
permuted, a concat's other inputs transposed in), so a YOLO-like net is one region; ops the region
cannot take (linear Resize, a broadcast Mul, a concat on another axis, graph outputs) read NCHW
values. The integer outputs must equal ONNX Runtime 1.31.1's exactly."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import ort_exact_s8, run_onyx, run_ort, save_model
import qdq_models as qm
from test_qdq_nhwc_layout import NHWC_KERNELS

C = 16
FILLERS = 12  # 1x1 conv + SiLU blocks in front: a region needs 4 convs per Transpose


def _net(name, *, resize_mode="nearest", sizes=False, mul_broadcast=False, concat_axis=1, mid_output=False, seed=0):
    """x [N, 16, 6, 6] -> FILLERS blocks -> c0 (1x1) SiLU -> c1 (3x3) SiLU -> c2 (1x1) SiLU
    -> cat0 = Concat(s2, s0) -> cat1 = Concat(cat0, MaxPool(s1)) -> c3 (1x1, 48 -> 16) SiLU
    -> Resize x2 -> c4 (3x3) LeakyRelu -> c5 (1x1) -> y."""
    rng = np.random.default_rng(seed)
    inits, nodes, params = [], [], {}

    def const(value, nm):
        inits.append(numpy_helper.from_array(np.asarray(value), nm))
        return nm

    def q(v):  # a value's scale and zero point, made once
        if v not in params:
            params[v] = (const(np.float32(rng.uniform(0.02, 0.08)), f"{v}_s"), const(np.uint8(rng.integers(90, 160)), f"{v}_z"))
        return list(params[v])

    def conv(x, y, cin, k):
        w = ort_exact_s8(rng.integers(-90, 91, (C, cin, k, k)))
        ins = [x, *q(x), const(w, f"{y}_w"), const(rng.uniform(0.002, 0.01, C).astype(np.float32), f"{y}_ws"),
               const(np.zeros(C, np.int8), f"{y}_wz"), *q(y), const(rng.integers(-500, 500, C).astype(np.int32), f"{y}_b")]
        nodes.append(helper.make_node("QLinearConv", ins, [y], pads=[k // 2] * 4))

    def silu(x, y):
        nodes.append(helper.make_node("QLinearSigmoid", [x, *q(x), *q(y + "_sig")], [y + "_sig"], domain="com.microsoft"))
        if mul_broadcast and y == "s1":  # times a [1, C, 1, 1] tensor: not per element
            other = const(rng.integers(100, 200, (1, C, 1, 1)).astype(np.uint8), "gate")
            nodes.append(helper.make_node("QLinearMul", [x, *q(x), other, *q("gate")] + q(y), [y], domain="com.microsoft"))
        else:
            nodes.append(helper.make_node("QLinearMul", [x, *q(x), y + "_sig", *q(y + "_sig")] + q(y), [y],
                                          domain="com.microsoft"))

    def concat(ins, y, axis):
        args = q(y)
        for v in ins:
            args += [v, *q(v)]
        nodes.append(helper.make_node("QLinearConcat", args, [y], axis=axis, domain="com.microsoft"))

    x = "x"
    for i in range(FILLERS):
        conv(x, f"f{i}", C, 1)
        silu(f"f{i}", f"fs{i}")
        x = f"fs{i}"
    conv(x, "c0", C, 1); silu("c0", "s0")
    conv("s0", "c1", C, 3); silu("c1", "s1")
    conv("s1", "c2", C, 1); silu("c2", "s2")
    concat(["s2", "s0"], "cat0", concat_axis)
    nodes.append(helper.make_node("MaxPool", ["s1"], ["mp"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    params["mp"] = params["s1"]  # MaxPool keeps its input's quantization
    concat(["cat0", "mp"], "cat1", concat_axis)
    cin = 3 * C if concat_axis == 1 else C
    conv("cat1", "c3", cin, 1); silu("c3", "s3")
    roi = const(np.array([], np.float32), "roi")
    if sizes:  # [N, C, 2H, 2W] for the 6x6 map at batch 1 and 2: ONNX sizes are absolute
        ins = ["s3", roi, "", const(np.array([BATCH_FOR_SIZES, C, 12, 12 if concat_axis == 1 else 24], np.int64), "sizes")]
    else:
        ins = ["s3", roi, const(np.array([1, 1, 2, 2], np.float32), "scales")]
    attrs = {"mode": resize_mode} if resize_mode else {}
    nodes.append(helper.make_node("Resize", ins, ["r"], coordinate_transformation_mode="asymmetric", **attrs))
    params["r"] = params["s3"]
    conv("r", "c4", C, 3)
    nodes.append(helper.make_node("QLinearLeakyRelu", ["c4", *q("c4"), *q("l4")], ["l4"], alpha=0.1, domain="com.microsoft"))
    conv("l4", "y", C, 1)
    act = TensorProto.UINT8
    batch = BATCH_FOR_SIZES if sizes else "N"
    outputs = [helper.make_tensor_value_info("y", act, None)]
    if mid_output:
        outputs.append(helper.make_tensor_value_info("s1", act, None))
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", act, [batch, C, 6, 6])], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    return save_model(model, name + ".onnx")


BATCH_FOR_SIZES = 2
CONVS = FILLERS + 6


def _check(path, batches=(1, 2)):
    for batch in batches:
        feed = {"x": np.random.default_rng(batch).integers(0, 256, (batch, C, 6, 6)).astype(np.uint8)}
        expected = run_ort(path, feed)
        for t in (1, 2):
            got = run_onyx(path, feed, threads=t)
            for g, e in zip(got, expected):
                assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape)
                assert np.count_nonzero(g != e) == 0, f"outputs differ from ONNX Runtime's (batch {batch}, {t} threads)"


def _optimized(path):
    model = qm.onyx_optimize(path)
    return model, qm.op_counts(model)


def _resize(model):
    return next(n for n in model.graph.node if n.op_type == "Resize")


def _producer(model, value):
    return next((n for n in model.graph.node if value in n.output), None)


@pytest.mark.parametrize("sizes", [False, True])
def test_yolo_ops_join_one_region(sizes):
    path = _net(f"nhwc_yolo_{sizes}", sizes=sizes)
    model, ops = _optimized(path)
    if NHWC_KERNELS:
        # In: x and MaxPool's output; out: s1 for the MaxPool and y.
        # Each conv followed by a SiLU runs as one com.onyx.QLinearConvSiLU (QLinearConvSiluFusion).
        assert ops.get("com.onyx.QLinearConvSiLU") == CONVS - 2 and ops.get("com.microsoft.QLinearConv") == 2, ops
        assert "QLinearConv" not in ops and "com.onyx.QLinearSiLU" not in ops, ops
        assert ops.get("Transpose") == 4, ops
        resize = _resize(model)
        assert _producer(model, resize.input[0]).op_type == "QLinearConvSiLU"  # channels-last conv + SiLU
        permuted = next(t for t in model.graph.initializer if t.name == resize.input[3 if sizes else 2])
        expect = [BATCH_FOR_SIZES, 12, 12, C] if sizes else [1, 2, 2, 1]
        assert list(numpy_helper.to_array(permuted)) == expect
        concat_axes = [a.i for n in model.graph.node if n.op_type == "QLinearConcat" for a in n.attribute if a.name == "axis"]
        assert concat_axes == [3, 3]
    else:
        assert ops.get("QLinearConv") == CONVS and "Transpose" not in ops, ops
    _check(path, batches=(BATCH_FOR_SIZES,) if sizes else (1, 2))


def test_unfused_silu_joins_too():
    # QLinearSigmoid and QLinearMul themselves (the fusions off: QLinearLookupFusion would make
    # the pair one lookup too) are members as well.
    path = _net("nhwc_yolo_unfused")
    ops = qm.op_counts(qm.onyx_optimize(path, "--disable", "QLinearSiluFusion", "--disable", "QLinearLookupFusion"))
    assert ops.get("com.microsoft.QLinearSigmoid") == CONVS - 2 and ops.get("com.microsoft.QLinearMul") == CONVS - 2, ops
    assert "com.onyx.QLinearConvSiLU" not in ops, ops
    if NHWC_KERNELS:
        assert ops.get("com.microsoft.QLinearConv") == CONVS and ops.get("Transpose") == 4, ops


def test_resize_without_mode_is_nearest_and_joins():
    path = _net("nhwc_yolo_default_mode", resize_mode=None)
    model, ops = _optimized(path)
    if NHWC_KERNELS:
        assert ops.get("Transpose") == 4, ops
    _check(path, batches=(1,))


def test_linear_resize_reads_nchw():
    # Linear interpolation's rounding is not per axis alone: the Resize stays NCHW, with
    # Transposes around it; its codes are ORT's (the 8-bit linear Resize follows ORT's arithmetic).
    path = _net("nhwc_yolo_linear", resize_mode="linear")
    model, ops = _optimized(path)
    resize = _resize(model)
    scales = next(t for t in model.graph.initializer if t.name == resize.input[2])
    assert list(numpy_helper.to_array(scales)) == [1, 1, 2, 2]
    if NHWC_KERNELS:
        assert _producer(model, resize.input[0]).op_type == "Transpose", ops
    _check(path)


def test_broadcast_mul_reads_nchw():
    path = _net("nhwc_yolo_bcast", mul_broadcast=True)
    model, ops = _optimized(path)
    mul = _producer(model, "s1")  # keeps its name: it stays NCHW
    assert mul is not None and mul.op_type == "QLinearMul" and mul.domain == "com.microsoft"
    assert _producer(model, mul.input[0]).op_type in ("Transpose", "QLinearConv"), ops
    _check(path, batches=(1,))


def test_concat_on_another_axis_stays_nchw():
    path = _net("nhwc_yolo_axis2", concat_axis=2)
    model, ops = _optimized(path)
    concat_axes = [a.i for n in model.graph.node if n.op_type == "QLinearConcat" for a in n.attribute if a.name == "axis"]
    assert concat_axes == [2, 2], ops
    _check(path, batches=(1,))


def test_graph_output_inside_the_region_is_nchw():
    path = _net("nhwc_yolo_mid", mid_output=True)
    model, ops = _optimized(path)
    if NHWC_KERNELS:
        assert _producer(model, "s1").op_type == "Transpose", ops
    _check(path)
