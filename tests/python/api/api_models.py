"""Small ONNX models for the Python API tests, built with onnx.helper (IR version from conftest)."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper


def model_bytes(nodes, inputs, outputs, initializers=(), opsets=(("", 18),), **props):
    graph = helper.make_graph(nodes, props.pop("graph_name", "g"), inputs, outputs, list(initializers),
                              doc_string=props.pop("graph_doc", ""))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets], **props)
    return model.SerializeToString()


def relu_model(**props):
    """y = Relu(x), x: float[N, 3]."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])
    return model_bytes([helper.make_node("Relu", ["x"], ["y"], name="relu")], [x], [y], **props)


def identity_model(elem_type, opset=21):
    x = helper.make_tensor_value_info("x", elem_type, None)
    y = helper.make_tensor_value_info("y", elem_type, None)
    return model_bytes([helper.make_node("Identity", ["x"], ["y"])], [x], [y], opsets=(("", opset),))


def two_output_model():
    """sum = a + b, prod = a * b over float[2, 3]; w is an overridable initializer added to sum."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [3])
    outs = [helper.make_tensor_value_info("sum", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("prod", TensorProto.FLOAT, [2, 3])]
    nodes = [helper.make_node("Add", ["a", "b"], ["ab"], name="add"),
             helper.make_node("Add", ["ab", "w"], ["sum"], name="add_w"),
             helper.make_node("Mul", ["a", "b"], ["prod"], name="mul")]
    init = numpy_helper.from_array(np.array([10, 20, 30], np.float32), "w")
    return model_bytes(nodes, [a, b, w], outs, [init])


def matmul_chain_model(n=512, depth=24):
    """x @ W repeated `depth` times (W = I / 1): slow enough to watch threads, result equals x."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n])
    w = numpy_helper.from_array(np.eye(n, dtype=np.float32), "w")
    nodes, prev = [], "x"
    for i in range(depth):
        out = "y" if i == depth - 1 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [prev, "w"], [out], name=f"mm{i}"))
        prev = out
    return model_bytes(nodes, [x], [y], [w])


def sequence_model():
    """n = SequenceLength(s); parts = SplitToSequence(x, axis 0)."""
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    return model_bytes(
        [helper.make_node("SequenceLength", ["s"], ["n"]), helper.make_node("SplitToSequence", ["x"], ["parts"], axis=0)],
        [helper.make_value_info("s", seq), helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("n", TensorProto.INT64, []), helper.make_value_info("parts", seq)])


def map_model():
    """v = DictVectorizer(m) over keys 1, 2, 3; z = ZipMap(p) with labels 10, 20."""
    map_type = helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    return model_bytes(
        [helper.make_node("DictVectorizer", ["m"], ["v"], domain="ai.onnx.ml", int64_vocabulary=[1, 2, 3]),
         helper.make_node("ZipMap", ["p"], ["z"], domain="ai.onnx.ml", classlabels_int64s=[10, 20])],
        [helper.make_value_info("m", map_type), helper.make_tensor_value_info("p", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, None),
         helper.make_value_info("z", helper.make_sequence_type_proto(map_type))],
        opsets=(("", 18), ("ai.onnx.ml", 3)))


def optional_model():
    """h = OptionalHasElement(o); oo = Optional(x)."""
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    return model_bytes(
        [helper.make_node("OptionalHasElement", ["o"], ["h"]), helper.make_node("Optional", ["x"], ["oo"])],
        [helper.make_value_info("o", opt), helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("h", TensorProto.BOOL, []), helper.make_value_info("oo", opt)])


def conv_relu_model():
    """y = Relu(Conv(x)): ConvActivationFusion makes it one FusedConv."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.ones((4, 2, 3, 3), np.float32) * 0.1, "w")
    b = numpy_helper.from_array(np.zeros(4, np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return model_bytes(nodes, [x], [y], [w, b])
