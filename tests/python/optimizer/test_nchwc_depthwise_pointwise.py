"""NchwcDepthwisePointwiseFusion (level "all"): a blocked depthwise conv read only by a blocked
1x1 conv becomes one com.onyx.NchwcDepthwisePointwiseConv when its input map is at least 56 x 56, and the
expanding 1x1 conv in front goes into it too (NchwcExpandDepthwisePointwiseFusion), with the
outputs of ONNX Runtime on inverted residual blocks (ReLU6 and SiLU, strides 1 and 2, a residual
Add, channels that are not whole blocks), and not where the depthwise output is read elsewhere
or the map is small."""
import os
import re
import subprocess
import tempfile

import numpy as np
import pytest

from onyx_harness import ONYX_BIN, _work_dir, assert_outputs_close, run_onyx, run_ort, save_model


def session_op_counts(path):
    """Node counts by op after a session's optimization at level all (kernels required)."""
    with tempfile.TemporaryDirectory(dir=_work_dir()) as tmp:
        out = os.path.join(tmp, "optimized.onnx")
        proc = subprocess.run([ONYX_BIN, "optimize", path, "-o", out, "--level", "all", "--require-kernels",
                               "--report"], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    return {op: int(after) for op, after in re.findall(r"^\s+([\w.]+): \d+ -> (\d+)$", proc.stdout, re.MULTILINE)}


def _conv(nodes, inits, rng, name, x, cin, cout, k=1, stride=1, group=1, act="Relu6"):
    from onnx import helper, numpy_helper
    w = (rng.standard_normal((cout, cin // group, k, k)) * (1.0 / np.sqrt(cin // group * k * k))).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
    inits += [numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")]
    nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [name + "_c"], kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[k // 2] * 4, group=group))
    if act is None:
        return name + "_c"
    if act == "Relu6":
        inits += [numpy_helper.from_array(np.float32(0), name + "_lo"),
                  numpy_helper.from_array(np.float32(6), name + "_hi")]
        nodes.append(helper.make_node("Clip", [name + "_c", name + "_lo", name + "_hi"], [name]))
    elif act == "Silu":
        nodes.append(helper.make_node("Sigmoid", [name + "_c"], [name + "_s"]))
        nodes.append(helper.make_node("Mul", [name + "_c", name + "_s"], [name]))
    else:
        nodes.append(helper.make_node(act, [name + "_c"], [name]))
    return name


def _block(nodes, inits, rng, name, x, cin, expand, cout, k=3, stride=1, act="Relu6"):
    """MobileNetV2's inverted residual: 1x1 expand, k x k depthwise, 1x1 project (+ x)."""
    e = _conv(nodes, inits, rng, name + "_e", x, cin, expand, act=act)
    d = _conv(nodes, inits, rng, name + "_d", e, expand, expand, k=k, stride=stride, group=expand, act=act)
    p = _conv(nodes, inits, rng, name + "_p", d, expand, cout, act=None)
    if stride == 1 and cin == cout:
        from onnx import helper
        nodes.append(helper.make_node("Add", [p, x], [name]))
        return name, d
    return p, d


def _model(nodes, inits, x_shape, outputs):
    from onnx import TensorProto, helper
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _check(model, name, x_shape):
    path = save_model(model, name)
    x = np.random.default_rng(0).standard_normal(x_shape).astype(np.float32)
    for threads in (1, 2):
        assert_outputs_close(run_ort(path, {"x": x}), run_onyx(path, {"x": x}, threads=threads))
    return session_op_counts(path)


@pytest.mark.parametrize("act", ["Relu6", "Silu"])
def test_inverted_residual_blocks_fuse(act):
    """Three blocks: 20 -> 20 with the residual Add (stride 1), 20 -> 24 at stride 2 with a 5x5
    window, and one reading the 30 x 30 map that stays unfused (under 56 x 56)."""
    rng = np.random.default_rng(1)
    nodes, inits = [], []
    y, _ = _block(nodes, inits, rng, "b1", "x", 20, 60, 20, act=act)
    y, _ = _block(nodes, inits, rng, "b2", y, 20, 72, 24, k=5, stride=2, act=act)
    y, _ = _block(nodes, inits, rng, "b3", y, 24, 72, 24, stride=2, act=act)
    counts = _check(_model(nodes, inits, [1, 20, 60, 60], [y]), f"dwpw_{act}.onnx", [1, 20, 60, 60])
    assert counts.get("com.onyx.NchwcDepthwisePointwiseConv") == 2, counts
    # b1's and b2's expands fused in front; b3's expand, depthwise and project stay.
    assert counts.get("com.onyx.NchwcConv") == 3, counts


def test_depthwise_read_elsewhere_is_not_fused():
    """The depthwise output is also a graph output: it must be written, so nothing fuses."""
    rng = np.random.default_rng(2)
    nodes, inits = [], []
    y, d = _block(nodes, inits, rng, "b1", "x", 16, 48, 16)
    counts = _check(_model(nodes, inits, [1, 16, 56, 56], [y, d]), "dwpw_shared.onnx", [1, 16, 56, 56])
    assert counts.get("com.onyx.NchwcDepthwisePointwiseConv", 0) == 0, counts
    assert counts.get("com.onyx.NchwcConv") == 3, counts


def test_batch_and_symbolic_map_unfused_where_unknown():
    """A map whose size is not known statically is left unfused (the gain is only on large maps);
    the same model with a fixed size fuses, with ORT's outputs at batch 2."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(3)
    nodes, inits = [], []
    y, _ = _block(nodes, inits, rng, "b1", "x", 16, 40, 16)
    fixed = _model(nodes, inits, [2, 16, 64, 64], [y])
    counts = _check(fixed, "dwpw_batch.onnx", [2, 16, 64, 64])
    assert counts.get("com.onyx.NchwcDepthwisePointwiseConv") == 1, counts
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, "h", "w"])],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], inits)
    dynamic = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    dynamic.ir_version = 8
    counts = _check(dynamic, "dwpw_dynamic.onnx", [1, 16, 64, 64])
    assert counts.get("com.onyx.NchwcDepthwisePointwiseConv", 0) == 0, counts
