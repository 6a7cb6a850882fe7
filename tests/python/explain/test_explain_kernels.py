"""The kernel variant each planted convolution and matrix product takes, named by `onyx explain`
before the run and recorded in the profile's Node events (args.kernel) and `onyx profile`'s node
table when it runs. The expected engines follow from the documented selection rule
(docs/profiling.md) for the planted shapes: depthwise when group == channels, Winograd F(4x4,3x3)
for 3x3 stride-1 convolutions with >= 16 channels, GEMM for 1x1 kernels (pointwise) and for
outputs of <= 64 pixels (im2col), direct NCHWc otherwise; at level all the NCHWc layout runs
Winograd layers with a map of <= 49 pixels and >= 2^17 weights direct. MatMul packs a constant B
and takes the few-columns path for N <= 4."""
import json
import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx
from onyx_harness import ONYX_BIN, save_model


def conv_model(name, channels, out_channels, kernel, size, group=1, pads=0, chain=1):
    """`chain` convolutions alike ("conv", "conv2", ...; the NCHWc layout wants three in a row)."""
    rng = np.random.default_rng(1)
    nodes, inits, x = [], [], "x"
    for i in range(chain):
        c = channels if i == 0 else out_channels
        w = rng.standard_normal((out_channels, c // group, kernel, kernel)).astype(np.float32) / (3 * kernel * c ** 0.5)
        suffix = "" if i == 0 else str(i + 1)
        y = "y" if i == chain - 1 else f"c{i}"
        nodes.append(helper.make_node("Conv", [x, "w" + suffix], [y], name="conv" + suffix, group=group, pads=[pads] * 4))
        inits.append(numpy_helper.from_array(w, "w" + suffix))
        x = y
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return save_model(model, name), (1, channels, size, size)


# name -> (model args, the engine the rule picks)
CONVS = {
    "winograd": (dict(channels=16, out_channels=16, kernel=3, size=12, pads=1), "winograd F(4x4,3x3)"),
    "direct": (dict(channels=8, out_channels=8, kernel=3, size=16, pads=1), "direct NCHWc"),  # < 16 channels
    "im2col": (dict(channels=8, out_channels=8, kernel=3, size=8, pads=0), "gemm im2col"),  # 6x6 = 36 pixels
    "pointwise": (dict(channels=8, out_channels=24, kernel=1, size=16), "gemm pointwise"),
    "depthwise": (dict(channels=8, out_channels=8, kernel=3, size=16, group=8, pads=1), "depthwise"),
}


def explain_node(model, level, node_name):
    proc = subprocess.run([ONYX_BIN, "explain", model, "--level", level, "--json"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return next(n for n in json.loads(proc.stdout)["nodes"] if n["name"] == node_name)


def profiled_kernels(model, shape, level, tmp_path):
    """args.kernel of every Node event of one profiled run, by node name."""
    so = onyx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "kernels")
    so.graph_optimization_level = {"extended": onyx.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                                   "all": onyx.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    sess = onyx.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    sess.run(None, {"x": np.random.default_rng(0).standard_normal(shape).astype(np.float32)})
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    return {e["name"][:-len("_kernel_time")]: e["args"].get("kernel") for e in events if e["cat"] == "Node"}


def isa_of(text):
    """The ISA word after " on " in explain's text ("winograd F(4x4,3x3) on avx512 (...)")."""
    return text.split(" on ", 1)[1].split(" ", 1)[0]


@pytest.mark.parametrize("case", sorted(CONVS))
def test_conv_engine_named_by_explain_and_profile(case, tmp_path):
    args, engine = CONVS[case]
    model, shape = conv_model(f"kernels_{case}.onnx", **args)
    node = explain_node(model, "extended", "conv")
    assert node["op"] == "Conv" and node["kernel"].startswith(engine + " on "), node["kernel"]
    isa = isa_of(node["kernel"])
    assert isa in ("avx512", "avx2", "scalar") or isa.startswith("f32_gemm_")
    assert "prepared when the session was made" in node["kernel"]
    kernels = profiled_kernels(model, shape, "extended", tmp_path)
    assert kernels["conv"] == f"{engine} {isa}"


def test_conv_rule_named_for_a_weight_known_only_at_run_time(tmp_path):
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 12, 12]),
                                            helper.make_tensor_value_info("w", TensorProto.FLOAT, [16, 16, 3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
                       "kernels_weight_input.onnx")
    text = explain_node(model, "extended", "conv")["kernel"]
    assert text.startswith("winograd F(4x4,3x3) on ") and "W is not a constant" in text and "each run" in text


def test_nchwc_layout_engines_at_level_all(tmp_path):
    # Three Winograd layers in a row become NchwcConvs and stay Winograd; 384 -> 384 3x3 layers on
    # a 7x7 map (147456 >= 2^17 weights, 49 pixels) run direct.
    model, shape = conv_model("kernels_nchwc_winograd.onnx", **CONVS["winograd"][0], chain=3)
    nodes = json.loads(subprocess.run([ONYX_BIN, "explain", model, "--json"], capture_output=True, text=True,
                                      check=True).stdout)["nodes"]
    convs = [n for n in nodes if n["op"] == "NchwcConv"]
    assert len(convs) == 3
    kernels = profiled_kernels(model, shape, "all", tmp_path)
    for conv in convs:
        assert conv["kernel"].startswith("winograd F(4x4,3x3) on "), conv["kernel"]
        assert kernels[conv["name"]] == "winograd F(4x4,3x3) " + isa_of(conv["kernel"])

    model, shape = conv_model("kernels_nchwc_small_plane.onnx", channels=384, out_channels=384, kernel=3, size=7,
                              pads=1, chain=3)
    nodes = json.loads(subprocess.run([ONYX_BIN, "explain", model, "--json"], capture_output=True, text=True,
                                      check=True).stdout)["nodes"]
    convs = [n for n in nodes if n["op"] == "NchwcConv"]
    assert len(convs) == 3
    kernels = profiled_kernels(model, shape, "all", tmp_path)
    for conv in convs:
        assert conv["kernel"].startswith("direct NCHWc on ") and "at most 49" in conv["kernel"], conv["kernel"]
        # The map's size is static, so the kernel was built direct (no Winograd weights at all).
        assert kernels[conv["name"]] == "direct NCHWc " + isa_of(conv["kernel"])


def matmul_model(name, n, constant_b):
    rng = np.random.default_rng(2)
    b = rng.standard_normal((32, n)).astype(np.float32)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 32])]
    if not constant_b:
        inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, [32, n]))
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "b"], ["y"], name="mm")], "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(b, "b")] if constant_b else [])
    return save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), name), b


@pytest.mark.parametrize("n,constant_b,path", [(64, True, "gemm packed B"), (2, False, "gemm few columns (N <= 4)"),
                                               (64, False, "gemm blocked")])
def test_matmul_path_named_by_explain_and_profile(n, constant_b, path, tmp_path):
    model, b = matmul_model(f"kernels_matmul_{n}_{int(constant_b)}.onnx", n, constant_b)
    text = explain_node(model, "all", "mm")["kernel"]
    assert text.startswith(path + " on "), text
    so = onyx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "mm")
    sess = onyx.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feeds = {"x": np.ones((8, 32), np.float32)}
    if not constant_b:
        feeds["b"] = b
    sess.run(None, feeds)
    with open(sess.end_profiling()) as f:
        (event,) = [e for e in json.load(f) if e["cat"] == "Node"]
    assert event["args"]["kernel"] == f"{path} {isa_of(text)}"


def test_onyx_profile_shows_the_kernel_per_node(tmp_path):
    model, _ = conv_model("kernels_profile_winograd.onnx", **CONVS["winograd"][0])
    trace = ["--trace", str(tmp_path / "trace")]
    proc = subprocess.run([ONYX_BIN, "profile", model, "--opt-level", "extended", "--runs", "2", "--json", *trace],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (node,) = [n for n in json.loads(proc.stdout)["nodes"] if n["name"] == "conv"]
    assert node["kernel"].startswith("winograd F(4x4,3x3) ")
    text = subprocess.run([ONYX_BIN, "profile", model, "--opt-level", "extended", "--runs", "2", *trace],
                          capture_output=True, text=True, timeout=300)
    assert text.returncode == 0 and "kernel" in text.stdout
    assert any(line.split()[0] == "conv" and "winograd F(4x4,3x3)" in line for line in text.stdout.splitlines()
               if line.strip())
