"""Small float models built with onnx.helper and quantized by ONNX Runtime's own tool
(onnxruntime.quantization.quantize_static in QDQ format, quantize_dynamic), for the QDQ fusion
tests and the QDQ benchmark: a CNN touching every QDQ rule of the convolutional family and a
transformer-ish block touching the matrix, Softmax and data-movement rules."""
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import ONYX_BIN, save_model

OPSET = 17


def _rng(seed):
    return np.random.default_rng(seed)


class _Inits:
    def __init__(self, seed):
        self.rng = _rng(seed)
        self.list = []

    def weight(self, name, *shape, scale=0.3):
        self.list.append(numpy_helper.from_array((self.rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def ints(self, name, values):
        self.list.append(numpy_helper.from_array(np.asarray(values, np.int64), name))
        return name


def cnn_float():
    """x[1,3,16,16] -> Conv+Relu -> MaxPool -> Conv -> Add(residual) -> Concat(with a 1x1 branch)
    -> AveragePool -> Conv -> LeakyRelu -> x*Sigmoid(x) -> GlobalAveragePool -> Flatten -> Gemm."""
    w = _Inits(1)
    n = helper.make_node
    nodes = [
        n("Conv", ["x", w.weight("w1", 8, 3, 3, 3), w.weight("b1", 8)], ["c1"], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p1", w.weight("w2", 8, 8, 3, 3), w.weight("b2", 8)], ["c2"], pads=[1, 1, 1, 1]),
        n("Add", ["c2", "p1"], ["a2"]),
        n("Conv", ["a2", w.weight("w3", 8, 8, 1, 1), w.weight("b3", 8)], ["c3"]),
        n("Concat", ["a2", "c3"], ["cat"], axis=1),
        n("AveragePool", ["cat"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["ap", w.weight("w4", 12, 16, 3, 3), w.weight("b4", 12)], ["c4"], pads=[1, 1, 1, 1]),
        n("LeakyRelu", ["c4"], ["l4"], alpha=0.1),
        n("Sigmoid", ["l4"], ["s4"]),
        n("Mul", ["l4", "s4"], ["m4"]),
        n("GlobalAveragePool", ["m4"], ["g"]),
        n("Flatten", ["g"], ["f"]),
        n("Gemm", ["f", w.weight("wg", 5, 12), w.weight("bg", 5)], ["y"], transB=1),
    ]
    graph = helper.make_graph(nodes, "qdq_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], w.list)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def cnn_feed(seed):
    return {"x": _rng(seed).standard_normal((1, 3, 16, 16)).astype(np.float32)}


SEQ, HIDDEN, HEADS, VOCAB = 8, 16, 2, 32


def transformer_float():
    """ids[1,8] -> Gather(embedding) -> Q/K/V MatMuls -> Reshape/Transpose to heads -> Q K^T ->
    Mul(scale) -> Softmax -> attn V -> Transpose/Reshape -> output MatMul + bias -> residual Add ->
    MLP (MatMul + bias, Sigmoid gate, MatMul + bias) -> residual Add."""
    w = _Inits(2)
    n = helper.make_node
    d = HIDDEN // HEADS
    heads = w.ints("heads_shape", [1, SEQ, HEADS, d])
    merged = w.ints("merged_shape", [1, SEQ, HIDDEN])
    w.list.append(numpy_helper.from_array(np.array(1.0 / np.sqrt(d), np.float32), "inv_sqrt_d"))
    nodes = [n("Gather", [w.weight("emb", VOCAB, HIDDEN, scale=1.0), "ids"], ["e"])]
    for t in "qkv":
        nodes += [n("MatMul", ["e", w.weight(f"w{t}", HIDDEN, HIDDEN)], [f"{t}0"]),
                  n("Reshape", [f"{t}0", heads], [f"{t}1"]),
                  n("Transpose", [f"{t}1"], [f"{t}2"], perm=[0, 2, 3, 1] if t == "k" else [0, 2, 1, 3])]
    nodes += [
        n("MatMul", ["q2", "k2"], ["qk"]),
        n("Mul", ["qk", "inv_sqrt_d"], ["qks"]),
        n("Softmax", ["qks"], ["p"], axis=-1),
        n("MatMul", ["p", "v2"], ["pv"]),
        n("Transpose", ["pv"], ["pvt"], perm=[0, 2, 1, 3]),
        n("Reshape", ["pvt", merged], ["att"]),
        n("MatMul", ["att", w.weight("wo", HIDDEN, HIDDEN)], ["o0"]),
        n("Add", ["o0", w.weight("bo", HIDDEN)], ["o1"]),
        n("Add", ["o1", "e"], ["h"]),
        n("MatMul", ["h", w.weight("w1", HIDDEN, 2 * HIDDEN)], ["f0"]),
        n("Add", ["f0", w.weight("b1", 2 * HIDDEN)], ["f1"]),
        n("Sigmoid", ["f1"], ["f2"]),
        n("Mul", ["f1", "f2"], ["f3"]),
        n("MatMul", ["f3", w.weight("w2", 2 * HIDDEN, HIDDEN)], ["f4"]),
        n("Add", ["f4", w.weight("b2", HIDDEN)], ["f5"]),
        n("Add", ["f5", "h"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "qdq_transformer", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, SEQ])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, SEQ, HIDDEN])], w.list)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def transformer_feed(seed):
    return {"ids": _rng(seed).integers(0, VOCAB, size=(1, SEQ)).astype(np.int64)}


class _Reader:
    """Calibration data for quantize_static."""

    def __init__(self, feed_fn, count=6):
        self.feeds = iter([feed_fn(100 + i) for i in range(count)])

    def get_next(self):
        return next(self.feeds, None)


def inverted_residual_block(c, e, h):
    """MobileNetV2's inverted-residual block on a [1, c, h, h] input: 1x1 expand to e channels +
    Clip, 3x3 depthwise + Clip, 1x1 project back to c, + the block's input (a Relu of x)."""
    rng = np.random.default_rng(11)
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
    nodes = [helper.make_node("Relu", ["x"], ["x0"])]  # a float input of both signs would do too

    def conv(name, src, cin, cout, k, group, act):
        w = rng.standard_normal((cout, cin // group, k, k)).astype(np.float32) * 0.3
        b = rng.standard_normal(cout).astype(np.float32) * 0.1
        inits.extend([numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")])
        nodes.append(helper.make_node("Conv", [src, name + "_w", name + "_b"], [name], kernel_shape=[k, k],
                                      pads=[k // 2] * 4, group=group))
        if not act:
            return name
        nodes.append(helper.make_node("Clip", [name, "lo", "hi"], [name + "_act"]))
        return name + "_act"

    y = conv("expand", "x0", c, e, 1, 1, True)
    y = conv("dw", y, e, e, 3, e, True)
    y = conv("project", y, e, c, 1, 1, False)
    nodes.append(helper.make_node("Add", [y, "x0"], ["y"]))
    graph = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def quantize_static_qdq(float_model, feed_fn, name, activation="QUInt8", per_channel=False, int_output=True):
    """Saves the float model, quantizes it to QDQ form and returns the quantized model's path.
    int_output: the integer value the final DequantizeLinear reads becomes a second graph output."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(_Reader, CalibrationDataReader):
        pass

    src = save_model(float_model, f"{name}_float.onnx")
    dst = src.replace("_float.onnx", ".onnx")
    quantize_static(src, dst, Reader(feed_fn), quant_format=QuantFormat.QDQ,
                    activation_type=getattr(QuantType, activation), weight_type=QuantType.QInt8,
                    per_channel=per_channel)
    model = onnx.load(dst)
    if int_output:
        out = model.graph.output[0].name
        final_dq = next(node for node in model.graph.node if out in node.output)
        assert final_dq.op_type == "DequantizeLinear"
        model.graph.output.append(helper.make_tensor_value_info(final_dq.input[0], _elem_type(activation), None))
        onnx.save(model, dst)
    return dst


def _elem_type(activation):
    return TensorProto.UINT8 if activation == "QUInt8" else TensorProto.INT8


def quantize_dynamic_matmul(name):
    """x[4,16] -> MatMul(W) + bias -> MatMul(W2), quantized by quantize_dynamic (int8 weights)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    w = _Inits(3)
    n = helper.make_node
    nodes = [n("MatMul", ["x", w.weight("w", 16, 24)], ["m"]), n("Add", ["m", w.weight("b", 24)], ["h"]),
             n("MatMul", ["h", w.weight("w2", 24, 8)], ["y"])]
    graph = helper.make_graph(nodes, "dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], w.list)
    src = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]), f"{name}_float.onnx")
    dst = src.replace("_float.onnx", ".onnx")
    quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
    return dst


def dequantize_scale(model_path, output_name):
    """The scale of the DequantizeLinear that makes `output_name`."""
    model = onnx.load(model_path)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    node = next(n for n in model.graph.node if output_name in n.output)
    assert node.op_type == "DequantizeLinear"
    return float(inits[node.input[1]])


def onyx_optimize(model_path, *args):
    """Onyx's optimized model (the graph a session runs: level all, fused only into ops with
    kernels) as a ModelProto, with `onyx optimize`'s extra arguments."""
    out = model_path.replace(".onnx", "_onyx_opt.onnx")
    proc = subprocess.run([ONYX_BIN, "optimize", model_path, "-o", out, "--require-kernels", *args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"onyx optimize failed: {proc.stderr.strip()}")
    model = onnx.load(out)
    os.remove(out)
    return model


def op_counts(model):
    counts = {}
    for node in model.graph.node:
        key = (node.domain + "." if node.domain not in ("", "ai.onnx") else "") + node.op_type
        counts[key] = counts.get(key, 0) + 1
    return counts


def ort_op_counts(model_path):
    """Op counts of ONNX Runtime's own optimized graph (level extended: its QDQ fusions without
    the NHWC layout changes of level all), DequantizeLinear counted once per distinct inputs (ORT
    gives every reader of a shared DQ its own copy; Onyx keeps one)."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = model_path.replace(".onnx", "_ort_opt.onnx")
    ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    model = onnx.load(options.optimized_model_filepath)
    os.remove(options.optimized_model_filepath)
    counts = op_counts(model)
    dqs = {tuple(n.input) for n in model.graph.node if n.op_type == "DequantizeLinear"}
    if dqs:
        counts["DequantizeLinear"] = len(dqs)
    return counts
