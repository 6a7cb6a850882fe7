"""Which pass created, rewrote or removed each node, as `onyx explain` and
InferenceSession.explain() report it from the optimizer's own record: a Conv folded with its
BatchNormalization (ConvBatchNormFusion rewrites the Conv in place and removes the
BatchNormalization), then fused with its Relu (ConvActivationFusion makes a FusedConv), next to an
erf GELU (GeluFusion) and a LayerNormalization pattern (LayerNormFusion). What each pass does to
such a graph is ONNX Runtime's documented fusion set (docs/fusions.md)."""
import json
import subprocess

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onyx
from explain_models import conv_bn_model
from onyx_harness import ONYX_BIN, save_model


def planted_model():
    rng = np.random.default_rng(0)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    c = lambda v: np.array(v, np.float32)  # noqa: E731
    inits = [numpy_helper.from_array(a, n) for n, a in [
        ("w", f(4, 3, 3, 3)), ("scale", f(4) + 2), ("bias", f(4)), ("mean", f(4)), ("var", np.abs(f(4)) + 1),
        ("sqrt2", c(1.4142135)), ("one", c(1.0)), ("half", c(0.5)), ("two", c(2.0)), ("eps", c(1e-5)),
        ("gamma", f(8)), ("beta", f(8))]]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["n"], name="bn"),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        # erf GELU of r
        helper.make_node("Div", ["r", "sqrt2"], ["d"], name="gelu_div"),
        helper.make_node("Erf", ["d"], ["e"], name="gelu_erf"),
        helper.make_node("Add", ["e", "one"], ["a"], name="gelu_add"),
        helper.make_node("Mul", ["r", "a"], ["m"], name="gelu_mul"),
        helper.make_node("Mul", ["m", "half"], ["g"], name="gelu_half"),
        # LayerNormalization of g over its last axis
        helper.make_node("ReduceMean", ["g"], ["mu"], name="ln_mean", axes=[-1]),
        helper.make_node("Sub", ["g", "mu"], ["dev"], name="ln_sub"),
        helper.make_node("Pow", ["dev", "two"], ["sq"], name="ln_pow"),
        helper.make_node("ReduceMean", ["sq"], ["v"], name="ln_var", axes=[-1]),
        helper.make_node("Add", ["v", "eps"], ["ve"], name="ln_add_eps"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="ln_sqrt"),
        helper.make_node("Div", ["dev", "sd"], ["nrm"], name="ln_div"),
        helper.make_node("Mul", ["nrm", "gamma"], ["sc"], name="ln_scale"),
        helper.make_node("Add", ["sc", "beta"], ["y"], name="ln_shift"),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], inits)
    return save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
                      "explain_provenance.onnx")


GELU = ["gelu_div", "gelu_erf", "gelu_add", "gelu_mul", "gelu_half"]
LAYER_NORM = ["ln_mean", "ln_sub", "ln_pow", "ln_var", "ln_add_eps", "ln_sqrt", "ln_div", "ln_scale", "ln_shift"]


def explain(*args):
    proc = subprocess.run([ONYX_BIN, "explain", *args, "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def check_fused(report, bytes_session=False):
    nodes = {n["op"]: n for n in report["nodes"]}
    assert sorted(nodes) == ["FusedConv", "Gelu", "LayerNormalization"], sorted(nodes)
    assert nodes["FusedConv"]["created_by"] == "pass ConvActivationFusion"
    assert nodes["Gelu"]["created_by"] == "pass GeluFusion"
    assert nodes["LayerNormalization"]["created_by"] == "pass LayerNormFusion"
    removed = report["removed"]
    assert sorted(removed) == sorted(["conv", "bn", "relu", *GELU, *LAYER_NORM])
    assert removed["bn"].startswith("BatchNormalization (removed by pass ConvBatchNormFusion")
    assert removed["conv"].startswith("Conv (removed by pass ConvActivationFusion; rewritten before by pass "
                                      "ConvBatchNormFusion)")
    # The fold rewired the Relu's input, so it names that pass as a rewrite too.
    assert removed["relu"].startswith("Relu (removed by pass ConvActivationFusion")
    for name in GELU:
        assert "(removed by pass GeluFusion)" in removed[name], removed[name]
    for name in LAYER_NORM:
        assert "(removed by pass LayerNormFusion)" in removed[name], removed[name]
    if bytes_session:
        assert all(n["replaces"] == [] for n in report["nodes"])
        return
    assert nodes["FusedConv"]["replaces"] == ["conv", "bn", "relu"]
    assert sorted(nodes["Gelu"]["replaces"]) == sorted(GELU)
    assert sorted(nodes["LayerNormalization"]["replaces"]) == sorted(LAYER_NORM)
    assert removed["bn"].endswith("replaced by " + nodes["FusedConv"]["name"])


def test_each_fused_node_names_its_pass_in_the_command():
    check_fused(explain(planted_model(), "--level", "extended"))


def test_each_fused_node_names_its_pass_in_the_api():
    so = onyx.SessionOptions()
    so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    model = planted_model()
    check_fused(onyx.InferenceSession(model, so, providers=["CPUExecutionProvider"]).explain())
    with open(model, "rb") as f:
        from_bytes = onyx.InferenceSession(f.read(), so, providers=["CPUExecutionProvider"]).explain()
    check_fused(from_bytes, bytes_session=True)


def test_a_node_rewritten_in_place_names_its_pass():
    report = explain(conv_bn_model("explain_cbn.onnx"))
    (conv,) = report["nodes"]
    assert conv["created_by"] == "the model, rewritten by pass ConvBatchNormFusion"
    assert conv["rewritten_by"] == ["ConvBatchNormFusion"] and conv["replaces"] == []
    assert report["removed"] == {"bn": "BatchNormalization (removed by pass ConvBatchNormFusion)"}
    # Below the fold's level nothing is rewritten or removed.
    basic = explain(conv_bn_model("explain_cbn.onnx"), "--level", "basic")
    assert [n["created_by"] for n in basic["nodes"]] == ["the model", "the model"]
    assert basic["removed"] == {}


def test_level_all_layout_pass_makes_the_nchwc_nodes():
    # Three convolutions in a row (the layout's smallest region) with 16 -> 16 channels (a whole
    # NCHWc block with any ISA's 8 or 16): NchwcLayout replaces them.
    rng = np.random.default_rng(1)
    w = [numpy_helper.from_array(rng.standard_normal((16, 16, 3, 3)).astype(np.float32), n) for n in ("w", "w2", "w3")]
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                               helper.make_node("Conv", ["c", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
                               helper.make_node("Conv", ["c2", "w3"], ["y"], name="conv3", pads=[1, 1, 1, 1])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 12, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], w)
    model = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
                       "explain_provenance_nchwc.onnx")
    report = explain(model)
    assert sorted(n["op"] for n in report["nodes"]) == ["NchwcConv"] * 3 + ["ReorderFromNchwc", "ReorderToNchwc"]
    assert all(n["created_by"] == "pass NchwcLayout" for n in report["nodes"])
    assert report["removed"]["conv"].startswith("Conv (removed by pass NchwcLayout)")
    assert report["removed"]["conv3"].startswith("Conv (removed by pass NchwcLayout)")
