"""Small models built with onnx's helpers for fast mutation runs (the CI replay and a campaign's
first sources): the shapes-computed-from-shapes pattern exporters write (Shape, Gather, Concat,
Reshape), attention-like MatMul/Softmax, and a small CNN with Conv, pools, Resize and Split."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _model(nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(nodes, "seed", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def attention_block(seq=8, hidden=16, heads=2):
    r = np.random.default_rng(0)
    f = lambda *shape: r.standard_normal(shape).astype(np.float32) * 0.2  # noqa: E731
    inits = [_const("wq", f(hidden, hidden)), _const("wk", f(hidden, hidden)), _const("wv", f(hidden, hidden)),
             _const("gamma", np.ones(hidden, np.float32)), _const("beta", np.zeros(hidden, np.float32)),
             _const("zero", np.array([0], np.int64)), _const("one", np.array([1], np.int64)),
             _const("heads", np.array([heads, hidden // heads], np.int64)), _const("flat", np.array([0, 0, -1], np.int64)),
             _const("scale", np.array(1.0 / np.sqrt(hidden // heads), np.float32)),
             _const("starts", np.array([0], np.int64)), _const("ends", np.array([seq // 2], np.int64)),
             _const("axes", np.array([1], np.int64))]
    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "gamma", "beta"], ["ln"], axis=-1, epsilon=1e-5),
        n("MatMul", ["ln", "wq"], ["q"]), n("MatMul", ["ln", "wk"], ["k"]), n("MatMul", ["ln", "wv"], ["v"]),
        n("Shape", ["x"], ["shape"]),
        n("Gather", ["shape", "zero"], ["batch"], axis=0), n("Gather", ["shape", "one"], ["seq"], axis=0),
        n("Concat", ["batch", "seq", "heads"], ["split_shape"], axis=0),
        n("Reshape", ["q", "split_shape"], ["q4"]), n("Reshape", ["k", "split_shape"], ["k4"]),
        n("Reshape", ["v", "split_shape"], ["v4"]),
        n("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]), n("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        n("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
        n("MatMul", ["qt", "kt"], ["scores"]), n("Mul", ["scores", "scale"], ["scaled"]),
        n("Softmax", ["scaled"], ["probs"], axis=-1), n("MatMul", ["probs", "vt"], ["ctx"]),
        n("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]), n("Reshape", ["ctx_t", "flat"], ["merged"]),
        n("Add", ["merged", "x"], ["y"]),
        n("Slice", ["y", "starts", "ends", "axes"], ["half"]),
        n("ReduceMean", ["half"], ["pooled"], axes=[1], keepdims=0),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", seq, hidden])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", seq, hidden]),
               helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])]
    return _model(nodes, inputs, outputs, inits, opset=17)


def small_cnn(size=16):
    r = np.random.default_rng(1)
    f = lambda *shape: r.standard_normal(shape).astype(np.float32) * 0.3  # noqa: E731
    inits = [_const("w1", f(8, 3, 3, 3)), _const("b1", f(8)), _const("w2", f(8, 4, 3, 3)),
             _const("bn_s", np.ones(8, np.float32)), _const("bn_b", np.zeros(8, np.float32)),
             _const("bn_m", np.zeros(8, np.float32)), _const("bn_v", np.ones(8, np.float32)),
             _const("scales", np.array([1, 1, 2, 2], np.float32)), _const("split", np.array([4, 4], np.int64)),
             _const("fc", f(12, 5))]
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        n("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"]),
        n("Relu", ["bn"], ["r1"]),
        n("Split", ["r1", "split"], ["s1", "s2"], axis=1),
        n("Conv", ["s1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=1),
        n("MaxPool", ["c2"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Resize", ["p1", "", "scales"], ["up"], mode="nearest"),
        n("Concat", ["up", "s2"], ["cat"], axis=1),
        n("GlobalAveragePool", ["cat"], ["g"]),
        n("Flatten", ["g"], ["flat"], axis=1),
        n("Gemm", ["flat", "fc"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, size, size])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 5])]
    return _model(nodes, inputs, outputs, inits, opset=13)


SEED_MODELS = {"attention_block": attention_block, "small_cnn": small_cnn}


def write_seed_models(folder):
    """Saves every seed model into folder; returns their paths."""
    import os
    paths = []
    for name, build in SEED_MODELS.items():
        path = os.path.join(folder, f"{name}.onnx")
        onnx.save(build(), path)
        paths.append(path)
    return paths
