#!/usr/bin/env python3
"""Writes the main job's default model: a small image classifier (Conv+BN+Relu blocks,
pooling, Gemm, Softmax) with fixed-seed random weights, built with the onnx package."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build():
    rng = np.random.default_rng(2026)
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv_block(x, c_in, c_out, idx, stride):
        w = const(f"conv{idx}.w", rng.normal(0, (2.0 / (c_in * 9)) ** 0.5, (c_out, c_in, 3, 3)))
        b = const(f"conv{idx}.b", rng.normal(0, 0.01, c_out))
        nodes.append(helper.make_node("Conv", [x, w, b], [f"conv{idx}"], name=f"conv{idx}", kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1], strides=[stride, stride]))
        scale = const(f"bn{idx}.scale", rng.uniform(0.8, 1.2, c_out))
        bias = const(f"bn{idx}.bias", rng.normal(0, 0.1, c_out))
        mean = const(f"bn{idx}.mean", rng.normal(0, 0.1, c_out))
        var = const(f"bn{idx}.var", rng.uniform(0.5, 1.5, c_out))
        nodes.append(helper.make_node("BatchNormalization", [f"conv{idx}", scale, bias, mean, var], [f"bn{idx}"],
                                      name=f"bn{idx}", epsilon=1e-5))
        nodes.append(helper.make_node("Relu", [f"bn{idx}"], [f"relu{idx}"], name=f"relu{idx}"))
        return f"relu{idx}"

    x = conv_block("image", 3, 16, 1, 2)
    x = conv_block(x, 16, 32, 2, 2)
    x = conv_block(x, 32, 64, 3, 2)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="pool"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten", axis=1))
    w = const("fc.w", rng.normal(0, 0.1, (10, 64)))
    b = const("fc.b", rng.normal(0, 0.01, 10))
    nodes.append(helper.make_node("Gemm", ["flat", w, b], ["logits"], name="fc", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=-1))
    graph = helper.make_graph(
        nodes, "onyx_default_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 64, 64])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])], inits)
    model = helper.make_model(graph, producer_name="onyx scripts/make_default_model.py",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "default_model.onnx"
    onnx.save(build(), out)
    print(f"wrote {out}")
