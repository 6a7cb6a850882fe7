"""A float64 reference for a float32 model: the same graph widened to double and run by Onyx's
plain (unoptimized) double kernels.

Where Onyx and ONNX Runtime disagree on a float32 model, neither is the exact answer; the model
evaluated in float64 is close enough to it to say which engine is nearer, independently of both
engines' float32 kernels."""
import os
import subprocess

import numpy as np
import onnx
from onnx import numpy_helper

FLOAT, DOUBLE = onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE
# Attributes naming the element type a node produces (or computes in): FLOAT there becomes DOUBLE.
DTYPE_ATTRIBUTES = {"Cast": "to", "RandomNormal": "dtype", "RandomUniform": "dtype", "RandomNormalLike": "dtype",
                    "RandomUniformLike": "dtype", "EyeLike": "dtype", "Bernoulli": "dtype", "SequenceEmpty": "dtype",
                    "LayerNormalization": "stash_type", "GroupNormalization": "stash_type"}
# Ops that produce (or compute in) float32 when the attribute above is absent, from the opset
# that defines the attribute.
FLOAT_BY_DEFAULT = {"RandomNormal": 1, "RandomUniform": 1, "LayerNormalization": 17, "GroupNormalization": 21}
# Inputs the ONNX spec allows only as float32 (scales): they get a Cast back to float.
FLOAT_ONLY_INPUTS = {"Resize": lambda opset: 1 if opset == 10 else 2, "Upsample": lambda opset: 1}
# Ops defined for float32 but not double, so widening them would give an invalid model.
NO_DOUBLE = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "TfIdfVectorizer"}


def _widen_tensor(tensor):
    if tensor.data_type == FLOAT:
        tensor.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float64), tensor.name))


def _widen_type(type_proto):
    kind = type_proto.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        inner = getattr(type_proto, kind)
        if inner.elem_type == FLOAT:
            inner.elem_type = DOUBLE
    elif kind in ("sequence_type", "optional_type"):
        _widen_type(getattr(type_proto, kind).elem_type)
    elif kind == "map_type":
        _widen_type(type_proto.map_type.value_type)


def _widen_node(node, opset, added):
    where = f"node {node.name or ','.join(node.output)!r} ({node.op_type})"
    if node.domain not in ("", "ai.onnx") or node.op_type in NO_DOUBLE:
        raise ValueError(f"{where}: no float64 form to convert to")
    attrs = {a.name: a for a in node.attribute}
    if node.op_type == "Constant" and ("value_float" in attrs or "value_floats" in attrs):
        # A float attribute makes a float32 tensor; give it as a double tensor instead.
        a = attrs.get("value_float") or attrs["value_floats"]
        values = np.array(a.f if a.name == "value_float" else list(a.floats), np.float64)
        node.attribute.remove(a)
        node.attribute.append(onnx.helper.make_attribute("value", numpy_helper.from_array(values)))
    if node.op_type == "ConstantOfShape" and "value" not in attrs:
        # Without a value it fills float32 zeros.
        node.attribute.append(onnx.helper.make_attribute("value", numpy_helper.from_array(np.zeros(1, np.float64))))
    dtype_name = DTYPE_ATTRIBUTES.get(node.op_type)
    if dtype_name and dtype_name not in attrs and opset >= FLOAT_BY_DEFAULT.get(node.op_type, 10**9):
        node.attribute.append(onnx.helper.make_attribute(dtype_name, DOUBLE))
    for a in node.attribute:
        if a.name == dtype_name and a.type == onnx.AttributeProto.INT and a.i == FLOAT:
            a.i = DOUBLE
        elif a.type == onnx.AttributeProto.TENSOR:
            _widen_tensor(a.t)
        elif a.type == onnx.AttributeProto.TENSORS:
            for t in a.tensors:
                _widen_tensor(t)
        elif a.type == onnx.AttributeProto.SPARSE_TENSOR:
            _widen_tensor(a.sparse_tensor.values)
        elif a.type == onnx.AttributeProto.GRAPH:
            _widen_graph(a.g, opset)
        elif a.type == onnx.AttributeProto.GRAPHS:
            for g in a.graphs:
                _widen_graph(g, opset)
        elif a.type in (onnx.AttributeProto.FLOAT, onnx.AttributeProto.FLOATS, onnx.AttributeProto.INT,
                        onnx.AttributeProto.INTS, onnx.AttributeProto.STRING, onnx.AttributeProto.STRINGS):
            continue
        else:
            raise ValueError(f"{where}: attribute {a.name!r} of type {a.type} is not converted")
    slot = FLOAT_ONLY_INPUTS.get(node.op_type)
    if slot is not None:
        i = slot(opset)
        if i < len(node.input) and node.input[i]:
            name = f"{node.input[i]}_as_float32_{len(added)}"
            added.append(onnx.helper.make_node("Cast", [node.input[i]], [name], to=FLOAT, name=name))
            node.input[i] = name


def _widen_nodes(nodes, opset):
    """Widens nodes in place; a Cast added for a float-only input goes just before its consumer."""
    widened = []
    for node in nodes:
        added = []
        _widen_node(node, opset, added)
        widened += added + [onnx.NodeProto.FromString(node.SerializeToString())]
    del nodes[:]
    nodes.extend(widened)


def _widen_graph(graph, opset):
    for tensor in graph.initializer:
        _widen_tensor(tensor)
    for sparse in graph.sparse_initializer:
        _widen_tensor(sparse.values)
    for info in list(graph.input) + list(graph.output) + list(graph.value_info):
        _widen_type(info.type)
    _widen_nodes(graph.node, opset)


def to_float64(model):
    """A copy of `model` computing in float64 wherever it computed in float32; other element types
    are kept. Raises ValueError naming the node where a faithful conversion is not possible."""
    wide = onnx.ModelProto()
    wide.CopyFrom(model)
    opset = next((o.version for o in wide.opset_import if o.domain in ("", "ai.onnx")), 0)
    _widen_graph(wide.graph, opset)
    for function in wide.functions:
        _widen_nodes(function.node, opset)
    return wide


def run_float64(model_path, feeds, folder, onyx_bin, threads=1):
    """(outputs in model order, None) from `onyx run` on the widened model with float32 inputs
    widened too, or (None, reason) where it cannot be converted or Onyx cannot run it (an op
    without a double kernel, say): the reference is advisory and must never stop a benchmark.
    --opt-level disabled keeps fusions and layout changes out, so the plain kernels compute it."""
    try:
        path = os.path.join(folder, "float64.onnx")
        onnx.save(to_float64(onnx.load(model_path)), path)
    except ValueError as e:  # no float64 form, or over protobuf's 2 GB once widened
        return None, str(e).splitlines()[0]
    out = os.path.join(folder, "float64_out")
    cmd = [onyx_bin, "run", path, "--output-dir", out, "--threads", str(threads), "--opt-level", "disabled"]
    for i, (name, array) in enumerate(feeds.items()):
        file = os.path.join(folder, f"float64_in{i}.npy")
        np.save(file, array.astype(np.float64) if array.dtype == np.float32 else array)
        cmd += ["--input", f"{name}={file}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, (proc.stderr.strip().splitlines() or [f"onyx exited with {proc.returncode}"])[-1][:200]
    files = sorted((f for f in os.listdir(out) if f.endswith(".npy")), key=lambda f: int(f.split("_", 1)[0]))
    return [np.load(os.path.join(out, f)) for f in files], None


def deviation(outputs, reference):
    """(values outside rtol 1e-3 / atol 1e-4 of the reference, mean abs error) over the float
    outputs; the tolerance is the one the engines are compared with."""
    off, errors = 0, []
    for got, ref in zip(outputs, reference):
        if got.dtype.kind != "f":
            continue
        if got.shape != ref.shape:
            off += got.size
            continue
        err = np.abs(got.astype(np.float64) - ref)
        off += int(np.count_nonzero(~(err <= 1e-4 + 1e-3 * np.abs(ref))))
        errors.append(err.ravel())
    return off, float(np.mean(np.concatenate(errors))) if errors else 0.0
