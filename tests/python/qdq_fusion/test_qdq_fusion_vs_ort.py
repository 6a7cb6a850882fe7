"""QDQ graph fusion (issue 15): models quantized by ONNX Runtime's own tool run in Onyx as
integer ops between their ends, and agree with ONNX Runtime 1.31.1 on the same inputs: integer
outputs exactly, float outputs within one quantization step of the output scale.

The fusions must fire (the optimized graph has no float Conv / MatMul / Gemm left, and only the
input's QuantizeLinear and the output's DequantizeLinear stay), and each test would fail if a
fused kernel or a fusion condition disagreed with ONNX Runtime's results."""
import numpy as np
import pytest

from onyx_harness import run_onyx, run_ort, save_model
import qdq_models as qm

QUANT_CONFIGS = [("QUInt8", False), ("QUInt8", True), ("QInt8", False), ("QInt8", True)]


def check_same_graph_as_ort(path):
    """Onyx's optimized graph has ONNX Runtime's fused ops and leftover float ops, op for op
    (ORT at level extended, whose QDQ rules Onyx follows; on x86-64 int8 activations take ORT's
    detour through uint8 and keep int8 Conv / MatMul groups float). Returns Onyx's counts."""
    # (Without Onyx's own merges: QLinearSiluFusion, of ORT's QLinearSigmoid + QLinearMul, and
    # QLinearLookupFusion, of 8-bit per-element chains.)
    onyx_ops = qm.op_counts(qm.onyx_optimize(path, "--disable", "QLinearSiluFusion", "--disable",
                                             "QLinearLookupFusion"))
    ort_ops = qm.ort_op_counts(path)
    assert onyx_ops == ort_ops, f"Onyx {onyx_ops}\nORT  {ort_ops}"
    return onyx_ops


def check_against_ort(path, feeds, out_scale):
    """Onyx (default level) and ONNX Runtime (default level) on each feed: output 0 is the
    float result, output 1 the integer value the final DequantizeLinear reads."""
    for feed in feeds:
        expected = run_ort(path, feed)
        got = run_onyx(path, feed)
        assert len(got) == len(expected) == 2
        assert got[1].dtype == expected[1].dtype and got[1].shape == expected[1].shape
        differ = np.count_nonzero(got[1] != expected[1])
        assert differ == 0, f"{differ} of {got[1].size} integer outputs differ from ONNX Runtime's"
        assert got[0].dtype == np.float32 and got[0].shape == expected[0].shape
        worst = float(np.max(np.abs(got[0].astype(np.float64) - expected[0])))
        assert worst <= out_scale * 1.0001, f"float output off by {worst}, more than one step ({out_scale})"


@pytest.mark.parametrize("activation,per_channel", QUANT_CONFIGS)
def test_qdq_cnn_fuses_and_matches_onnxruntime(activation, per_channel):
    path = qm.quantize_static_qdq(qm.cnn_float(), qm.cnn_feed, f"cnn_{activation}_{per_channel}", activation, per_channel)
    ops = check_same_graph_as_ort(path)
    if activation == "QInt8":  # the int8 detour (x86-64): checked against ORT's graph above
        check_against_ort(path, [qm.cnn_feed(s) for s in (1, 2)], qm.dequantize_scale(path, "y"))
        return
    for float_op in ("Conv", "Gemm", "Add", "Mul", "Concat", "AveragePool", "GlobalAveragePool", "Sigmoid", "LeakyRelu"):
        assert float_op not in ops, f"{float_op} stayed float: {ops}"
    assert ops.get("QLinearConv") == 4, ops
    assert ops.get("com.microsoft.QGemm") == 1, ops
    for fused in ("QLinearAdd", "QLinearMul", "QLinearConcat", "QLinearAveragePool", "QLinearGlobalAveragePool",
                  "QLinearSigmoid", "QLinearLeakyRelu"):
        assert ops.get("com.microsoft." + fused) == 1, f"no {fused}: {ops}"
    # MaxPool and Flatten run on the integers; only the input's Q and the output's DQ stay.
    assert ops.get("MaxPool") == 1 and ops.get("Flatten") == 1, ops
    assert ops.get("QuantizeLinear") == 1 and ops.get("DequantizeLinear") == 1, ops
    check_against_ort(path, [qm.cnn_feed(s) for s in (1, 2)], qm.dequantize_scale(path, "y"))


@pytest.mark.parametrize("activation,per_channel", QUANT_CONFIGS)
def test_qdq_transformer_fuses_and_matches_onnxruntime(activation, per_channel):
    path = qm.quantize_static_qdq(qm.transformer_float(), qm.transformer_feed, f"tf_{activation}_{per_channel}",
                                  activation, per_channel)
    ops = check_same_graph_as_ort(path)
    if activation == "QInt8":
        check_against_ort(path, [qm.transformer_feed(s) for s in (1, 2)], qm.dequantize_scale(path, "y"))
        return
    for float_op in ("MatMul", "Add", "Mul", "Softmax", "Sigmoid"):
        assert float_op not in ops, f"{float_op} stayed float: {ops}"
    assert ops.get("QLinearMatMul") == 8, ops  # q, k, v, q k^T, p v, output, MLP x2
    assert ops.get("com.microsoft.QLinearSoftmax") == 1, ops
    assert ops.get("com.microsoft.QLinearAdd", 0) >= 4 and ops.get("com.microsoft.QLinearMul", 0) >= 2, ops
    # Gather, Reshape and Transpose move the integers: no QuantizeLinear at all (the input is
    # ids), one DequantizeLinear at the output.
    assert ops.get("Gather") == 1 and ops.get("Reshape") == 4 and ops.get("Transpose") == 4, ops
    assert "QuantizeLinear" not in ops and ops.get("DequantizeLinear") == 1, ops
    check_against_ort(path, [qm.transformer_feed(s) for s in (1, 2)], qm.dequantize_scale(path, "y"))


def test_dynamic_quantized_matmul_fuses_and_matches_onnxruntime():
    path = qm.quantize_dynamic_matmul("dyn")
    ops = check_same_graph_as_ort(path)
    assert ops == {"com.microsoft.DynamicQuantizeMatMul": 2}, ops
    for seed in (1, 2):
        feed = {"x": np.random.default_rng(seed).standard_normal((4, 16)).astype(np.float32)}
        expected = run_ort(path, feed)[0]
        got = run_onyx(path, feed)[0]
        # Both sides run the same integer products and scale them in float: only the float
        # rounding of the scale and bias may differ.
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_fusion_off_keeps_the_qdq_graph_float():
    """The passes can be disabled by name (the benchmark's "fusion off"): the QDQ groups then
    stay float between DQ and Q and the model still runs, close to the fused result."""
    path = qm.quantize_static_qdq(qm.cnn_float(), qm.cnn_feed, "cnn_off")
    disabled = ["--disable", "QdqConvMatMulFusion", "--disable", "QdqOpFusion", "--disable", "QdqDropFusion",
                "--disable", "QdqS8ToU8", "--disable", "QdqClipReluElimination", "--disable", "QdqBiasQuantization",
                "--disable", "QdqPropagation"]
    unfused_model = qm.onyx_optimize(path, *disabled)
    ops = qm.op_counts(unfused_model)
    assert not any(op.startswith(("QLinear", "com.microsoft.Q")) for op in ops), ops
    assert ops.get("Conv") == 4 and ops.get("Gemm") == 1, ops
    unfused_path = save_model(unfused_model, "cnn_off_unfused.onnx")
    feed = qm.cnn_feed(1)
    fused = run_onyx(path, feed)[0]
    unfused = run_onyx(unfused_path, feed, extra_args=["--opt-level", "disabled"])[0]
    # Float arithmetic between the Q/DQ pairs rounds differently from the integer kernels: a few
    # output steps apart after eight quantized layers, not more.
    assert float(np.max(np.abs(fused - unfused))) <= 4 * qm.dequantize_scale(path, "y")


@pytest.mark.parametrize("extra", ["shared_dq", "float_result", "q_output"])
def test_graph_outputs_in_the_middle_keep_onnxruntimes_graph_and_results(extra):
    """A value in the middle of the quantized graph is also a graph output: a DQ read by two
    nodes (the fused readers take its integer input, the DQ stays), the float result of an Add
    (its group stays float, as in ORT) or a Q's integer output (the fused node writes it)."""
    import onnx
    from onnx import helper
    path = qm.quantize_static_qdq(qm.cnn_float(), qm.cnn_feed, f"cnn_mid_{extra}", int_output=False)
    model = onnx.load(path)
    readers = {}
    for node in model.graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    producer = {o: n for n in model.graph.node for o in n.output}
    if extra == "shared_dq":
        name = next(n.output[0] for n in model.graph.node
                    if n.op_type == "DequantizeLinear" and len(readers.get(n.output[0], [])) >= 2)
        elem = onnx.TensorProto.FLOAT
    elif extra == "float_result":
        name = next(n.output[0] for n in model.graph.node if n.op_type == "Add")
        elem = onnx.TensorProto.FLOAT
    else:
        name = next(n.output[0] for n in model.graph.node
                    if n.op_type == "QuantizeLinear" and producer.get(n.input[0]) is not None
                    and producer[n.input[0]].op_type == "Concat")
        elem = onnx.TensorProto.UINT8
    model.graph.output.append(helper.make_tensor_value_info(name, elem, None))
    path = save_model(model, f"cnn_mid_{extra}_out.onnx")
    check_same_graph_as_ort(path)
    feed = qm.cnn_feed(3)
    expected, got = run_ort(path, feed), run_onyx(path, feed)
    assert np.max(np.abs(got[0] - expected[0])) <= qm.dequantize_scale(path, "y") * 1.0001
    if elem == onnx.TensorProto.UINT8:
        assert np.array_equal(got[1], expected[1])
    else:
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op,per_column", [("MatMul", False), ("MatMul", True), ("Gemm", False), ("Gemm", True)])
def test_float_output_matmul_and_gemm_fuse_like_onnxruntime(op, per_column):
    """x -> Q -> DQ -> MatMul / Gemm(DQ(int8 weights) [, DQ(int32 bias)]) -> float y: no Q after
    the product, so ORT makes MatMulIntegerToFloat / QGemm with a float output; Onyx too."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(5)
    k, n = 16, 6
    w = rng.integers(-60, 60, size=(n, k) if op == "Gemm" else (k, n), dtype=np.int8)
    ws = (rng.uniform(0.01, 0.03, size=n) if per_column else np.array(0.02)).astype(np.float32)
    xs = np.float32(0.05)
    inits = [numpy_helper.from_array(a, name) for name, a in [
        ("xs", np.array(xs)), ("xz", np.array(120, np.uint8)), ("w", w), ("ws", ws),
        ("wz", np.zeros(ws.shape, np.int8)), ("b", rng.integers(-500, 500, size=n).astype(np.int32)),
        ("bs", (xs * ws).astype(np.float32)), ("bz", np.zeros(ws.shape, np.int32))]]
    axis = 0 if op == "Gemm" else 1
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=axis)]
    if op == "Gemm":
        nodes += [helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bd"], axis=0),
                  helper.make_node("Gemm", ["xd", "wd", "bd"], ["y"], transB=1)]
    else:
        nodes.append(helper.make_node("MatMul", ["xd", "wd"], ["y"]))
    graph = helper.make_graph(nodes, "float_out", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, n])], inits)
    path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{op}_{per_column}.onnx")
    ops = check_same_graph_as_ort(path)
    assert ops.get("com.microsoft.QGemm" if op == "Gemm" else "com.microsoft.MatMulIntegerToFloat") == 1, ops
    feed = {"x": rng.standard_normal((3, k)).astype(np.float32)}
    np.testing.assert_allclose(run_onyx(path, feed)[0], run_ort(path, feed)[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["Conv", "Gemm"])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_float_bias_is_quantized_like_onnxruntime(op, per_channel, activation):
    """DQ(x), DQ(w), float bias -> Conv / Gemm [-> Relu] -> Q: ORT's WeightBiasQuantization turns
    the bias into DQ(int32) with scale x_scale * w_scale, and the group fuses (or, int8 on x86-64,
    stays float with the rounded bias); Onyx gives the same graph and the same integers."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(6)
    u8 = activation == "QUInt8"
    qt = np.uint8 if u8 else np.int8
    m = 6
    w = rng.integers(-40, 40, size=(m, 4, 3, 3) if op == "Conv" else (m, 16), dtype=np.int8)
    ws = (rng.uniform(0.005, 0.02, size=m) if per_channel else np.array(0.01)).astype(np.float32)
    consts = {"xs": np.array(0.04, np.float32), "xz": np.array(128 if u8 else 0, qt), "w": w, "ws": ws,
              "wz": np.zeros(ws.shape, np.int8), "b": rng.standard_normal(m).astype(np.float32),
              "ys": np.array(0.05, np.float32), "yz": np.array(0 if u8 else -128, qt)}
    inits = [numpy_helper.from_array(a, name) for name, a in consts.items()]
    shape = [1, 4, 6, 6] if op == "Conv" else [3, 16]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
             helper.make_node(op, ["xd", "wd", "b"], ["c"], **({"pads": [1, 1, 1, 1]} if op == "Conv" else {"transB": 1})),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    out_type = TensorProto.UINT8 if u8 else TensorProto.INT8
    graph = helper.make_graph(nodes, "float_bias", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("yq", out_type, None)], inits)
    path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                      f"bias_{op}_{per_channel}_{activation}.onnx")
    ops = check_same_graph_as_ort(path)
    assert "Relu" not in ops, ops
    if u8:
        assert ops.get("QLinearConv" if op == "Conv" else "com.microsoft.QGemm") == 1, ops
    check_against_ort(path, [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(2)], 0.05)


@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
def test_qdq_pairs_are_carried_across_data_movement_like_onnxruntime(direction):
    """Q/DQ pairs only around the convs (as some exporters write them): ORT's QDQ propagation
    carries the DQ forward / the Q backward across MaxPool, Reshape, Transpose, Squeeze,
    Unsqueeze and Slice so those run on the integers and the groups beyond them fuse; Onyx gives
    the same graph and the same integers."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(7)
    consts = {"xs": np.array(0.04, np.float32), "xz": np.array(128, np.uint8),
              "w1": rng.integers(-40, 40, size=(8, 4, 3, 3), dtype=np.int8), "w1s": np.array(0.01, np.float32),
              "w2": rng.integers(-40, 40, size=(6, 8, 1, 1), dtype=np.int8), "w2s": np.array(0.01, np.float32),
              "wz": np.array(0, np.int8), "ys": np.array(0.05, np.float32), "yz": np.array(128, np.uint8),
              "zs": np.array(0.03, np.float32), "zz": np.array(128, np.uint8),
              "flat": np.array([1, 6, 16], np.int64)}
    inits = [numpy_helper.from_array(a, name) for name, a in consts.items()]
    n = helper.make_node
    nodes = [n("QuantizeLinear", ["x", "xs", "xz"], ["xq"]), n("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             n("DequantizeLinear", ["w1", "w1s", "wz"], ["w1d"]), n("DequantizeLinear", ["w2", "w2s", "wz"], ["w2d"]),
             n("Conv", ["xd", "w1d"], ["c1"], pads=[1, 1, 1, 1])]
    if direction == "backward":  # Conv -> MaxPool -> Q: the Q goes back before the MaxPool
        nodes += [n("MaxPool", ["c1"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                  n("QuantizeLinear", ["p", "ys", "yz"], ["pq"]), n("DequantizeLinear", ["pq", "ys", "yz"], ["pd"])]
    else:  # Conv -> Q -> DQ -> MaxPool -> Conv: the DQ goes forward past the MaxPool
        nodes += [n("QuantizeLinear", ["c1", "ys", "yz"], ["c1q"]), n("DequantizeLinear", ["c1q", "ys", "yz"], ["c1d"]),
                  n("MaxPool", ["c1d"], ["pd"], kernel_shape=[2, 2], strides=[2, 2])]
    nodes.append(n("Conv", ["pd", "w2d"], ["c2"]))
    if direction == "forward":
        nodes += [n("QuantizeLinear", ["c2", "zs", "zz"], ["zq"]), n("DequantizeLinear", ["zq", "zs", "zz"], ["zd"]),
                  n("Reshape", ["zd", "flat"], ["r"]), n("Transpose", ["r"], ["y"], perm=[0, 2, 1])]
    else:  # c2 -> Reshape -> Transpose -> Q: the Q goes back to the Conv
        nodes += [n("Reshape", ["c2", "flat"], ["r"]), n("Transpose", ["r"], ["u"], perm=[0, 2, 1]),
                  n("QuantizeLinear", ["u", "zs", "zz"], ["zq"]), n("DequantizeLinear", ["zq", "zs", "zz"], ["y"])]
    graph = helper.make_graph(nodes, "propagation", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"prop_{direction}.onnx")
    ops = check_same_graph_as_ort(path)
    assert ops.get("QLinearConv") == 2, ops
    for _ in range(2):
        feed = {"x": rng.standard_normal((1, 4, 8, 8)).astype(np.float32)}
        expected, got = run_ort(path, feed)[0], run_onyx(path, feed)[0]
        assert float(np.max(np.abs(got - expected))) <= 0.03 * 1.0001
