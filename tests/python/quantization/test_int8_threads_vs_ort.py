"""int8 ops that Onyx splits over the intra-op threads, at sizes where it does, against ONNX
Runtime 1.31's outputs at 1, 2 and 3 threads, exactly: com.microsoft QGemm with one row (a
classifier: Onyx's matrix-vector kernel, panels split over the threads), broadcast QLinearAdd /
QLinearMul (BERT's bias add; a per-row operand on either side; a run longer than Onyx's 16,384
element pieces), DynamicQuantizeLinear (its range computed by chunks on the threads) and
QLinearGlobalAveragePool (channels first, MobileNetV2's [1, 1280, 7, 7] and a larger image).
int8 weights stay within [-64, 64) so ONNX Runtime's u8s8 kernels cannot saturate."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model

QTYPES = {"uint8": (np.uint8, TensorProto.UINT8, 0, 256), "int8": (np.int8, TensorProto.INT8, -128, 128)}
MS_OPSETS = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]


def model(nodes, inputs, outputs, inits, opsets=MS_OPSETS):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, n) for n, v in inits.items()])
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 8
    return m


def expect_same_as_ort(m, name, feeds):
    path = save_model(m, name)
    expected = run_ort(path, feeds)
    for threads in (1, 2, 3):
        got = run_onyx(path, feeds, threads=threads)
        for i, (g, e) in enumerate(zip(got, expected)):
            assert g.dtype == e.dtype and g.shape == e.shape, f"output {i} at {threads} threads"
            differ = np.count_nonzero(g != e)
            assert differ == 0, f"{threads} threads: {differ} of {g.size} values of output {i} differ from ORT's"


@pytest.mark.parametrize("a_type", ["uint8", "int8"])
@pytest.mark.parametrize("per_column", [False, True], ids=["per_tensor", "per_column"])
@pytest.mark.parametrize("k,n", [(1280, 1000), (1283, 1009)])
def test_qgemm_one_row(a_type, per_column, k, n):
    r = np.random.default_rng(21)
    dtype, elem, lo, hi = QTYPES[a_type]
    inits = {
        "a_scale": np.array(0.02, np.float32), "a_zp": np.array(121 if a_type == "uint8" else -3, dtype),
        "b": r.integers(-64, 64, (n, k)).astype(np.int8),
        "b_scale": (r.random(n) * 0.002 + 0.0005).astype(np.float32) if per_column else np.array(0.001, np.float32),
        "b_zp": np.zeros((n,) if per_column else (), np.int8),
        "c": r.integers(-2000, 2000, n).astype(np.int32),
        "y_scale": np.array(0.05, np.float32), "y_zp": np.array(128 if a_type == "uint8" else 1, dtype),
    }
    node = helper.make_node("QGemm", ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "c", "y_scale", "y_zp"], ["y"],
                            domain="com.microsoft", transB=1)
    m = model([node], [helper.make_tensor_value_info("a", elem, [1, k])],
              [helper.make_tensor_value_info("y", elem, [1, n])], inits)
    feeds = {"a": r.integers(lo, hi, (1, k)).astype(dtype)}
    expect_same_as_ort(m, f"qgemm_row_{a_type}_{per_column}_{k}", feeds)


# (x shape, w shape): BERT's bias add, a per-row operand, a run cut into pieces with a
# one-element last piece (32,769 = 2 x 16,384 + 1).
BROADCASTS = [((1, 128, 768), (768,)), ((128, 768), (128, 1)), ((4, 32769), (4, 1))]


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("w_first", [False, True], ids=["x_first", "w_first"])
@pytest.mark.parametrize("shapes", BROADCASTS, ids=["bias", "per_row", "pieces"])
def test_broadcast_qlinear_binary(op, qtype, w_first, shapes):
    xs, ws = shapes
    dtype, elem, lo, hi = QTYPES[qtype]
    r = np.random.default_rng(23)
    zps = (121, 133, 127) if qtype == "uint8" else (-3, 5, 1)  # odd output zero point: rounding ties
    inits = {"sx": np.array(0.02, np.float32), "zx": np.array(zps[0], dtype),
             "sw": np.array(0.03, np.float32), "zw": np.array(zps[1], dtype),
             "sy": np.array(0.05 if op == "QLinearAdd" else 0.3, np.float32), "zy": np.array(zps[2], dtype)}
    x, w = ["x", "sx", "zx"], ["w", "sw", "zw"]
    node = helper.make_node(op, (w + x if w_first else x + w) + ["sy", "zy"], ["y"], domain="com.microsoft")
    m = model([node], [helper.make_tensor_value_info("x", elem, list(xs)), helper.make_tensor_value_info("w", elem, list(ws))],
              [helper.make_tensor_value_info("y", elem, list(xs))], inits)
    feeds = {"x": r.integers(lo, hi, xs).astype(dtype), "w": r.integers(lo, hi, ws).astype(dtype)}
    expect_same_as_ort(m, f"bcast_{op}_{qtype}_{w_first}_{xs[-1]}_{ws[0]}", feeds)


@pytest.mark.parametrize("case", ["mixed", "positive", "negative"])
def test_dynamic_quantize_linear_large(case):
    r = np.random.default_rng(29)
    x = (r.standard_normal((128, 3072)) * 1.5).astype(np.float32)
    if case == "positive":
        x = np.abs(x)
    elif case == "negative":
        x = -np.abs(x)
    x[-1, -5] = -9.25 if case != "positive" else 9.25  # the extreme in the last chunk
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "y_scale", "y_zp"])
    outs = [helper.make_tensor_value_info("y", TensorProto.UINT8, [128, 3072]),
            helper.make_tensor_value_info("y_scale", TensorProto.FLOAT, []),
            helper.make_tensor_value_info("y_zp", TensorProto.UINT8, [])]
    m = model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [128, 3072])], outs, {},
              opsets=[helper.make_opsetid("", 13)])
    expect_same_as_ort(m, f"dql_large_{case}", {"x": x})


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("shape", [(1, 1280, 7, 7), (1, 512, 28, 28), (2, 96, 13, 11)])
def test_qlinear_global_average_pool_channels_first(qtype, shape):
    dtype, elem, lo, hi = QTYPES[qtype]
    r = np.random.default_rng(31)
    zps = (120, 131) if qtype == "uint8" else (-3, 5)
    inits = {"sx": np.array(0.05, np.float32), "zx": np.array(zps[0], dtype),
             "sy": np.array(0.03, np.float32), "zy": np.array(zps[1], dtype)}
    node = helper.make_node("QLinearGlobalAveragePool", ["x", "sx", "zx", "sy", "zy"], ["y"], domain="com.microsoft",
                            channels_last=0)
    out_shape = list(shape[:2]) + [1] * (len(shape) - 2)
    m = model([node], [helper.make_tensor_value_info("x", elem, list(shape))],
              [helper.make_tensor_value_info("y", elem, out_shape)], inits)
    expect_same_as_ort(m, f"qgap_{qtype}_{'x'.join(map(str, shape))}", {"x": r.integers(lo, hi, shape).astype(dtype)})


# (x scale, w scale, y scale, zero points x/w/y): BERT's attention-mask add, whose ratio x_scale /
# y_scale is subnormal (Onyx drops a negligible outer term, which must not change any output), and
# a negligible but normal ratio with a varied other term.
TINY_RATIOS = {"bert_mask": (0.01217246986925602, 1.3344405750530544e36, 1.3344405750530544e36, (128, 255, 255)),
               "negligible": (1e-20, 0.03, 0.05, (121, 133, 127))}


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("w_first", [False, True], ids=["x_first", "w_first"])
@pytest.mark.parametrize("shapes", [((1, 12, 128, 128), (1, 1, 1, 128)), ((1, 128, 768), (1, 128, 768)),
                                    ((4, 300), (4, 1))], ids=["mask", "same_shape", "per_row"])
@pytest.mark.parametrize("case", list(TINY_RATIOS))
def test_qlinear_add_negligible_ratio(case, shapes, w_first, qtype):
    sx, sw, sy, zps = TINY_RATIOS[case]
    xs, ws = shapes
    dtype, elem, lo, hi = QTYPES[qtype]
    if qtype == "int8":
        zps = tuple(z - 128 for z in zps)
    r = np.random.default_rng(37)
    inits = {"sx": np.array(sx, np.float32), "zx": np.array(zps[0], dtype), "sw": np.array(sw, np.float32),
             "zw": np.array(zps[1], dtype), "sy": np.array(sy, np.float32), "zy": np.array(zps[2], dtype)}
    x, w = ["x", "sx", "zx"], ["w", "sw", "zw"]
    node = helper.make_node("QLinearAdd", (w + x if w_first else x + w) + ["sy", "zy"], ["y"], domain="com.microsoft")
    m = model([node], [helper.make_tensor_value_info("x", elem, list(xs)), helper.make_tensor_value_info("w", elem, list(ws))],
              [helper.make_tensor_value_info("y", elem, list(xs))], inits)
    feeds = {"x": r.integers(lo, hi, xs).astype(dtype), "w": r.integers(lo, hi, ws).astype(dtype)}
    expect_same_as_ort(m, f"tiny_{case}_{qtype}_{w_first}_{xs[-1]}_{ws[-1]}", feeds)
