"""Models with planted reasons for the explain tests: a Conv+BatchNormalization whose Conv output is
read twice or whose running statistics are read, and the bench BERT-tiny."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import bench_manifest, save_model


def conv_bn_model(name, conv_read_twice=False, stats_read=False):
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")]
    for n, v in [("scale", 1.5), ("bias", 0.1), ("mean", 0.2), ("var", 0.9)]:
        inits.append(numpy_helper.from_array(np.full(4, v, np.float32), n))
    bn_outputs = ["y", "running_mean", "running_var"] if stats_read else ["y"]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], bn_outputs, name="bn",
                              **({"training_mode": 1} if stats_read else {}))]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if conv_read_twice:
        nodes.append(helper.make_node("Relu", ["c"], ["side"], name="side"))
        outputs.append(helper.make_tensor_value_info("side", TensorProto.FLOAT, None))
    if stats_read:
        outputs.append(helper.make_tensor_value_info("running_mean", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              outputs, inits)
    return save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)], ir_version=8), name)


def misses(report, pattern):
    return [m for m in report["fusion_misses"] if m["pattern"] == pattern]


def bert_tiny():
    folder, models = bench_manifest()
    return f"{folder}/{models['bert_tiny']['file']}"
