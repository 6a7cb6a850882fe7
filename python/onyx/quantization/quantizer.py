"""The quantizer: decides which nodes and tensors to quantize (a plan), then writes the model in
QDQ form (QuantizeLinear/DequantizeLinear pairs around float ops), in QOperator form (QLinear*
ops and com.microsoft contrib ops on 8-bit tensors) or, for quantize_dynamic, with integer ops
fed by DynamicQuantizeLinear."""
import numpy as np

from onyx.quantization._onnx import onnx_module
from onyx.quantization.qparams import QParams, compute_qparams, quantize_array, quantize_bias, weight_qparams
from onyx.quantization.quant_types import QuantFormat

MS_DOMAIN = "com.microsoft"
FLOAT = 1
# Which ops are quantized and how follows ONNX Runtime 1.31's quantize_static (its QDQRegistry
# and QLinearOpsRegistry), which treats some ops differently per format.
# Direct ops: the (first) output keeps input 0's scale and zero point (they only move or pick
# values); quantized once input 0 is, or always with ForceQuantizeNoInputCheck.
DIRECT_OPS = {
    QuantFormat.QDQ: {"MaxPool", "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "AveragePool", "Slice",
                      "Resize", "TopK", "Gather", "GatherElements"},
    QuantFormat.QOperator: {"MaxPool", "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Resize"},
}
DIRECT_MIN_OPSET = {"MaxPool": 12, "Resize": 11}  # 8-bit tensors from these opsets
# Activations folded into the quantized output range of the node before them.
REMOVABLE_OPS = {"Relu", "Clip"}
NORM_OPS = {"LayerNormalization", "InstanceNormalization", "BatchNormalization"}
# Ops with their own output range: which inputs are quantized activations (None: all).
OWN_OUTPUT_OPS = {"Conv": [0], "Gemm": [0], "MatMul": [0, 1], "Add": [0, 1], "Mul": [0, 1], "Concat": None,
                  "AveragePool": [0], "GlobalAveragePool": [0], "Sigmoid": [0], "LeakyRelu": [0], "Softmax": [0],
                  "ConvTranspose": [0], "CumSum": [0], "Where": [1, 2], "ArgMax": [0],
                  **{op: [0] for op in NORM_OPS}}
OWN_OPS = {
    # QDQ: ArgMax's input only (its output is an index); AveragePool is a direct op there
    QuantFormat.QDQ: set(OWN_OUTPUT_OPS) - {"AveragePool"},
    QuantFormat.QOperator: {"Conv", "Gemm", "MatMul", "Add", "Mul", "Concat", "AveragePool", "GlobalAveragePool",
                            "Sigmoid", "LeakyRelu", "Softmax", "Where"},
}
# Split: input 0 always quantized, every output takes its parameters. Pad: QDQ quantizes its
# input always (the output shares its parameters when the padding adds no new value), QOperator
# pads the 8-bit tensor once it is quantized. ArgMax (QOperator) reads the 8-bit tensor.
# Gather from a constant table (an embedding): the table is stored 8-bit, the gathered rows
# dequantized after the Gather.
STATIC_OPS = (set(OWN_OUTPUT_OPS) | DIRECT_OPS[QuantFormat.QDQ] | DIRECT_OPS[QuantFormat.QOperator] | REMOVABLE_OPS
              | {"Split", "Pad"})
DYNAMIC_OPS = {"MatMul", "Conv", "Gather"}
QOP_NAMES = {"Conv": ("QLinearConv", ""), "MatMul": ("QLinearMatMul", ""), "Gemm": ("QGemm", MS_DOMAIN),
             "Add": ("QLinearAdd", MS_DOMAIN), "Mul": ("QLinearMul", MS_DOMAIN),
             "Concat": ("QLinearConcat", MS_DOMAIN), "AveragePool": ("QLinearAveragePool", MS_DOMAIN),
             "GlobalAveragePool": ("QLinearGlobalAveragePool", MS_DOMAIN),
             "Sigmoid": ("QLinearSigmoid", MS_DOMAIN), "LeakyRelu": ("QLinearLeakyRelu", MS_DOMAIN),
             "Softmax": ("QLinearSoftmax", MS_DOMAIN), "Where": ("QLinearWhere", MS_DOMAIN)}


class Options:
    """Everything the quantizer reads, already checked (see quantize.py for where each comes from)."""

    def __init__(self, **kw):
        self.quant_format = kw.get("quant_format", QuantFormat.QDQ)
        self.dynamic = kw.get("dynamic", False)
        self.op_types = kw.get("op_types")
        self.per_channel = kw.get("per_channel", False)
        self.reduce_range = kw.get("reduce_range", False)
        self.activation_type = kw.get("activation_type")
        self.weight_type = kw.get("weight_type")
        self.nodes_to_quantize = kw.get("nodes_to_quantize")
        self.nodes_to_exclude = set(kw.get("nodes_to_exclude") or ())
        self.activation_symmetric = kw.get("activation_symmetric", False)
        self.weight_symmetric = kw.get("weight_symmetric", True)
        self.force_quantize_no_input_check = kw.get("force_quantize_no_input_check", False)
        self.matmul_const_b_only = kw.get("matmul_const_b_only", False)
        self.add_qdq_pair_to_weight = kw.get("add_qdq_pair_to_weight", False)
        self.op_types_no_output = set(kw.get("op_types_no_output") or ())
        self.dedicated_qdq_pair = kw.get("dedicated_qdq_pair", False)
        self.per_channel_axis = dict(kw.get("per_channel_axis") or {})
        self.keep_removable = kw.get("keep_removable", False)
        self.quantize_bias = kw.get("quantize_bias", True)
        self.min_real_range = kw.get("min_real_range")


class NodePlan:
    """One node to quantize: the roles of its inputs and the tensors whose quantized form it writes."""

    def __init__(self, node, kind):
        self.node = node
        # "own", "direct" (outputs share an input's parameters), "activation" (a kept Relu/Clip),
        # "reader" (reads an 8-bit input, writes no quantized output), "dynamic", "gather"
        self.kind = kind
        self.orig = onnx_module().NodeProto()
        self.orig.CopyFrom(node)  # the float node as it was (the writers edit `node`)
        self.inputs = {}  # input index -> "act" | "weight" | "bias" | "const"
        self.axis = None  # per-channel axis of the weight input
        self.outputs = list(node.output[:1]) if kind not in ("dynamic", "gather") else []
        self.folded = {}  # output tensor -> the Relu/Clip node folded into it (writing the output under its name)
        self.share = {}  # output -> the input whose scale and zero point it takes

    @property
    def name(self):
        return self.node.name

    @property
    def fused(self):
        """The Relu/Clip folded into the first output (the one the report measures), or None."""
        return self.folded.get(self.orig.output[0]) if self.orig.output else None


class Plan:
    def __init__(self, model, options):
        self.model = model
        self.options = options
        self.nodes = []  # NodePlan, in graph order
        self.removed = set()  # names of folded Relu/Clip nodes
        self.skipped = []  # (node name, op type, why) of nodes of a selected type left in float
        self.act_params = {}  # activation tensor -> QParams
        self.float_model = onnx_module().ModelProto()
        self.float_model.CopyFrom(model)  # the float model (with node names), read for weights
        self.qnames = {}  # QOperator: float tensor -> (quantized tensor, scale, zero point)

    def by_name(self):
        return {p.name: p for p in self.nodes}

    def act_tensors(self):
        """Activation tensors that need a calibrated range (shared outputs take their input's)."""
        names = []
        for p in self.nodes:
            if p.kind == "dynamic":
                continue
            names += [p.node.input[i] for i, role in p.inputs.items() if role == "act"]
            names += [t for t in p.outputs if t not in p.share]
        return list(dict.fromkeys(names))


def name_nodes(graph):
    """Gives unnamed nodes a unique name (op type and index) so that reports and nodes_to_exclude can name them."""
    taken = {n.name for n in graph.node if n.name}
    for i, node in enumerate(graph.node):
        if not node.name:
            name = f"{node.op_type}_{i}"
            while name in taken:
                name += "_"
            node.name = name
            taken.add(name)


def constants_to_initializers(graph):
    """Constant nodes holding a tensor (`value`) become initializers, so that weights and biases
    exported as Constant nodes (paddle2onnx, some tf2onnx graphs) are quantized like stored ones."""
    onnx = onnx_module()
    outputs = {o.name for o in graph.output}
    keep = []
    for node in graph.node:
        value = [a for a in node.attribute if a.name == "value" and a.type == onnx.AttributeProto.TENSOR]
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and value and node.output[0] not in outputs:
            t = onnx.TensorProto()
            t.CopyFrom(value[0].t)
            t.name = node.output[0]
            graph.initializer.append(t)
        else:
            keep.append(node)
    if len(keep) != len(graph.node):
        del graph.node[:]
        graph.node.extend(keep)


def ai_onnx_opset(model):
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return imp.version
    return 1


def tensor_types(model):
    """Element type of every tensor whose type ONNX's shape inference knows."""
    onnx = onnx_module()
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # contrib ops or a model onnx cannot type: use what the model declares
        inferred = model
    g = inferred.graph
    types = {}
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            types[vi.name] = vi.type.tensor_type.elem_type
    for init in g.initializer:
        types[init.name] = init.data_type
    return types


def readers_of(graph):
    """{tensor name: the nodes that read it}, in graph order."""
    readers = {}
    for node in graph.node:
        for t in node.input:
            readers.setdefault(t, []).append(node)
    return readers


def _attr(node, name, default=None):
    onnx = onnx_module()
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


class _Scope:
    """What the per-op planners read: the model's tensors, the options, and which tensors the
    plan quantizes so far in graph order (ONNX Runtime's "is the tensor quantized" test)."""

    def __init__(self, model, options, plan):
        graph = model.graph
        self.options = options
        self.plan = plan
        self.types = tensor_types(model)
        self.inits = {i.name: i for i in graph.initializer}
        self.graph_outputs = {o.name for o in graph.output}
        self.consumers = readers_of(graph)
        self.qop = options.quant_format == QuantFormat.QOperator and not options.dynamic
        self.fmt = QuantFormat.QOperator if self.qop else QuantFormat.QDQ
        self.opset = ai_onnx_opset(model)
        self.producing = {}  # tensor -> NodePlan writing its quantized form
        self.marked = set()  # tensors quantized by the nodes planned so far (inputs and outputs)

    def is_float(self, t):
        return t != "" and self.types.get(t) == FLOAT

    def is_act(self, t):
        return self.is_float(t) and t not in self.inits

    def is_const(self, t):
        return self.is_float(t) and t in self.inits

    def skip(self, node, why):
        self.plan.skipped.append((node.name, node.op_type, why))

    def add(self, p):
        self.plan.nodes.append(p)
        self.marked.update(p.node.input[i] for i, role in p.inputs.items() if role == "act")
        self.marked.update(p.outputs)
        for t in p.outputs:
            self.producing[t] = p


def build_plan(model, options):
    """Chooses the nodes to quantize and the role of each of their inputs (no ranges yet)."""
    graph = model.graph
    constants_to_initializers(graph)
    name_nodes(graph)
    plan = Plan(model, options)
    scope = _Scope(model, options, plan)
    allowed = STATIC_OPS if not options.dynamic else DYNAMIC_OPS
    op_types = set(options.op_types) if options.op_types is not None else set(allowed)
    for node in graph.node:
        if _selected(node, options, op_types):
            p = _plan_node(scope, node)
            if p is not None:
                scope.add(p)
    return plan


def _selected(node, options, op_types):
    onnx = onnx_module()
    if node.domain not in ("", "ai.onnx") or node.op_type not in op_types:
        return False
    if options.nodes_to_quantize is not None and node.name not in options.nodes_to_quantize:
        return False
    if node.name in options.nodes_to_exclude:
        return False
    return not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)


def _plan_node(s, node):
    """The NodePlan of one selected node, or None (with the reason in plan.skipped)."""
    op = node.op_type
    probe = node.input[0] if op == "ArgMax" else node.output[0]  # ArgMax writes indices
    if not s.is_float(probe):
        if probe not in s.types:  # a known non-float tensor is no candidate at all
            s.skip(node, "the type of its output is unknown (ONNX shape inference could not tell)")
        return None
    if op == "Gather" and s.is_const(node.input[0]):
        p = NodePlan(node, "gather")
        p.inputs = {0: "weight"}
        return p
    if op == "Gather" and (s.options.dynamic or s.qop):
        return s.skip(node, "its data is not a constant table")
    if s.options.dynamic:
        return _plan_dynamic(node, s.inits, s.is_act, s.options, s.skip)
    if op in REMOVABLE_OPS:
        return _plan_removable(s, node)
    if op in DIRECT_OPS[s.fmt]:
        return _plan_direct(s, node)
    if op == "Split":
        return _plan_split(s, node)
    if op == "Pad":
        return _plan_pad(s, node)
    if op == "ArgMax" and s.qop:
        return _plan_reader(s, node)
    if op in OWN_OPS[s.fmt]:
        return _plan_own(s, node)
    return s.skip(node, "QOperator has no quantized form of it (ONNX Runtime's quantizer leaves it float too)")


def _plan_removable(s, node):
    """A Relu/Clip: folded into the quantized node before it when it is that node's only reader,
    else (QDQ) kept between Q/DQ pairs once its input is quantized."""
    op, x, o = node.op_type, node.input[0], s.options
    if len(node.output) > 1 and node.output[1]:
        return s.skip(node, "it has a second output")
    if not s.is_act(x):
        return s.skip(node, "its input is not a float activation")
    if op == "Clip" and not _clip_includes_zero(node, s.inits):
        return s.skip(node, "its clip range does not hold 0")
    src = s.producing.get(x)
    # QDQ folds into a direct op too, Split's outputs included (that output then takes the
    # activation's range); QOperator only into an op with its own output range (ONNX Runtime
    # drops such a Relu unclamped there)
    foldable = (src is not None and (src.kind == "own" or (src.kind == "direct" and not s.qop))
                and x in src.outputs and x not in {n.output[0] for n in src.folded.values()}  # one per output
                and len(s.consumers.get(x, [])) == 1 and x not in s.graph_outputs
                and not o.keep_removable and not o.activation_symmetric
                and src.node.op_type not in o.op_types_no_output)
    if foldable:
        _fold(s, src, node)
        return None
    if s.qop:
        return s.skip(node, "QOperator has no 8-bit form of it and it cannot be folded")
    if x not in s.marked and not o.force_quantize_no_input_check:
        return s.skip(node, "it follows no quantized node it can fold into")
    p = NodePlan(node, "activation")
    p.inputs[0] = "act"
    return p


def _fold(s, src, node):
    """src writes the Relu/Clip's output in place of its input, with the activation's own range."""
    x, y = node.input[0], node.output[0]
    src.folded[x] = node
    src.share.pop(x, None)
    src.outputs = [y if t == x else t for t in src.outputs]
    s.producing[y] = src
    s.marked.discard(x)
    s.marked.add(y)
    s.plan.removed.add(node.name)


def _direct(node, x, outputs, options):
    """A node whose outputs take input x's scale and zero point (none where
    OpTypesToExcludeOutputQuantization names the op)."""
    p = NodePlan(node, "direct")
    p.inputs[0] = "act"
    p.outputs = [] if node.op_type in options.op_types_no_output else list(outputs)
    p.share = {t: x for t in p.outputs}
    return p


def _plan_direct(s, node):
    op, x, o = node.op_type, node.input[0], s.options
    if op == "GatherElements" and s.is_const(x):
        return s.skip(node, "its data is a constant table (quantized for Gather only)")
    if not s.is_act(x):
        return s.skip(node, "its input is not a float activation")
    if op != "TopK" and len(node.output) > 1 and node.output[1]:  # TopK's second output: indices
        return s.skip(node, "it has a second output")
    if s.opset < DIRECT_MIN_OPSET.get(op, 0):
        return s.skip(node, f"{op} takes 8-bit tensors from opset {DIRECT_MIN_OPSET[op]}")
    force = o.force_quantize_no_input_check
    if x not in s.marked and not force:
        return s.skip(node, "its input is not quantized (ForceQuantizeNoInputCheck forces it)")
    if op in o.op_types_no_output and not force:
        return s.skip(node, "OpTypesToExcludeOutputQuantization names it")
    return _direct(node, x, node.output[:1], o)


def _plan_split(s, node):
    """Split: its input is quantized whatever came before; every output shares its parameters."""
    x = node.input[0]
    if not s.is_act(x):
        return s.skip(node, "its input is not a float activation")
    return _direct(node, x, [t for t in node.output if t], s.options)


def _plan_pad(s, node):
    x, y = node.input[0], node.output[0]
    if not s.is_act(x):
        return s.skip(node, "its input is not a float activation")
    if s.qop:  # Pad on the 8-bit tensor, its padding value quantized with the input's parameters
        if s.opset < 11:
            return s.skip(node, "QOperator pads 8-bit tensors from opset 11")
        if x not in s.marked:
            return s.skip(node, "its input is not quantized")
        return _direct(node, x, [y], s.options)
    value = node.input[2] if len(node.input) > 2 else ""
    if value and not (s.is_act(value) or s.is_const(value)):
        return s.skip(node, "its constant_value is not float32")
    if _pad_adds_no_value(s, node):
        p = _direct(node, x, [y], s.options)
    else:  # a new padding value: the output gets its own calibrated range
        p = NodePlan(node, "own")
        p.inputs[0] = "act"
        p.outputs = [] if node.op_type in s.options.op_types_no_output else [y]
    if value:
        p.inputs[2] = "act" if s.is_act(value) else "const"
    return p


def _pad_adds_no_value(s, node):
    """Whether Pad's output holds only values of its input and 0 (which every range holds)."""
    mode = _attr(node, "mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode in ("reflect", "edge", "wrap"):
        return True
    if mode != "constant":
        return False
    if s.opset < 11:
        return float(_attr(node, "value", 0.0)) == 0.0
    value = node.input[2] if len(node.input) > 2 else ""
    if not value:
        return True
    if value not in s.inits:
        return False
    v = onnx_module().numpy_helper.to_array(s.inits[value])
    return v.size == 1 and float(v.reshape(-1)[0]) == 0.0


def _plan_reader(s, node):
    """ArgMax (QOperator): reads the 8-bit tensor once its input is quantized."""
    x = node.input[0]
    if not s.is_act(x):
        return s.skip(node, "its input is not a float activation")
    if x not in s.marked:
        return s.skip(node, "its input is not quantized")
    p = NodePlan(node, "reader")
    p.inputs[0] = "act"
    p.outputs = []
    return p


def _clip_includes_zero(node, inits):
    onnx = onnx_module()
    lo = _attr(node, "min")
    if len(node.input) > 1 and node.input[1]:
        if node.input[1] not in inits:
            return False
        lo = float(onnx.numpy_helper.to_array(inits[node.input[1]]))
    hi = _attr(node, "max")
    if len(node.input) > 2 and node.input[2]:
        if node.input[2] not in inits:
            return False
        hi = float(onnx.numpy_helper.to_array(inits[node.input[2]]))
    return (lo is None or lo <= 0) and (hi is None or hi >= 0)


def _weight_axis(node, options, rank):
    """The per-channel axis of node's weight, None where it is out of range (then per tensor, as
    ONNX Runtime does)."""
    op = node.op_type
    if op in options.per_channel_axis:
        axis = int(options.per_channel_axis[op])
    elif op == "Conv":
        axis = 0
    elif op == "Gemm":
        axis = 0 if _attr(node, "transB", 0) else 1
    elif op == "ConvTranspose" or op in NORM_OPS:
        axis = 1  # ConvTranspose: output channels; the normalizations' 1-D scale: none
    else:
        axis = rank - 1  # MatMul: one scale per output column
    axis = axis + rank if axis < 0 else axis
    return axis if 0 <= axis < rank else None


def _plan_own(s, node):
    op = node.op_type
    if op in ("Conv", "ConvTranspose", "Gemm"):
        p = _plan_weighted(s, node)
    elif op == "MatMul":
        p = _plan_matmul(s, node)
    elif op in NORM_OPS:
        p = _plan_norm(s, node)
    else:
        p = _plan_elementwise(s, node)
    if p is None:
        return None
    p.outputs = [t for t in node.output[:1] if s.is_float(t)]  # ArgMax: its input only
    if op in s.options.op_types_no_output:
        if s.qop:
            raise ValueError("OpTypesToExcludeOutputQuantization is supported with QuantFormat.QDQ only")
        p.outputs = []
    return p


def _plan_weighted(s, node):
    """Conv, ConvTranspose, Gemm: activation, constant weight, int32 bias."""
    op, o = node.op_type, s.options
    p = NodePlan(node, "own")
    if not s.is_act(node.input[0]):
        return s.skip(node, "its input is not a float activation")
    w = node.input[1]
    if not s.is_const(w):
        return s.skip(node, "its weight is not a float32 initializer")
    if op == "Gemm":
        if _attr(node, "transA", 0):
            return s.skip(node, "transA=1")
        if s.qop and (_attr(node, "alpha", 1.0) != 1.0 or _attr(node, "beta", 1.0) != 1.0):
            return s.skip(node, "QGemm here takes alpha = beta = 1 only")
    p.inputs = {0: "act", 1: "weight"}
    if len(node.input) > 2 and node.input[2]:
        b = node.input[2]
        bias_ok = s.is_const(b) and len(s.inits[b].dims) == 1
        if bias_ok and o.quantize_bias:
            p.inputs[2] = "bias"
        elif s.qop:
            return s.skip(node, "its bias is not a 1-D float32 initializer (or QuantizeBias is off)")
    if o.per_channel:
        p.axis = _weight_axis(node, o, len(s.inits[w].dims))
    return p


def _plan_matmul(s, node):
    o = s.options
    p = NodePlan(node, "own")
    a, b = node.input[0], node.input[1]
    if not s.is_act(a):
        return s.skip(node, "its first input is not a float activation")
    if s.is_const(b):
        p.inputs = {0: "act", 1: "weight"}
        if o.per_channel and len(s.inits[b].dims) == 2 and not s.qop:
            p.axis = _weight_axis(node, o, 2)
    elif s.is_act(b) and not o.matmul_const_b_only:
        p.inputs = {0: "act", 1: "act"}
    else:
        return s.skip(node, "its B is not a constant" if o.matmul_const_b_only else "its B is not float32")
    return p


def _plan_norm(s, node):
    """LayerNormalization, InstanceNormalization, BatchNormalization (QDQ): input, scale as a
    weight, bias in int32 at input scale x scale's scale; BatchNormalization's mean and variance
    stay float."""
    o = s.options
    p = NodePlan(node, "own")
    if not s.is_act(node.input[0]):
        return s.skip(node, "its input is not a float activation")
    if any(node.output[1:]):
        return s.skip(node, "it has more than one output")
    gamma = node.input[1]
    p.inputs = {0: "act"}
    if s.is_const(gamma):
        p.inputs[1] = "weight"
        if o.per_channel:
            p.axis = _weight_axis(node, o, len(s.inits[gamma].dims))
    elif s.is_act(gamma):
        p.inputs[1] = "act"
    else:
        return s.skip(node, "its scale is not float32")
    b = node.input[2] if len(node.input) > 2 else ""
    if b and p.inputs[1] == "weight" and o.quantize_bias and s.is_const(b) and len(s.inits[b].dims) == 1:
        p.inputs[2] = "bias"
    return p


def _plan_elementwise(s, node):
    """The other ops with their own output range: the inputs OWN_OUTPUT_OPS names are quantized."""
    op, o = node.op_type, s.options
    p = NodePlan(node, "own")
    if op == "Where" and not o.force_quantize_no_input_check:
        if s.qop:  # ONNX Runtime's QLinearWhere too (unforced, it leaves it float without its inputs' DQs)
            return s.skip(node, "QOperator quantizes Where with ForceQuantizeNoInputCheck only")
        if not all(node.input[i] in s.marked for i in (1, 2)):
            return s.skip(node, "its inputs are not both quantized (ForceQuantizeNoInputCheck forces it)")
    if op == "GlobalAveragePool" and s.qop and node.input[0] not in s.marked:
        return s.skip(node, "its input is not quantized (QOperator quantizes it after a quantized node only)")
    idx = OWN_OUTPUT_OPS[op]
    if idx is None:
        idx = list(range(len(node.input)))
    for i in idx:
        t = node.input[i] if i < len(node.input) else ""
        if s.is_act(t):
            p.inputs[i] = "act"
        elif s.is_const(t):
            p.inputs[i] = "const"
        else:
            return s.skip(node, f"input {i} ({t!r}) is not float32")
    if op in ("Add", "Mul") and not any(r == "act" for r in p.inputs.values()):
        return s.skip(node, "both inputs are constants")
    return p


def _plan_dynamic(node, inits, is_act, options, skip):
    p = NodePlan(node, "dynamic")
    w = node.input[1]
    if not is_act(node.input[0]):
        skip(node, "its input is not a float activation")
        return None
    if w not in inits:
        skip(node, "its weight (B) is not an initializer: dynamic quantization quantizes constant weights")
        return None
    if inits[w].data_type != FLOAT:
        skip(node, "its weight is not float32")
        return None
    rank = len(inits[w].dims)
    if node.op_type == "MatMul" and rank != 2:
        skip(node, "its weight is not 2-D")
        return None
    p.inputs = {0: "act", 1: "weight"}
    if len(node.input) > 2 and node.input[2]:
        p.inputs[2] = "fbias"  # stays float: added after the integer convolution
    if options.per_channel:
        p.axis = _weight_axis(node, options, rank)
    return p


def assign_params(plan, ranges):
    """Activation scale and zero point per tensor from the calibrated ranges; a shared output
    takes its input's, a Softmax output the fixed range [0, 1] (QOperator: scale 1/256)."""
    o = plan.options
    for p in plan.nodes:
        if p.kind == "dynamic":
            continue
        for i, role in p.inputs.items():
            t = p.node.input[i]
            if role == "act" and t not in plan.act_params:
                plan.act_params[t] = _act_qparams(plan, ranges, t)
        for t in p.outputs:
            if t in p.share:
                plan.act_params[t] = plan.act_params[p.share[t]]
            elif p.node.op_type == "Softmax" and o.quant_format == QuantFormat.QOperator:
                plan.act_params[t] = compute_qparams(0.0, 1.0 - 1.0 / 256, o.activation_type)  # scale 1/256
            elif p.node.op_type == "Softmax":
                # [0, 1] whatever the calibration saw: runtimes fuse DQ -> Softmax -> Q into
                # QLinearSoftmax, whose lookup table assumes an output range from 0 to 1
                plan.act_params[t] = compute_qparams(0.0, 1.0, o.activation_type)
            else:
                plan.act_params[t] = _act_qparams(plan, ranges, t)


def _act_qparams(plan, ranges, t):
    if t not in ranges:
        raise RuntimeError(f"no calibrated range for tensor {t!r} (the calibration run did not produce it)")
    lo, hi = ranges[t]
    o = plan.options
    return compute_qparams(lo, hi, o.activation_type, o.activation_symmetric, False, o.min_real_range)


class _Writer:
    """Collects new nodes and initializers with unique names."""

    def __init__(self, model):
        self.onnx = onnx_module()
        self.model = model
        self.names = {i.name for i in model.graph.initializer}
        for n in model.graph.node:
            self.names.update(n.input)
            self.names.update(n.output)
        self.names.update(i.name for i in model.graph.input)
        self.new_inits = []
        self.weight_cache = {}
        self.uses_ms = False

    def unique(self, base):
        name, k = base, 1
        while name in self.names:
            name = f"{base}_{k}"
            k += 1
        self.names.add(name)
        return name

    def const(self, base, array):
        name = self.unique(base)
        self.new_inits.append(self.onnx.numpy_helper.from_array(np.asarray(array), name))
        return name

    def scale_zp(self, base, qp):
        return self.const(base + "_scale", qp.scale), self.const(base + "_zero_point", qp.zero_point)

    def node(self, op, inputs, outputs, name, domain="", **attrs):
        if domain == MS_DOMAIN:
            self.uses_ms = True
        return self.onnx.helper.make_node(op, list(inputs), list(outputs), name=self.unique(name), domain=domain,
                                          **attrs)


def _init_array(model, name):
    onnx = onnx_module()
    for i in model.graph.initializer:
        if i.name == name:
            return onnx.numpy_helper.to_array(i)
    raise KeyError(name)


def weight_quant(plan, p, i):
    """(QParams, quantized array) of node p's constant input i (a weight or a constant operand)."""
    o = plan.options
    t = p.orig.input[i]
    w = _init_array(plan.float_model, t)
    if p.inputs[i] == "const":
        symmetric, reduce_range = const_mode(o)
        qp = compute_qparams(float(w.min()) if w.size else 0.0, float(w.max()) if w.size else 0.0,
                             o.activation_type, symmetric, reduce_range, o.min_real_range)
    else:
        qp = weight_qparams(w, o.weight_type, o.weight_symmetric, o.reduce_range, p.axis)
    return qp, quantize_array(w, qp)


def const_mode(o):
    """(symmetric, reduce_range) of a constant operand, stored in the activation type, as ONNX
    Runtime 1.31 quantizes it: QDQ with the activation symmetry and reduce_range, as its other
    initializers; QOperator without reduce_range, with the weight symmetry where both types are
    the same (it asks the weight setting whenever an initializer's type is the weight type)."""
    if o.quant_format != QuantFormat.QOperator:
        return o.activation_symmetric, o.reduce_range
    same_type = o.activation_type == o.weight_type
    return (o.weight_symmetric if same_type else o.activation_symmetric), False


def bias_quant(plan, p, input_scale, weight_qp):
    b = _init_array(plan.float_model, p.orig.input[2]).astype(np.float32)
    if weight_qp.scale.ndim and weight_qp.scale.shape != b.shape:
        raise ValueError(f"node {p.name!r} ({p.orig.op_type}): its weight is quantized per channel along axis "
                         f"{weight_qp.axis} ({weight_qp.scale.size} scales) but its bias has {b.size} entries, one "
                         "per output channel: QDQOpTypePerChannelSupportToAxis must name the output-channel axis "
                         "(or set QuantizeBias=False)")
    q, scale = quantize_bias(b, input_scale, weight_qp.scale)
    limit = np.iinfo(np.int32).max
    ratio = np.abs(b.astype(np.float64)) / scale.astype(np.float64)
    if np.any(ratio > limit):
        raise ValueError(f"node {p.name!r} ({p.orig.op_type}): its bias does not fit int32 at scale input scale x "
                         f"weight scale (largest |bias| / scale = {float(ratio.max()):.3g}); set "
                         "extra_options QuantizeBias=False, or exclude the node")
    return q, scale


def _finish(model, writer, new_nodes):
    onnx = onnx_module()
    graph = model.graph
    del graph.node[:]
    graph.node.extend(new_nodes)
    graph.initializer.extend(writer.new_inits)
    used = set()
    for n in graph.node:
        used.update(n.input)
    used.update(o.name for o in graph.output)
    keep = [i for i in graph.initializer if i.name in used or i.name in {x.name for x in graph.input}]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    if writer.uses_ms and not any(imp.domain == MS_DOMAIN for imp in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid(MS_DOMAIN, 1))
    # value_info of tensors whose type changed would be wrong: keep only what still holds.
    del graph.value_info[:]


def write_qdq(plan):
    """The model with QuantizeLinear/DequantizeLinear pairs on every quantized tensor."""
    model, o = plan.model, plan.options
    graph = model.graph
    w = _Writer(model)
    plans = {p.name: p for p in plan.nodes}
    graph_inputs = {i.name for i in graph.input}
    graph_outputs = {x.name for x in graph.output}
    consumers = readers_of(graph)
    out = []
    rename = {}  # per node name: {old input: new input}
    quantized = plan.act_params

    def pair(t, base, qp):
        s, z = w.scale_zp(base, qp)
        q = w.unique(base + "_QuantizeLinear_Output")
        dq = w.unique(base + "_DequantizeLinear_Output")
        nodes = [w.node("QuantizeLinear", [t, s, z], [q], base + "_QuantizeLinear"),
                 w.node("DequantizeLinear", [q, s, z], [dq], base + "_DequantizeLinear")]
        return nodes, dq

    def place(t, after_nodes):
        """Q/DQ for activation t: returns the nodes to emit now; the tensor's consumers read the DQ."""
        qp = quantized[t]
        if o.dedicated_qdq_pair or t in graph_inputs:
            emitted = []
            targets = consumers.get(t, []) if o.dedicated_qdq_pair else [None]
            for c in targets:
                nodes, dq = pair(t, t + (f"_{c.name}" if c is not None else ""), qp)
                emitted += nodes
                for c2 in ([c] if c is not None else consumers.get(t, [])):
                    rename.setdefault(c2.name, {})[t] = dq
            return emitted
        # rename the producer's output; the DQ writes the tensor under its own name
        pre = w.unique(t + "_prequant")
        for n in after_nodes:
            for k, name in enumerate(n.output):
                if name == t:
                    n.output[k] = pre
        s, z = w.scale_zp(t, qp)
        q = w.unique(t + "_QuantizeLinear_Output")
        return [w.node("QuantizeLinear", [pre, s, z], [q], t + "_QuantizeLinear"),
                w.node("DequantizeLinear", [q, s, z], [t], t + "_DequantizeLinear")]

    for t in graph.input:
        if t.name in quantized:
            out += place(t.name, [])
    for node in graph.node:
        if node.name in plan.removed:
            continue
        p = plans.get(node.name)
        if p is not None and p.kind == "gather":
            node, p = _emit_gather(w, out, plan, p, node), None
        if p is not None:
            for k, t in enumerate(node.output):
                if t in p.folded:
                    node.output[k] = p.folded[t].output[0]
            for i, role in p.inputs.items():
                if role in ("weight", "const"):
                    qp, qa = weight_quant(plan, p, i)
                    node.input[i] = _weight_dq(w, out, node.input[i], qa, qp, o.add_qdq_pair_to_weight, node)
            if 2 in p.inputs and p.inputs[2] == "bias":
                xq = quantized[node.input[0]]
                wqp, _ = weight_quant(plan, p, 1)
                qb, bscale = bias_quant(plan, p, xq.scale, wqp)
                name = node.input[2]
                qn = w.const(name + "_quantized", qb)
                sn = w.const(name + "_quantized_scale", bscale)
                zn = w.const(name + "_quantized_zero_point", np.zeros(bscale.shape, np.int32))
                dq = w.unique(name + "_DequantizeLinear_Output")
                attrs = {"axis": 0} if bscale.ndim == 1 else {}
                out.append(w.node("DequantizeLinear", [qn, sn, zn], [dq], name + "_DequantizeLinear", **attrs))
                node.input[2] = dq
        for k, t in enumerate(node.input):
            if t in rename.get(node.name, {}):
                node.input[k] = rename[node.name][t]
        out.append(node)
        for t in list(node.output):
            if t in quantized:
                out += place(t, [node])
    _finish(model, w, out)
    return model


def _weight_dq(w, out, name, qa, qp, keep_float, node):
    key = (name, qp.axis, qp.tensor_type, keep_float, qp.scale.tobytes(), qp.zero_point.tobytes())
    if key in w.weight_cache:
        return w.weight_cache[key]
    attrs = {"axis": qp.axis} if qp.axis is not None else {}
    s, z = w.scale_zp(name, qp)
    dq = w.unique(name + "_DequantizeLinear_Output")
    if keep_float:
        q = w.unique(name + "_QuantizeLinear_Output")
        out.append(w.node("QuantizeLinear", [name, s, z], [q], name + "_QuantizeLinear", **attrs))
    else:
        q = w.const(name + "_quantized", qa)
    out.append(w.node("DequantizeLinear", [q, s, z], [dq], name + "_DequantizeLinear", **attrs))
    w.weight_cache[key] = dq
    return dq


def write_qoperator(plan):
    """The model with QLinear*/contrib ops on 8-bit tensors; QuantizeLinear where a float tensor
    enters a quantized node, DequantizeLinear where a quantized one leaves for float nodes or the
    graph's outputs."""
    model = plan.model
    graph = model.graph
    w = _Writer(model)
    plans = {p.name: p for p in plan.nodes}
    graph_outputs = {x.name for x in graph.output}
    consumers = {}
    for node in graph.node:
        if node.name in plan.removed:
            continue
        for t in node.input:
            consumers.setdefault(t, []).append(node)
    qname = {}  # float tensor -> its quantized tensor
    params = {}  # quantized tensor -> (scale name, zero point name)
    out = []

    def q_of(t):
        if t not in qname:
            qp = plan.act_params[t]
            s, z = w.scale_zp(t, qp)
            qt = w.unique(t + "_quantized")
            out.append(w.node("QuantizeLinear", [t, s, z], [qt], t + "_QuantizeLinear"))
            qname[t], params[qt] = qt, (s, z)
        return qname[t]

    def sz(t):
        return params[qname[t]]

    for node in graph.node:
        if node.name in plan.removed:
            continue
        p = plans.get(node.name)
        if p is None:
            out.append(node)
            continue
        if p.kind == "gather":
            out.append(_emit_gather(w, out, plan, p, node))
            continue
        if p.kind in ("direct", "reader"):
            out.append(_emit_on_8bit(w, out, plan, p, node, q_of, sz, qname, params))
        else:
            out.append(_emit_qlinear(w, plan, p, node, q_of, sz, qname, params))
        for y in p.outputs:
            qy = qname[y]
            plan.qnames[y] = (qy,) + tuple(params[qy])
            needs_float = y in graph_outputs or any(
                c.name not in plans or not _reads_quantized(plans[c.name], y) for c in consumers.get(y, []))
            if needs_float:
                s, z = params[qy]
                out.append(w.node("DequantizeLinear", [qy, s, z], [y], y + "_DequantizeLinear"))
    _finish(model, w, out)
    return model


def _emit_on_8bit(w, out, plan, p, node, q_of, sz, qname, params):
    """A direct op (or ArgMax) run on the 8-bit tensor: shared outputs take its parameters."""
    x = node.input[0]
    new = _copy_node(node, w)
    new.input[0] = q_of(x)
    if node.op_type == "Pad":
        _quantize_pad_value(w, out, plan, node, new, sz(x))
    for k, t in enumerate(node.output):
        if t in p.share:
            qt = w.unique(t + "_quantized")
            new.output[k] = qt
            qname[t], params[qt] = qt, sz(x)
    return new


def _quantize_pad_value(w, out, plan, node, new, scale_zp):
    """QOperator Pad in constant mode pads with the quantized padding value: the input's zero
    point for 0, a constant quantized with the input's parameters, or a QuantizeLinear of a
    computed value."""
    mode = _attr(node, "mode", b"constant")
    if (mode.decode() if isinstance(mode, bytes) else mode) != "constant":
        return
    s, z = scale_zp
    value = node.input[2] if len(node.input) > 2 else ""
    if not value:
        if len(new.input) == 2:
            new.input.append(z)
        else:
            new.input[2] = z
        return
    if any(i.name == value for i in plan.float_model.graph.initializer):
        qp = plan.act_params[node.input[0]]
        full = QParams(qp.scale, qp.zero_point, qp.tensor_type)  # saturates to the whole type
        new.input[2] = w.const(value + "_quantized", quantize_array(_init_array(plan.float_model, value), full))
    else:
        qv = w.unique(value + "_quantized")
        out.append(w.node("QuantizeLinear", [value, s, z], [qv], value + "_QuantizeLinear"))
        new.input[2] = qv


def _emit_qlinear(w, plan, p, node, q_of, sz, qname, params):
    """The QLinear / contrib op of an op with its own output range."""
    op = node.op_type
    y = p.outputs[0]
    qy = w.unique(y + "_quantized")
    ys, yz = w.scale_zp(y, plan.act_params[y])
    ins = {}
    for i, role in p.inputs.items():
        t = node.input[i]
        if role == "act":
            ins[i] = (q_of(t),) + sz(t)
        elif role in ("weight", "const"):
            qp, qa = weight_quant(plan, p, i)
            qn = w.const(t + "_quantized", qa)
            ins[i] = (qn,) + w.scale_zp(t, qp)
    new_op, domain = QOP_NAMES[op]
    attrs = {a.name: onnx_module().helper.get_attribute_value(a) for a in node.attribute}
    if op in ("Conv", "MatMul", "Gemm"):
        inputs = list(ins[0]) + list(ins[1])
        if op == "Gemm":
            attrs.pop("beta", None)
        if 2 in p.inputs:
            xq = plan.act_params[node.input[0]]
            wqp, _ = weight_quant(plan, p, 1)
            qb, _ = bias_quant(plan, p, xq.scale, wqp)
            bias = w.const(node.input[2] + "_quantized", qb)
        else:
            bias = ""
        if op == "Conv":
            inputs += [ys, yz] + ([bias] if bias else [])
        elif op == "Gemm":
            inputs += [bias, ys, yz]
        else:
            inputs += [ys, yz]
    elif op == "Concat":
        inputs = [ys, yz]
        for i in range(len(node.input)):
            inputs += list(ins[i])
    elif op in ("Add", "Mul"):
        inputs = list(ins[0]) + list(ins[1]) + [ys, yz]
    elif op == "Where":  # the condition stays bool
        inputs = [node.input[0]] + list(ins[1]) + list(ins[2]) + [ys, yz]
    else:  # unary: pools, Sigmoid, LeakyRelu, Softmax
        inputs = list(ins[0]) + [ys, yz]
        if op == "GlobalAveragePool":
            attrs["channels_last"] = 0
        if op == "Softmax":
            opset = ai_onnx_opset(plan.model)
            attrs["opset"] = opset
            attrs.setdefault("axis", -1 if opset >= 13 else 1)
    qname[y], params[qy] = qy, (ys, yz)
    return w.node(new_op, inputs, [qy], node.name + "_quant", domain=domain, **attrs)


def _emit_gather(w, out, plan, p, node):
    """Gather on the 8-bit table (appended to out); returns the DequantizeLinear writing the
    node's output."""
    qp, qa = weight_quant(plan, p, 0)
    table, y = p.orig.input[0], node.output[0]
    s, z = w.scale_zp(table, qp)
    gathered = w.unique(y + "_quantized")
    new = _copy_node(node, w)
    new.input[0] = w.const(table + "_quantized", qa)
    new.output[0] = gathered
    out.append(new)
    return w.node("DequantizeLinear", [gathered, s, z], [y], y + "_DequantizeLinear")


def _reads_quantized(p, t):
    return any(p.node.input[i] == t and role == "act" for i, role in p.inputs.items())


def _copy_node(node, w):
    onnx = onnx_module()
    new = onnx.NodeProto()
    new.CopyFrom(node)
    new.name = w.unique(node.name + "_quant")
    return new


def write_dynamic(plan):
    """MatMul -> DynamicQuantizeLinear + MatMulInteger + Cast + Mul; Conv -> the same with
    ConvInteger (and an Add for the bias). Activations are uint8 (DynamicQuantizeLinear's type)."""
    model = plan.model
    graph = model.graph
    w = _Writer(model)
    plans = {p.name: p for p in plan.nodes}
    dyn = {}  # float tensor -> (q, scale, zero point) outputs of its DynamicQuantizeLinear
    out = []
    for node in graph.node:
        p = plans.get(node.name)
        if p is None:
            out.append(node)
            continue
        if p.kind == "gather":
            out.append(_emit_gather(w, out, plan, p, node))
            continue
        x, y = node.input[0], node.output[0]
        if x not in dyn:
            names = [w.unique(x + s) for s in ("_quantized", "_scale", "_zero_point")]
            out.append(w.node("DynamicQuantizeLinear", [x], names, x + "_DynamicQuantizeLinear"))
            dyn[x] = names
        xq, xs, xz = dyn[x]
        qp, qa = weight_quant(plan, p, 1)
        wn = node.input[1]
        wq = w.const(wn + "_quantized", qa)
        zp = qp.zero_point
        if node.op_type == "Conv" and zp.ndim:
            if np.any(zp != zp.flat[0]):
                raise ValueError(f"quantize_dynamic: per_channel=True on Conv {node.name!r} gives per-channel weight "
                                 "zero points (asymmetric weights: QUInt8 or WeightSymmetric=False), which ONNX "
                                 "Runtime's ConvInteger does not run; use symmetric weights or per_channel=False")
            zp = zp.flat[0:1].reshape(())  # ConvInteger takes one zero point (all channels share it)
        wz = w.const(wn + "_zero_point", zp)
        integer = w.unique(y + "_output_quantized")
        if node.op_type == "MatMul":
            out.append(w.node("MatMulInteger", [xq, wq, xz, wz], [integer], node.name + "_quant"))
            wscale = qp.scale
        else:
            attrs = {a.name: onnx_module().helper.get_attribute_value(a) for a in node.attribute}
            out.append(w.node("ConvInteger", [xq, wq, xz, wz], [integer], node.name + "_quant", **attrs))
            rank = len(qa.shape)
            wscale = qp.scale.reshape([1, -1] + [1] * (rank - 2)) if qp.axis is not None else qp.scale
        ws = w.const(wn + "_scale", wscale)
        cast = w.unique(y + "_output_quantized_cast")
        out.append(w.node("Cast", [integer], [cast], node.name + "_cast", to=FLOAT))
        scale = w.unique(y + "_scale_product")
        out.append(w.node("Mul", [xs, ws], [scale], node.name + "_scale_mul"))
        if 2 in p.inputs:
            pre = w.unique(y + "_nobias")
            out.append(w.node("Mul", [cast, scale], [pre], node.name + "_output_scale_mul"))
            bias, bshape = node.input[2], [1, -1] + [1] * (len(qa.shape) - 2)
            if any(i.name == bias for i in plan.float_model.graph.initializer):
                bn = w.const(bias + "_reshaped", _init_array(plan.float_model, bias).astype(np.float32).reshape(bshape))
            else:  # a computed bias (a Constant node's output, say): reshaped at run time
                bn = w.unique(bias + "_reshaped")
                shape = w.const(bias + "_shape", np.array(bshape, np.int64))
                out.append(w.node("Reshape", [bias, shape], [bn], node.name + "_bias_reshape"))
            out.append(w.node("Add", [pre, bn], [y], node.name + "_bias_add"))
        else:
            out.append(w.node("Mul", [cast, scale], [y], node.name + "_output_scale_mul"))
    _finish(model, w, out)
    return model
