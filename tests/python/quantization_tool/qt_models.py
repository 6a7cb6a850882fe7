"""Small float models and calibration data for the onyx.quantization tests (built with
onnx.helper, seconds to quantize and run)."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper


def _w(rng, *shape, gain=1.0):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    return (rng.normal(size=shape) * gain / np.sqrt(fan_in)).astype(np.float32)


def conv_net(seed=0, batch="N", bad_weight=None, size=16, bad_layer="W2"):
    """x[N,3,size,size] -> Conv+Relu -> Conv+Relu -> MaxPool -> Conv -> Add(skip) -> Sigmoid ->
    GlobalAveragePool -> Reshape -> Gemm -> y[N,10]. bad_weight: a value planted in the weights
    named bad_layer (W2: conv2, W3: conv3); one huge element ruins per-tensor weight
    quantization of that layer only."""
    rng = np.random.default_rng(seed)
    w2 = _w(rng, 16, 16, 3, 3)
    w3 = _w(rng, 16, 16, 3, 3, gain=2.0)
    if bad_weight is not None:
        {"W2": w2, "W3": w3}[bad_layer][3, 5, 1, 1] = bad_weight
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (_w(rng, 16, 3, 3, 3, gain=2.0), "W1"), (rng.normal(size=16).astype(np.float32) * 0.1, "B1"),
        (w2, "W2"), (rng.normal(size=16).astype(np.float32) * 0.1, "B2"),
        (w3, "W3"), (_w(rng, 10, 16, gain=2.0), "Wf"),
        (rng.normal(size=10).astype(np.float32) * 0.1, "Bf"), (np.array([0, -1], np.int64), "shape")]]
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "W2", "B2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p2", "W3"], ["c3"], name="conv3", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c3", "p2"], ["a3"], name="add3"),
        helper.make_node("Sigmoid", ["a3"], ["s3"], name="sigmoid3"),
        helper.make_node("GlobalAveragePool", ["s3"], ["g"], name="gap"),
        helper.make_node("Reshape", ["g", "shape"], ["f"], name="reshape"),
        helper.make_node("Gemm", ["f", "Wf", "Bf"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(nodes, "conv_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                [batch, 3, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def mlp_net(seed=1):
    """x[N,32] -> MatMul+Add -> LeakyRelu -> Concat(with MatMul of x) -> Transpose ->
    Transpose -> Mul(const) -> MatMul -> Softmax -> y[N,8]; plus an AveragePool branch
    z = AveragePool(x as [N,1,32]) as a second output."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (_w(rng, 32, 24), "Wa"), (rng.normal(size=24).astype(np.float32) * 0.1, "Ba"), (_w(rng, 32, 8), "Wb"),
        (rng.uniform(0.5, 1.5, size=32).astype(np.float32), "scale"), (_w(rng, 32, 8, gain=3.0), "Wc"),
        (np.array([0, 1, 32], np.int64), "shape3")]]
    nodes = [
        helper.make_node("MatMul", ["x", "Wa"], ["m1"], name="mm1"),
        helper.make_node("Add", ["m1", "Ba"], ["a1"], name="add1"),
        helper.make_node("LeakyRelu", ["a1"], ["l1"], name="leaky1", alpha=0.1),
        helper.make_node("MatMul", ["x", "Wb"], ["m2"], name="mm2"),
        helper.make_node("Concat", ["l1", "m2"], ["c"], name="concat", axis=1),
        helper.make_node("Transpose", ["c"], ["t1"], name="t1", perm=[1, 0]),
        helper.make_node("Transpose", ["t1"], ["t2"], name="t2", perm=[1, 0]),
        helper.make_node("Mul", ["t2", "scale"], ["s"], name="mul"),
        helper.make_node("MatMul", ["s", "Wc"], ["m3"], name="mm3"),
        helper.make_node("Softmax", ["m3"], ["y"], name="softmax", axis=-1),
        helper.make_node("Reshape", ["x", "shape3"], ["x3"], name="reshape_x"),
        helper.make_node("AveragePool", ["x3"], ["z"], name="avgpool", kernel_shape=[4], strides=[4]),
    ]
    graph = helper.make_graph(nodes, "mlp_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8]),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 1, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def feeds_for(model, count, seed=5, batch=1):
    """Calibration feeds: normal inputs shaped like the model's input (batch rows each)."""
    rng = np.random.default_rng(seed)
    vi = model.graph.input[0]
    dims = [d.dim_value if d.HasField("dim_value") else batch for d in vi.type.tensor_type.shape.dim]
    return [{vi.name: rng.normal(size=dims).astype(np.float32)} for _ in range(count)]


class ListReader:
    """A CalibrationDataReader over a list of feeds (both quantizers take it)."""

    def __init__(self, feeds):
        self._it = iter(feeds)

    def get_next(self):
        return next(self._it, None)


def snr_db(ref, got):
    ref = np.asarray(ref, np.float64)
    noise = np.sum((ref - np.asarray(got, np.float64)) ** 2)
    return np.inf if noise == 0 else 10 * np.log10(np.sum(ref ** 2) / noise)


def initializer(model, name):
    for i in model.graph.initializer:
        if i.name == name:
            return numpy_helper.to_array(i)
    raise KeyError(name)


def nodes_of(model, op_type):
    return [n for n in model.graph.node if n.op_type == op_type]


def embed_net(seed=2, vocab=50, width=16):
    """ids[N,8] (int64) -> Gather from an embedding table -> MatMul -> Add -> Relu -> y[N,8,8]."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (rng.normal(size=(vocab, width)).astype(np.float32), "E"), (_w(rng, width, 8), "W"),
        (rng.normal(size=8).astype(np.float32) * 0.1, "b")]]
    nodes = [
        helper.make_node("Gather", ["E", "ids"], ["emb"], name="embed", axis=0),
        helper.make_node("MatMul", ["emb", "W"], ["m"], name="proj"),
        helper.make_node("Add", ["m", "b"], ["a"], name="bias"),
        helper.make_node("Relu", ["a"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(nodes, "embed_net", [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def embed_feeds(count, seed=5, batch=2, vocab=50):
    rng = np.random.default_rng(seed)
    return [{"ids": rng.integers(0, vocab, size=(batch, 8), dtype=np.int64)} for _ in range(count)]
