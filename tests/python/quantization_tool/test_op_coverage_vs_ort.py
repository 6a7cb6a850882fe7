"""onyx.quantization quantizes the ops ONNX Runtime 1.31.1's quantize_static quantizes, the way it
does: for each op a tiny float model goes through both quantizers with the same calibration
feeds and options (QDQ and QOperator, QInt8 and QUInt8 activations), and
  1. the structure is the same: the same float tensors get quantized (QuantizeLinear inputs and
     DequantizeLinear outputs of activations), the same of them share scale and zero point, the
     same weights are stored quantized (those quantized per tensor with the same scale, zero point
     and codes), and the same ops read 8-bit inputs; compared by the model's own tensor names and
     op types, never by the names the quantizers generate;
  2. ONNX Runtime and Onyx agree on the model onyx.quantization wrote: its integer tensors
     exactly, its float outputs within one quantization step of their scale."""
import collections

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import qt_models as qm
from onyx_harness import require_ort, run_onyx, run_ort, save_model
from onyx.quantization import QuantFormat, QuantType
from onyx.quantization.quantize import static_quantize

FLOAT, INT64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
EIGHT_BIT = (TensorProto.INT8, TensorProto.UINT8)
X_SHAPE = [1, 4, 8, 8]


def _arr(a, name, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(a, dtype), name)


def _net(nodes, inits=(), outputs=(("y", FLOAT),), extra_inputs=(), opset=13, seed=0):
    """x[1,4,8,8] -> Conv(W, B) -> c -> `nodes`. Every model starts with a quantized Conv, so the
    ops after it see a quantized input as they would in a real network."""
    rng = np.random.default_rng(seed)
    conv = [helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=[1, 1, 1, 1])]
    weights = [_arr(rng.normal(size=(4, 4, 3, 3)) / 6, "W"), _arr(rng.normal(size=4) * 0.1, "B")]
    inputs = [helper.make_tensor_value_info("x", FLOAT, X_SHAPE)]
    inputs += [helper.make_tensor_value_info(n, t, s) for n, t, s in extra_inputs]
    graph = helper.make_graph(conv + list(nodes), "op_coverage", inputs,
                              [helper.make_tensor_value_info(n, t, None) for n, t in outputs], weights + list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    inferred = onnx.shape_inference.infer_shapes(model).graph.output
    del model.graph.output[:]  # with the shapes shape inference finds, which the checker wants
    model.graph.output.extend(inferred)
    return model


def _node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, name=op.lower(), **attrs)


def _ints(values, name):
    return _arr(values, name, np.int64)


def _weights(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s).astype(np.float32) * 0.5 for s in shapes]


def slice_net():
    return _net([_node("Slice", ["c", "st", "en", "ax"], ["y"])],
                [_ints([2], "st"), _ints([6], "en"), _ints([2], "ax")])


def slice_of_inputs_net():
    """Slices of x, which the Conv before them quantized, and of z, which nothing quantizes."""
    return _net([helper.make_node("Slice", ["x", "st", "en", "ax"], ["y"], name="slice_x"),
                 helper.make_node("Slice", ["z", "st", "en", "ax"], ["y2"], name="slice_z"),
                 helper.make_node("Mul", ["y", "y"], ["y3"], name="mul")],
                [_ints([2], "st"), _ints([5], "en"), _ints([2], "ax")],
                outputs=[("y2", FLOAT), ("y3", FLOAT)], extra_inputs=[("z", FLOAT, X_SHAPE)])


def resize_net(mode):
    return _net([_node("Resize", ["c", "", "sc"], ["y"], mode=mode)], [_arr([1, 1, 2, 2], "sc")])


def pad_net(mode="constant", value=None):
    inputs = ["c", "pads"] + (["cv"] if value is not None else [])
    inits = [_ints([0, 0, 1, 2, 0, 0, 2, 1], "pads")] + ([_arr(value, "cv")] if value is not None else [])
    return _net([_node("Pad", inputs, ["y"], mode=mode)], inits)


def pad_computed_value_net():
    """Pad with a padding value fed at run time (a graph input)."""
    return _net([_node("Pad", ["c", "pads", "v"], ["y"])], [_ints([0, 0, 1, 1, 0, 0, 1, 1], "pads")],
                extra_inputs=[("v", FLOAT, [])])


def pad_of_input_net():
    """Pad reads the graph input: QDQ quantizes it anyway, QOperator leaves the Pad float."""
    (w,) = _weights(3, (4, 4, 1, 1))
    return _net([helper.make_node("Pad", ["x", "pads"], ["p"], name="pad", mode="reflect"),
                 helper.make_node("Conv", ["p", "W2"], ["y"], name="conv2")],
                [_ints([0, 0, 1, 1, 0, 0, 1, 1], "pads"), _arr(w, "W2")])


def split_net():
    return _net([_node("Split", ["c"], ["y1", "y2"], axis=1)], outputs=[("y1", FLOAT), ("y2", FLOAT)])


def split_of_input_net():
    """Split of the graph input, before any quantized node: its input is quantized anyway."""
    return _net([helper.make_node("Split", ["z"], ["z1", "z2"], name="split", axis=1),
                 helper.make_node("Add", ["z1", "c"], ["y"], name="add")],
                outputs=[("y", FLOAT), ("z2", FLOAT)], extra_inputs=[("z", FLOAT, [1, 8, 8, 8])])


def topk_net():
    return _net([_node("TopK", ["c", "k"], ["y", "idx"], axis=-1)], [_ints([3], "k")],
                outputs=[("y", FLOAT), ("idx", INT64)])


def average_pool_net():
    return _net([_node("AveragePool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2])])


def gather_net():
    return _net([_node("Gather", ["c", "gi"], ["y"], axis=1)], [_ints([3, 0, 2], "gi")])


def gather_elements_net():
    idx = np.random.default_rng(4).integers(0, 4, size=(1, 2, 8, 8))
    return _net([_node("GatherElements", ["c", "gi"], ["y"], axis=1)], [_ints(idx, "gi")])


def where_net(first="c"):
    """Where(cond, first, Conv2(x)); first = z (a graph input nothing quantizes) leaves it float."""
    (w,) = _weights(5, (4, 4, 1, 1))
    extra = [("cond", BOOL, X_SHAPE)] + ([("z", FLOAT, X_SHAPE)] if first == "z" else [])
    return _net([helper.make_node("Conv", ["x", "W2"], ["c2"], name="conv2"),
                 _node("Where", ["cond", first, "c2"], ["y"])], [_arr(w, "W2")], extra_inputs=extra)


def conv_transpose_net():
    wt, bt = _weights(6, (4, 3, 2, 2), (3,))
    return _net([_node("ConvTranspose", ["c", "WT", "BT"], ["y"], strides=[2, 2])], [_arr(wt, "WT"), _arr(bt, "BT")])


def norm_net(op):
    g, b, mean = _weights(7, (4,), (4,), (4,))
    g, var = np.abs(g) + 0.5, np.abs(mean) + 0.5
    if op == "LayerNormalization":
        g, b = np.abs(_weights(8, (8,))[0]) + 0.5, _weights(9, (8,))[0]
        return _net([_node(op, ["c", "g", "b"], ["y"], axis=-1)], [_arr(g, "g"), _arr(b, "b")], opset=17)
    extra = [_arr(mean, "mean"), _arr(var, "var")] if op == "BatchNormalization" else []
    names = ["c", "g", "b"] + [e.name for e in extra]
    return _net([_node(op, names, ["y"])], [_arr(g, "g"), _arr(b, "b")] + extra)


def pool_relu_net():
    return _net([_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2]), _node("Relu", ["p"], ["y"])])


def old_opset_net():
    """Opset 10: MaxPool (8-bit from opset 12) and Resize (from 11) stay float; QDQ's Pad reads its
    padding value from the attribute."""
    return _net([_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2]),
                 _node("Resize", ["p", "sc"], ["r"], mode="nearest"),
                 _node("Pad", ["r"], ["y"], pads=[0, 0, 1, 1, 0, 0, 1, 1])], [_arr([1, 1, 2, 2], "sc")], opset=10)


def argmax_net(data="c"):
    """ArgMax of the Conv's output, or of z, a graph input nothing else reads."""
    extra = [("z", FLOAT, X_SHAPE)] if data == "z" else []
    return _net([_node("ArgMax", [data], ["y"], axis=1)], outputs=[("y", INT64)] + ([("c", FLOAT)] if extra else []),
                extra_inputs=extra)


def global_average_pool_net():
    """GlobalAveragePool of a float op's output: QOperator quantizes it after a quantized node only."""
    return _net([_node("HardSigmoid", ["c"], ["h"]), _node("GlobalAveragePool", ["h"], ["y"])])


def cumsum_net():
    return _net([_node("CumSum", ["c", "ax"], ["y"])], [_ints(3, "ax")])


def constant_operands_net():
    """Add, Mul and Concat with a constant operand, each range off centre (so that symmetric and
    asymmetric parameters differ)."""
    rng = np.random.default_rng(13)
    add, mul = rng.uniform(-0.2, 1.0, (1, 4, 1, 1)), rng.uniform(0.3, 1.5, (1, 4, 1, 1))
    cat = rng.normal(size=(1, 2, 8, 8)) * 0.5 + 0.3
    return _net([_node("Add", ["c", "ka"], ["a"]), _node("Mul", ["a", "km"], ["m"]),
                 _node("Concat", ["m", "kc"], ["y"], axis=1)], [_arr(add, "ka"), _arr(mul, "km"), _arr(cat, "kc")])


def split_relu_net():
    """Split into three: Relu on the first output, Clip on the third (both folded into their
    output in QDQ), and a Relu on the second, which is a graph output too (not folded)."""
    nodes = [_node("Split", ["c", "sp"], ["s1", "s2", "s3"], axis=1), _node("Relu", ["s1"], ["y1"]),
             helper.make_node("Relu", ["s2"], ["y2"], name="relu2"), _node("Clip", ["s3", "lo", "hi"], ["y3"])]
    return _net(nodes, [_ints([1, 2, 1], "sp"), _arr(-0.3, "lo"), _arr(0.4, "hi")],
                outputs=[("y1", FLOAT), ("s2", FLOAT), ("y2", FLOAT), ("y3", FLOAT)])


def where_constant_net():
    """Where(cond, a constant, Conv2(x)): the constant is stored in the activation type."""
    (w,) = _weights(5, (4, 4, 1, 1))
    k = np.random.default_rng(14).uniform(-0.1, 0.8, (1, 4, 1, 1))
    nodes = [helper.make_node("Conv", ["x", "W2"], ["c2"], name="conv2"), _node("Where", ["cond", "k", "c2"], ["y"])]
    return _net(nodes, [_arr(w, "W2"), _arr(k, "k")], extra_inputs=[("cond", BOOL, X_SHAPE)])


QDQ, QOP = "QDQ", "QOperator"
FORCE = {"extra_options": {"ForceQuantizeNoInputCheck": True}}
# case: (model builder, formats, quantize_static keyword arguments; weight_type by name)
CASES = {
    "slice": (slice_net, (QDQ, QOP), {}),
    "slice_of_inputs": (slice_of_inputs_net, (QDQ, QOP), {}),
    "resize_nearest": (lambda: resize_net("nearest"), (QDQ, QOP), {}),
    "resize_linear": (lambda: resize_net("linear"), (QDQ, QOP), {}),  # see TIES
    "pad_zero": (pad_net, (QDQ, QOP), {}),
    "pad_value": (lambda: pad_net(value=5.0), (QDQ, QOP), {}),
    "pad_reflect": (lambda: pad_net("reflect"), (QDQ, QOP), {}),
    "pad_computed_value": (pad_computed_value_net, (QDQ, QOP), {}),
    "pad_of_input": (pad_of_input_net, (QDQ, QOP), {}),
    "split": (split_net, (QDQ, QOP), {}),
    "split_of_input": (split_of_input_net, (QDQ, QOP), {}),
    "topk": (topk_net, (QDQ, QOP), {}),
    "average_pool": (average_pool_net, (QDQ, QOP), {}),
    "gather": (gather_net, (QDQ, QOP), {}),
    "gather_elements": (gather_elements_net, (QDQ, QOP), {}),
    # QOperator Where: ONNX Runtime's quantizer fails on it without ForceQuantizeNoInputCheck (see
    # test_qoperator_where_unforced_stays_float) and writes com.microsoft QLinearWhere with it
    "where": (where_net, (QDQ,), {}),
    "where_unquantized_input": (lambda: where_net("z"), (QDQ,), {}),
    "where_forced": (lambda: where_net("z"), (QDQ, QOP), FORCE),
    "where_both_quantized_forced": (where_net, (QOP,), FORCE),
    "where_constant": (where_constant_net, (QDQ, QOP), FORCE),
    "where_constant_reduce_range": (where_constant_net, (QDQ,), {"reduce_range": True, **FORCE}),
    "conv_transpose": (conv_transpose_net, (QDQ, QOP), {}),
    "conv_transpose_per_channel": (conv_transpose_net, (QDQ,), {"per_channel": True}),
    "layer_norm": (lambda: norm_net("LayerNormalization"), (QDQ, QOP), {}),
    "layer_norm_per_channel": (lambda: norm_net("LayerNormalization"), (QDQ,), {"per_channel": True}),
    "layer_norm_axis_0": (lambda: norm_net("LayerNormalization"), (QDQ,),
                          {"per_channel": True, "extra_options": {"QDQOpTypePerChannelSupportToAxis": {
                              "LayerNormalization": 0}}}),
    "instance_norm": (lambda: norm_net("InstanceNormalization"), (QDQ, QOP), {}),
    "batch_norm": (lambda: norm_net("BatchNormalization"), (QDQ, QOP), {}),
    "argmax": (argmax_net, (QDQ, QOP), {}),
    "argmax_of_input": (lambda: argmax_net("z"), (QDQ, QOP), {}),
    # QDQ folds the Relu into the MaxPool, whose output takes the Relu's range; QOperator: ONNX
    # Runtime drops the Relu and lets the MaxPool's negative values through, Onyx keeps it float
    "max_pool_relu": (pool_relu_net, (QDQ,), {}),
    "old_opset": (old_opset_net, (QDQ, QOP), {}),
    "global_average_pool_of_float": (global_average_pool_net, (QDQ, QOP), {}),
    "cumsum": (cumsum_net, (QDQ, QOP), {}),
    # constant operands: QOperator stores them symmetric where the weight setting says so and the
    # activation and weight types agree; QDQ applies reduce_range to them, QOperator does not
    "constant_operands": (constant_operands_net, (QDQ, QOP), {}),
    "constant_operands_reduce_range": (constant_operands_net, (QDQ, QOP), {"reduce_range": True}),
    "constant_operands_uint8_symmetric_weights": (constant_operands_net, (QDQ, QOP), {
        "weight_type": "QUInt8", "extra_options": {"WeightSymmetric": True}}),
    "pad_value_reduce_range": (lambda: pad_net(value=0.5), (QDQ, QOP), {"reduce_range": True}),
    # QOperator: ONNX Runtime drops the Relu after the Split unclamped, Onyx keeps it float
    "split_relu": (split_relu_net, (QDQ,), {}),
}
# QDQ linear Resize runs in float between DQ and Q: 2x upsampling puts values exactly half way
# between two steps, and ONNX Runtime's and Onyx's float interpolation round a few of them to
# different sides (unoptimized too), so those 8-bit values may differ by one.
TIES = {("resize_linear", QDQ)}
# ONNX Runtime's quantizer takes uint8 weights with uint8 activations only
ACTS = {"constant_operands_uint8_symmetric_weights": ("QUInt8",)}
PARAMS = [(case, fmt, act) for case, (_, fmts, _) in CASES.items() for fmt in fmts
          for act in ACTS.get(case, ("QInt8", "QUInt8"))]


def _feeds(model, count, seed):
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(count):
        feed = {}
        for vi in model.graph.input:
            shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            if vi.type.tensor_type.elem_type == BOOL:
                feed[vi.name] = rng.random(shape) > 0.5
            else:
                feed[vi.name] = rng.normal(size=shape).astype(np.float32)
        feeds.append(feed)
    return feeds


def _typed(kwargs, quant_type):
    """kwargs with a weight_type given by name as that quantizer's QuantType."""
    if "weight_type" not in kwargs:
        return kwargs
    return {**kwargs, "weight_type": getattr(quant_type, kwargs["weight_type"])}


def _ort_quantize(model, feeds, fmt, act, kwargs):
    require_ort()
    from onnxruntime import quantization as rq
    src = save_model(model, "float.onnx")
    dst = src.replace("float.onnx", "ort_quantized.onnx")
    rq.quantize_static(src, dst, qm.ListReader(feeds), quant_format=getattr(rq.QuantFormat, fmt),
                       activation_type=getattr(rq.QuantType, act), **_typed(kwargs, rq.QuantType))
    return onnx.load(dst)


# --- structure -----------------------------------------------------------------------------

def _arrays(model):
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def _tensor_names(model):
    g = model.graph
    return ({t for n in g.node for t in list(n.input) + list(n.output)} | {i.name for i in g.input}
            | {i.name for i in g.initializer})


def quantized_tensors(model, float_model):
    """{float tensor of float_model: (scale, zero point)} for every activation the model quantizes:
    QuantizeLinear inputs and DequantizeLinear outputs (a renamed producer output is traced to
    the DequantizeLinear that writes the original name)."""
    inits, original = _arrays(model), _tensor_names(float_model)
    readers = collections.defaultdict(list)
    for n in model.graph.node:
        for t in n.input:
            readers[t].append(n)
    found = {}

    def note(t, n):
        s, z = inits[n.input[1]], inits[n.input[2]]
        found[t] = (s.tobytes(), z.tobytes(), z.dtype.str)

    for n in model.graph.node:
        if n.op_type == "QuantizeLinear" and n.input[0] not in inits:
            t = n.input[0]
            if t not in original:
                t = next(d.output[0] for d in readers[n.output[0]] if d.op_type == "DequantizeLinear")
            note(t, n)
        if n.op_type == "DequantizeLinear" and n.input[0] not in inits and n.output[0] in original:
            note(n.output[0], n)
    return found


def stored_quantized(model, float_model):
    """The float initializers of float_model the model no longer reads in float."""
    read = {t for n in model.graph.node for t in n.input}
    inits = {i.name for i in model.graph.initializer}
    return {i.name for i in float_model.graph.initializer
            if i.data_type == FLOAT and not (i.name in inits and i.name in read)}


def constant_params(model, float_model):
    """{float initializer of float_model: {(scale, zero point, codes)}} for the constants stored
    quantized per tensor, found by value, not by name: an 8-bit initializer followed in a node's
    inputs by a float scale and an 8-bit zero point (a DequantizeLinear's inputs, or a triple of
    a QLinear op's) that dequantize it to within half a step of the float constant."""
    inits = {i.name: i for i in model.graph.initializer}
    floats = {i.name: numpy_helper.to_array(i) for i in float_model.graph.initializer if i.data_type == FLOAT}
    found = collections.defaultdict(set)
    for n in model.graph.node:
        for k in range(len(n.input) - 2):
            q, s, z = (inits.get(t) for t in n.input[k:k + 3])
            if not (q and s and z and q.data_type in EIGHT_BIT and s.data_type == FLOAT and z.data_type == q.data_type):
                continue
            qa, sa, za = (numpy_helper.to_array(t) for t in (q, s, z))
            if sa.size != 1 or za.size != 1:
                continue  # per channel: weights only, not compared here
            real = (qa.astype(np.float64) - float(za)) * float(sa)
            for name, f in floats.items():
                if f.shape == qa.shape and np.all(np.abs(real - f) <= float(sa) * 0.5001):
                    found[name].add((sa.tobytes(), za.tobytes(), za.dtype.str, qa.tobytes()))
    return dict(found)


def op_signature(model):
    """Counter of (op type, which inputs are 8-bit tensors)."""
    eight = {i.name for i in model.graph.initializer if i.data_type in (TensorProto.INT8, TensorProto.UINT8)}
    sig = collections.Counter()
    for n in model.graph.node:
        sig[(n.op_type, tuple(t in eight for t in n.input))] += 1
        if n.op_type == "QuantizeLinear" or n.op_type.startswith("QLinear") or n.op_type == "QGemm":
            eight.update(n.output)
        elif n.op_type not in ("DequantizeLinear", "ArgMax") and n.input and n.input[0] in eight:
            eight.update(n.output[:1] if n.op_type == "TopK" else n.output)
    return sig


def sharing(params):
    """Which quantized tensors carry equal scale and zero point: {tensor: the set of its equals}."""
    return {a: {b for b in params if params[b] == params[a]} for a in params}


def assert_same_structure(ours, theirs, float_model):
    q_ours, q_theirs = quantized_tensors(ours, float_model), quantized_tensors(theirs, float_model)
    assert sorted(q_ours) == sorted(q_theirs), \
        f"quantized activations: only Onyx {sorted(set(q_ours) - set(q_theirs))}, only ONNX Runtime " \
        f"{sorted(set(q_theirs) - set(q_ours))}"
    s_ours, s_theirs = sharing(q_ours), sharing(q_theirs)
    assert s_ours == s_theirs, "scale/zero-point sharing differs: " + "; ".join(
        f"{t}: Onyx {sorted(s_ours[t])}, ONNX Runtime {sorted(s_theirs[t])}"
        for t in s_ours if s_ours[t] != s_theirs[t])
    w_ours, w_theirs = stored_quantized(ours, float_model), stored_quantized(theirs, float_model)
    assert w_ours == w_theirs, f"quantized weights: Onyx {sorted(w_ours)}, ONNX Runtime {sorted(w_theirs)}"
    c_ours, c_theirs = constant_params(ours, float_model), constant_params(theirs, float_model)
    assert c_ours == c_theirs, "constants quantized otherwise (scale, zero point or codes): " + ", ".join(
        sorted(t for t in set(c_ours) | set(c_theirs) if c_ours.get(t) != c_theirs.get(t)))
    sig_ours, sig_theirs = op_signature(ours), op_signature(theirs)
    assert sig_ours == sig_theirs, \
        f"ops (with their 8-bit inputs): only Onyx {dict(sig_ours - sig_theirs)}, only ONNX Runtime " \
        f"{dict(sig_theirs - sig_ours)}"


# --- ONNX Runtime and Onyx on the model onyx.quantization wrote ----------------------------

def integer_tensors(result, act_type):
    """The model's 8-bit activations that are no graph output: QuantizeLinear outputs and the
    QLinear / direct ops' 8-bit outputs (QOperator)."""
    model = result.model
    inits = {i.name for i in model.graph.initializer}
    names = {n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] not in inits}
    names |= {q for q, _, _ in result.plan.qnames.values()}
    outputs = {o.name for o in model.graph.output}
    return {t: act_type for t in sorted(names - outputs)}


def output_steps(model):
    inits = _arrays(model)
    return {n.output[0]: float(np.max(inits[n.input[1]])) for n in model.graph.node
            if n.op_type == "DequantizeLinear" and n.output[0] in {o.name for o in model.graph.output}}


def assert_runtimes_agree(result, feeds, act_type, ties=False):
    onnx.checker.check_model(result.model, full_check=True)
    model = onnx.ModelProto()
    model.CopyFrom(result.model)
    ints = integer_tensors(result, act_type)
    assert ints, "no integer tensor to compare"
    for name, elem in ints.items():
        model.graph.output.append(helper.make_tensor_value_info(name, elem, None))
    steps = output_steps(model)
    path = save_model(model, "onyx_quantized_exposed.onnx")
    for feed in feeds:
        for o, e, g in zip(model.graph.output, run_ort(path, feed), run_onyx(path, feed)):
            assert e.shape == g.shape and e.dtype == g.dtype, o.name
            if e.dtype.kind == "f":  # one step of a dequantized output; float rounding of a float op's
                bound = steps[o.name] * 1.0001 if o.name in steps else 1e-5 * max(1.0, float(np.max(np.abs(e))))
                worst = float(np.max(np.abs(e.astype(np.float64) - g))) if e.size else 0.0
                assert worst <= bound, f"{o.name}: runtimes differ by {worst} (> {bound})"
            else:
                differ = int(np.count_nonzero(e != g))
                if ties and o.name in ints:
                    gap = int(np.max(np.abs(e.astype(np.int64) - g))) if e.size else 0
                    assert gap <= 1 and differ <= e.size // 50, f"{o.name}: {differ} values differ, by up to {gap}"
                else:
                    assert differ == 0, f"{o.name}: {differ} of {e.size} values differ from ONNX Runtime's"


@pytest.mark.parametrize("case,fmt,act", PARAMS, ids=[f"{c}-{f}-{a}" for c, f, a in PARAMS])
def test_op_coverage_vs_ort(case, fmt, act):
    build, _, kwargs = CASES[case]
    model = build()
    feeds = _feeds(model, 4, seed=11)
    theirs = _ort_quantize(model, feeds, fmt, act, kwargs)
    result = static_quantize(model, qm.ListReader(feeds), quant_format=getattr(QuantFormat, fmt),
                             activation_type=getattr(QuantType, act), **_typed(kwargs, QuantType))
    assert_same_structure(result.model, theirs, model)
    assert_runtimes_agree(result, _feeds(model, 2, seed=12), result.plan.options.activation_type,
                          ties=(case, fmt) in TIES)


@pytest.mark.parametrize("act", ["QInt8", "QUInt8"])
def test_qoperator_where_unforced_stays_float(act):
    """Without ForceQuantizeNoInputCheck ONNX Runtime's QOperator quantizer keeps the Where float
    but drops the DequantizeLinears of its quantized inputs, and fails ("Invalid model with
    unknown initializers/tensors"); onyx.quantization leaves it float, fed by dequantized inputs."""
    model = where_net()
    feeds = _feeds(model, 4, seed=11)
    with pytest.raises(RuntimeError, match="unknown initializers"):
        _ort_quantize(model, feeds, QOP, act, {})
    result = static_quantize(model, qm.ListReader(feeds), quant_format=QuantFormat.QOperator,
                             activation_type=getattr(QuantType, act))
    assert [n.op_type for n in result.model.graph.node].count("Where") == 1
    assert any(name == "where" and "ForceQuantizeNoInputCheck" in why for name, _, why in result.plan.skipped)
    assert_runtimes_agree(result, _feeds(model, 2, seed=12), result.plan.options.activation_type)


def _assert_relu_kept_float(model, op):
    result = static_quantize(model, qm.ListReader(_feeds(model, 4, seed=11)), quant_format=QuantFormat.QOperator)
    ops = [n.op_type for n in result.model.graph.node]
    assert "Relu" in ops and op in ops
    feed = _feeds(model, 1, seed=12)[0]
    path = save_model(result.model, "relu_kept.onnx")
    assert float(np.min(run_onyx(path, feed)[0])) >= 0.0
    assert_runtimes_agree(result, [feed], result.plan.options.activation_type)


def test_qoperator_relu_after_max_pool_stays_float():
    """ONNX Runtime's QOperator drops a Relu after a MaxPool and lets its negative values through;
    onyx.quantization keeps the Relu, in float after the MaxPool's DequantizeLinear."""
    _assert_relu_kept_float(pool_relu_net(), "MaxPool")


def test_qoperator_relu_after_split_stays_float():
    """The same after a Split on the 8-bit tensor (QDQ folds these Relus into the Split's outputs)."""
    _assert_relu_kept_float(split_relu_net(), "Split")


@pytest.mark.parametrize("act", ["QInt8", "QUInt8"])
def test_qdq_activations_folded_into_split_outputs_change_no_value(act):
    """DQ -> Split -> Q at the Relu's / Clip's own range saturates where the activation clamped:
    Onyx's outputs equal those of the same model with the activations kept (QDQKeepRemovableActivations)."""
    model = split_relu_net()
    feeds = _feeds(model, 4, seed=11)
    outputs = []
    for keep in (False, True):
        result = static_quantize(model, qm.ListReader(feeds), activation_type=getattr(QuantType, act),
                                 extra_options={"QDQKeepRemovableActivations": keep})
        relus = [n.op_type for n in result.model.graph.node].count("Relu")
        assert relus == (2 if keep else 1)  # relu2 reads a graph output: never folded
        path = save_model(result.model, f"split_relu_keep_{keep}.onnx")
        outputs.append([run_onyx(path, feed) for feed in _feeds(model, 8, seed=99)])
    for folded, kept in zip(*outputs):
        for a, b in zip(folded, kept):
            np.testing.assert_array_equal(a, b)
