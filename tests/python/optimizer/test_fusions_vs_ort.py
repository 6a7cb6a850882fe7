"""The extended-level fusions checked in ONNX Runtime 1.30: `onyx optimize --level extended` writes a
model that ONNX Runtime loads and runs (with its own optimizations off, so the fused nodes run as
written) giving ONNX Runtime's outputs on the original model (rtol 1e-3, atol 1e-4). Small models
cover each pattern and its exporter variants; the benchmark and real models cover what exporters
emit, and the fused-node counts the benchmark architectures imply are checked."""
import collections
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import (ONYX_BIN, _work_dir, assert_outputs_close, bench_feeds, bench_manifest, require_shared,
                          run_onyx, run_ort, save_model)

F32 = np.float32


def optimize(model_path, level="extended"):
    """Runs `onyx optimize` and returns (path of the optimized model, op counts after)."""
    out = os.path.join(_work_dir(), "optimized.onnx")
    proc = subprocess.run([ONYX_BIN, "optimize", model_path, "-o", out, "--level", level, "--report"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    model = onnx.load(out, load_external_data=False)
    counts = collections.Counter((n.domain + "." if n.domain else "") + n.op_type for n in model.graph.node)
    return out, counts, model


def check_in_ort(original, optimized, feeds):
    """ONNX Runtime on the optimized model (its own optimizations off) against ONNX Runtime on the
    original (optimizations on), within rtol 1e-3 / atol 1e-4, or within twice what ONNX
    Runtime's own optimizations change where those already exceed that (float rounding of folded
    weights on outputs of large magnitude, as in yolo_like)."""
    expected = run_ort(original, feeds)
    got = run_ort(optimized, feeds, opt_level="disabled")
    try:
        assert_outputs_close(expected, got, rtol=1e-3, atol=1e-4)
    except AssertionError:
        own = run_ort(original, feeds, opt_level="disabled")
        for e, g, o in zip(expected, got, own):
            assert e.shape == g.shape and e.dtype == g.dtype
            own_error = float(np.max(np.abs(o.astype(np.float64) - e)))
            excess = np.abs(o - e) > 1e-4 + 1e-3 * np.abs(e)
            if not excess.any():
                assert_outputs_close([e], [g], rtol=1e-3, atol=1e-4)
            else:
                assert float(np.max(np.abs(g.astype(np.float64) - e))) <= 2 * own_error


# --- small models, one per pattern --------------------------------------------------------------

def make_model(name, nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(v if isinstance(v, np.ndarray) and v.dtype == np.int64 else np.asarray(v, dtype=F32), k)
         for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return save_model(model, f"fusion_{name}.onnx")


RNG = np.random.default_rng(7)


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, size=shape).astype(F32)


def conv_block(tail, extra_inputs=(), inits=None, conv_bias=True):
    """x [N,3,8,8] -> Conv(4 channels, 3x3, pad 1) -> c, then `tail` nodes."""
    inits = dict(inits or {})
    inits.update(W=rand(4, 3, 3, 3))
    conv_inputs = ["x", "W"]
    if conv_bias:
        inits["B"] = rand(4)
        conv_inputs.append("B")
    nodes = [helper.make_node("Conv", conv_inputs, ["c"], pads=[1, 1, 1, 1])] + tail
    inputs = [("x", ["N", 3, 8, 8])] + list(extra_inputs)
    return nodes, inputs, inits


def bn_inits():
    return {"s": rand(4, lo=0.5, hi=1.5), "b": rand(4), "m": rand(4), "v": rand(4, lo=0.5, hi=2.0)}


def erf_gelu(x, y, variant):
    k = "inv_sqrt2" if variant == "mul" else "sqrt2"
    first = helper.make_node("Mul" if variant == "mul" else "Div", [x, k], [y + "_d"])
    nodes = [first, helper.make_node("Erf", [y + "_d"], [y + "_e"]), helper.make_node("Add", ["one", y + "_e"], [y + "_a"])]
    if variant == "half_first":
        nodes += [helper.make_node("Mul", [x, "half"], [y + "_h"]), helper.make_node("Mul", [y + "_h", y + "_a"], [y])]
    else:
        nodes += [helper.make_node("Mul", [y + "_a", x], [y + "_m"]), helper.make_node("Mul", ["half", y + "_m"], [y])]
    return nodes, {"sqrt2": np.sqrt(2.0), "inv_sqrt2": 1 / np.sqrt(2.0), "one": 1.0, "half": 0.5}


def tanh_gelu(x, y, cube):
    nodes = [helper.make_node("Mul", [x, "half"], [y + "_h"])]
    if cube:
        nodes += [helper.make_node("Mul", [x, x], [y + "_x2"]), helper.make_node("Mul", [y + "_x2", x], [y + "_p"])]
    else:
        nodes += [helper.make_node("Pow", [x, "three"], [y + "_p"])]
    nodes += [helper.make_node("Mul", [y + "_p", "k"], [y + "_pk"]), helper.make_node("Add", [x, y + "_pk"], [y + "_s"]),
              helper.make_node("Mul", [y + "_s", "c"], [y + "_t0"]), helper.make_node("Tanh", [y + "_t0"], [y + "_t"]),
              helper.make_node("Add", [y + "_t", "one"], [y + "_t1"]), helper.make_node("Mul", [y + "_h", y + "_t1"], [y])]
    return nodes, {"half": 0.5, "three": 3.0, "k": 0.044715, "c": np.sqrt(2 / np.pi), "one": 1.0}


def layer_norm(x, y, opset, rms=False, reciprocal=False):
    axes = {"axes": [-1]} if opset < 18 else {}
    ax_in = [] if opset < 18 else ["axes"]
    nodes = []
    d = x
    if not rms:
        nodes += [helper.make_node("ReduceMean", [x] + ax_in, ["mu"], **axes), helper.make_node("Sub", [x, "mu"], ["d"])]
        d = "d"
    nodes += [helper.make_node("Pow", [d, "two"], ["sq"]), helper.make_node("ReduceMean", ["sq"] + ax_in, ["var"], **axes),
              helper.make_node("Add", ["var", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["sd"])]
    if reciprocal:
        nodes += [helper.make_node("Reciprocal", ["sd"], ["r"]), helper.make_node("Mul", [d, "r"], ["n"])]
    else:
        nodes += [helper.make_node("Div", [d, "sd"], ["n"])]
    if rms:
        nodes += [helper.make_node("Mul", ["gamma", "n"], [y])]
    else:
        nodes += [helper.make_node("Mul", ["n", "gamma"], ["ng"]), helper.make_node("Add", ["beta", "ng"], [y])]
    inits = {"two": 2.0, "eps": 1e-5, "gamma": rand(16, lo=0.5, hi=1.5), "beta": rand(16)}
    if opset >= 18:
        inits["axes"] = np.array([-1])
    return nodes, inits


def pattern_cases():
    cases = {}
    x4 = {"x": rand(2, 3, 8, 8)}

    nodes, inputs, inits = conv_block([helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"])],
                                      inits=bn_inits())
    cases["conv_bn"] = (nodes, inputs, inits, 17, x4, {"BatchNormalization": 0, "Conv": 1})
    nodes, inputs, inits = conv_block([helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
                                       helper.make_node("Relu", ["n"], ["y"])], inits=bn_inits(), conv_bias=False)
    cases["conv_bn_relu"] = (nodes, inputs, inits, 17, x4, {"com.microsoft.FusedConv": 1, "Relu": 0})
    nodes, inputs, inits = conv_block([helper.make_node("Mul", ["f", "c"], ["y"])], inits={"f": rand(4, 1, 1)})
    cases["conv_mul"] = (nodes, inputs, inits, 17, x4, {"Mul": 0})
    nodes, inputs, inits = conv_block([helper.make_node("Add", ["c", "a"], ["y"])], inits={"a": rand(1, 4, 1, 1)})
    cases["conv_add"] = (nodes, inputs, inits, 17, x4, {"Add": 0})
    for act, attrs in [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("LeakyRelu", {"alpha": 0.2}),
                       ("HardSigmoid", {"alpha": 0.25, "beta": 0.4})]:
        nodes, inputs, inits = conv_block([helper.make_node(act, ["c"], ["y"], **attrs)])
        cases[f"conv_{act.lower()}"] = (nodes, inputs, inits, 17, x4, {"com.microsoft.FusedConv": 1, act: 0})
    nodes, inputs, inits = conv_block([helper.make_node("Clip", ["c", "lo", "hi"], ["y"])], inits={"lo": 0.0, "hi": 0.5})
    cases["conv_clip"] = (nodes, inputs, inits, 17, x4, {"com.microsoft.FusedConv": 1, "Clip": 0})
    nodes, inputs, inits = conv_block([helper.make_node("Clip", ["c"], ["y"], min=-0.2, max=0.3)])
    cases["conv_clip_opset6"] = (nodes, inputs, inits, 6, x4, {"com.microsoft.FusedConv": 1, "Clip": 0})
    nodes, inputs, inits = conv_block([helper.make_node("Add", ["z", "c"], ["a"]), helper.make_node("Relu", ["a"], ["y"])],
                                      extra_inputs=[("z", [2, 4, 8, 8])], conv_bias=False)
    inputs[0] = ("x", [2, 3, 8, 8])
    cases["conv_residual_relu"] = (nodes, inputs, inits, 17, dict(x4, z=rand(2, 4, 8, 8)),
                                   {"com.microsoft.FusedConv": 1, "Add": 0, "Relu": 0})

    for variant in ["div", "mul", "half_first"]:
        nodes, inits = erf_gelu("x", "y", variant)
        cases[f"gelu_{variant}"] = (nodes, [("x", ["b", 4, 16])], inits, 17, {"x": rand(2, 4, 16, lo=-3, hi=3)},
                                    {"com.microsoft.Gelu": 1, "Erf": 0})
    nodes, inits = erf_gelu("x", "y", "div")
    cases["gelu_opset20"] = (nodes, [("x", ["b", 4, 16])], inits, 20, {"x": rand(2, 4, 16, lo=-3, hi=3)},
                             {"Gelu": 1, "Erf": 0})
    for cube in [False, True]:
        nodes, inits = tanh_gelu("x", "y", cube)
        cases[f"fast_gelu_{'cube' if cube else 'pow'}"] = (nodes, [("x", ["b", 4, 16])], inits, 17,
                                                           {"x": rand(2, 4, 16, lo=-3, hi=3)},
                                                           {"com.microsoft.FastGelu": 1, "Tanh": 0})
    # MatMul + Add(bias, mm) + GELU with a symbolic batch: MatMul + BiasGelu / FastGelu(x, bias).
    mm = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Add", ["bias", "mm"], ["xb"])]
    nodes, inits = erf_gelu("xb", "y", "div")
    cases["bias_gelu"] = (mm + nodes, [("x", ["b", 4, 16])], dict(inits, w=rand(16, 16), bias=rand(16)), 17,
                          {"x": rand(2, 4, 16, lo=-2, hi=2)}, {"com.microsoft.BiasGelu": 1, "Add": 0})
    nodes, inits = tanh_gelu("xb", "y", False)
    cases["bias_fast_gelu"] = (mm + nodes, [("x", ["b", 4, 16])], dict(inits, w=rand(16, 16), bias=rand(16)), 17,
                               {"x": rand(2, 4, 16, lo=-2, hi=2)}, {"com.microsoft.FastGelu": 1, "Add": 0})

    mm2 = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Add", ["mm", "bias"], ["y"])]
    cases["matmul_add_2d"] = (mm2, [("x", [5, 16])], {"w": rand(16, 8), "bias": rand(8)}, 17, {"x": rand(5, 16)},
                              {"Gemm": 1, "MatMul": 0})
    cases["matmul_add_3d_static"] = (mm2, [("x", [2, 5, 16])], {"w": rand(16, 8), "bias": rand(8)}, 17,
                                     {"x": rand(2, 5, 16)}, {"Gemm": 1, "MatMul": 0, "Reshape": 2})
    scale = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Div", ["s", "eight"], ["y"])]
    cases["matmul_scale_transpose"] = (scale, [("q", ["b", 2, 5, 8]), ("k", ["b", 2, 5, 8])], {"eight": 8.0}, 17,
                                       {"q": rand(2, 2, 5, 8), "k": rand(2, 2, 5, 8)},
                                       {"com.microsoft.FusedMatMul": 1, "Div": 0, "Transpose": 0})

    for opset, rms, recip in [(13, False, False), (18, False, True), (9, False, False), (13, True, False),
                              (17, True, True)]:
        nodes, inits = layer_norm("x", "y", opset, rms, recip)
        op = "SimplifiedLayerNormalization" if rms else "LayerNormalization"
        cases[f"{'rms' if rms else 'layer'}_norm_opset{opset}{'_recip' if recip else ''}"] = (
            nodes, [("x", ["b", 4, 16])], inits, opset, {"x": rand(2, 4, 16, lo=-2, hi=2)},
            {op: 1, "ReduceMean": 0})
    ln = helper.make_node("LayerNormalization", ["sum", "gamma", "beta"], ["y"], epsilon=1e-6)
    skip = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Add", ["bias", "mm"], ["d"]),
            helper.make_node("Add", ["d", "x"], ["sum"]), ln]
    skip_inits = {"w": rand(16, 16), "bias": rand(16), "gamma": rand(16, lo=0.5, hi=1.5), "beta": rand(16)}
    cases["skip_layer_norm_bert"] = (skip, [("x", ["b", 4, 16])], skip_inits, 17, {"x": rand(2, 4, 16)},
                                     {"com.microsoft.SkipLayerNormalization": 1, "Add": 0, "LayerNormalization": 0})
    gpt = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Add", ["mm", "bias"], ["d"]),
           helper.make_node("Add", ["x", "d"], ["sum"]), ln, helper.make_node("Add", ["sum", "y"], ["z"])]
    cases["skip_layer_norm_gpt2"] = (gpt, [("x", ["b", 4, 16])], skip_inits, 17, {"x": rand(2, 4, 16)},
                                     {"com.microsoft.SkipLayerNormalization": 1, "Add": 1, "LayerNormalization": 0})
    emb = [helper.make_node("Add", ["x", "pos"], ["sum"]), ln]
    cases["skip_layer_norm_broadcast"] = (emb, [("x", ["b", 4, 16]), ("pos", [1, 4, 16])], skip_inits, 17,
                                          {"x": rand(2, 4, 16), "pos": rand(1, 4, 16)},
                                          {"com.microsoft.SkipLayerNormalization": 1})
    nodes, inits = layer_norm("sum", "y", 13, rms=True)
    cases["skip_simplified_layer_norm"] = ([helper.make_node("Add", ["x", "r"], ["sum"])] + nodes,
                                           [("x", ["b", 4, 16]), ("r", ["b", 4, 16])], inits, 13,
                                           {"x": rand(2, 4, 16), "r": rand(2, 4, 16)},
                                           {"com.microsoft.SkipSimplifiedLayerNormalization": 1})
    return cases


CASES = pattern_cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_pattern_is_fused_and_runs_in_onnx_runtime(name):
    nodes, inputs, inits, opset, feeds, expected = CASES[name]
    outputs = ["z"] if name == "skip_layer_norm_gpt2" else ["y"]
    path = make_model(name, nodes, inputs, outputs, inits, opset)
    optimized, counts, _ = optimize(path)
    for op, n in expected.items():
        assert counts[op] == n, f"{op}: {counts[op]} after optimization, expected {n} ({dict(counts)})"
    check_in_ort(path, optimized, feeds)


# --- benchmark models ---------------------------------------------------------------------------

# What the architectures in MANIFEST.md imply, at least (symbolic batch and sequence dims).
BENCH_EXPECTED = {
    "resnet50": {"BatchNormalization": 0, "Relu": 0, "Add": 0, "com.microsoft.FusedConv": 49, "Conv": 4},
    "mobilenetv2": {"BatchNormalization": 0, "Clip": 0, "Add": 0, "com.microsoft.FusedConv": 45},
    "efficientnet_b0": {"BatchNormalization": 0, "Add": 0},
    "yolo_like": {"BatchNormalization": 0},
    # The embeddings' LayerNormalization stays: its position skip is Slice(position_ids, 0, seq),
    # min(seq, 512) long, which cannot be proven to match the sequence.
    # The attention blocks become com.microsoft.Attention (tests/python/optimizer/test_attention_fusion.py).
    "bert_tiny": {"Erf": 0, "com.microsoft.BiasGelu": 2, "LayerNormalization": 1,
                  "com.microsoft.SkipLayerNormalization": 4, "com.microsoft.Attention": 2, "Softmax": 0},
    "bert_base": {"Erf": 0, "com.microsoft.BiasGelu": 12, "LayerNormalization": 1,
                  "com.microsoft.SkipLayerNormalization": 24, "com.microsoft.Attention": 12, "Softmax": 0},
    "gpt2_small": {"Tanh": 0, "Pow": 0, "com.microsoft.FastGelu": 12, "LayerNormalization": 0,
                   "com.microsoft.SkipLayerNormalization": 25, "com.microsoft.Attention": 12, "Softmax": 0},
    "vit_tiny": {"Erf": 0, "com.microsoft.BiasGelu": 12, "LayerNormalization": 0,
                 "com.microsoft.SkipLayerNormalization": 25, "com.microsoft.Attention": 12, "Softmax": 0},
}


@pytest.mark.parametrize("name", sorted(BENCH_EXPECTED))
def test_bench_model_fusions_run_in_onnx_runtime(name):
    folder, manifest = bench_manifest()
    entry = manifest[name]
    path = os.path.join(folder, entry["file"])
    optimized, counts, _ = optimize(path)
    for op, n in BENCH_EXPECTED[name].items():
        assert counts[op] == n, f"{op}: {counts[op]} after optimization, expected {n} ({dict(counts)})"
    check_in_ort(path, optimized, bench_feeds(entry))


# --- real models --------------------------------------------------------------------------------

REAL = {
    "ch_PP-OCRv4_det_infer.onnx": lambda: {"x": np.random.default_rng(1).standard_normal((1, 3, 320, 320), dtype=F32)},
    "ch_PP-OCRv4_rec_infer.onnx": lambda: {"x": np.random.default_rng(2).standard_normal((1, 3, 48, 320), dtype=F32)},
    "ch_ppocr_mobile_v2.0_cls_infer.onnx":
        lambda: {"x": np.random.default_rng(3).standard_normal((1, 3, 48, 192), dtype=F32)},
    "silero_vad_v5.onnx": lambda: {"input": np.random.default_rng(4).standard_normal((1, 512), dtype=F32) * 0.1,
                                   "state": np.zeros((2, 1, 128), F32), "sr": np.array(16000, np.int64)},
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_model_fusions_run_in_onnx_runtime(name):
    path = require_shared("models", "real", name)
    optimized, counts, _ = optimize(path)
    if name == "ch_PP-OCRv4_rec_infer.onnx":  # SVTR's decomposed layer norms
        assert counts["ReduceMean"] == 0, dict(counts)
    if name == "ch_ppocr_mobile_v2.0_cls_infer.onnx":
        assert counts["BatchNormalization"] == 0, dict(counts)
    check_in_ort(path, optimized, REAL[name]())


# --- every benchmark and real model saved at level "all" -----------------------------------------

def all_level_cases():
    cases = [f"real:{name}" for name in REAL]
    try:
        _, manifest = bench_manifest()
        cases += [f"bench:{name}" for name in manifest]
    except pytest.skip.Exception:
        cases.append("bench:unavailable")  # bench_manifest() skips it below, saying why
    return sorted(cases)


@pytest.mark.parametrize("case", all_level_cases())
def test_model_saved_at_level_all_runs_in_onnx_runtime(case):
    """At level "all" a saved model holds com.microsoft / default-domain ops ONNX Runtime runs,
    except com.onyx.FusedConv (Conv with SiLU / HardSwish, which ORT's FusedConv lacks): a model
    with it must have no other Onyx-own op and, reloaded, give what an Onyx session gives on the
    original (whose agreement with ONNX Runtime tests/python/models checks); `--level extended`
    (tests above) avoids it. The NCHWc layout ops are session-only and never
    saved."""
    kind, name = case.split(":")
    if kind == "real":
        path, feeds = require_shared("models", "real", name), REAL[name]()
    else:
        folder, manifest = bench_manifest()
        path, feeds = os.path.join(folder, manifest[name]["file"]), bench_feeds(manifest[name])
    optimized, counts, _ = optimize(path, level="all")
    onyx_ops = {op for op in counts if op.startswith("com.onyx.")}
    if not onyx_ops:
        check_in_ort(path, optimized, feeds)
        return
    assert onyx_ops == {"com.onyx.FusedConv"}, dict(counts)
    assert_outputs_close(run_onyx(path, feeds), run_onyx(optimized, feeds), rtol=1e-3, atol=1e-4)


# --- conformance models the fusions rewrite -------------------------------------------------------

def read_test_folder(folder):
    model = onnx.load(os.path.join(folder, "model.onnx"))
    initializers = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    data = sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_"))[0]

    def tensor(path):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)

    feeds = {n: tensor(os.path.join(folder, data, f"input_{i}.pb")) for i, n in enumerate(names)}
    outputs = [tensor(os.path.join(folder, data, f"output_{i}.pb")) for i in range(len(model.graph.output))]
    return feeds, outputs


CONFORMANCE_GROUPS = {
    "attention_expanded": ("node", "test_attention_", "_expanded"),  # the Q*K^T scale
    "rms_normalization_expanded": ("node", "test_rms_normalization_", "_expanded"),
    "pytorch_linear": ("pytorch-converted", "test_Linear", ""),
}


@pytest.mark.parametrize("group", sorted(CONFORMANCE_GROUPS))
def test_conformance_models_keep_their_reference_outputs(group):
    """Every model of the group the fusions change gives the conformance data's outputs in ONNX
    Runtime (within rtol 1e-3 / atol 1e-4, or within twice ONNX Runtime's own error on the
    original model)."""
    suite, prefix, suffix = CONFORMANCE_GROUPS[group]
    root = require_shared("onnx-tests", suite)
    fused = 0
    for test in sorted(os.listdir(root)):
        if not test.startswith(prefix) or not test.endswith(suffix):
            continue
        folder = os.path.join(root, test)
        optimized, counts, _ = optimize(os.path.join(folder, "model.onnx"))
        original = collections.Counter(
            (n.domain + "." if n.domain else "") + n.op_type for n in onnx.load(os.path.join(folder, "model.onnx")).graph.node)
        if counts == original:
            continue
        fused += 1
        feeds, expected = read_test_folder(folder)
        got = run_ort(optimized, feeds, opt_level="disabled")
        try:
            own = run_ort(os.path.join(folder, "model.onnx"), feeds, opt_level="disabled")
        except RuntimeError:  # ONNX Runtime cannot run some original expanded models
            own = expected
        for e, g, o in zip(expected, got, own):
            assert e.shape == g.shape, test
            if e.dtype.kind != "f" or np.allclose(g, e, rtol=1e-3, atol=1e-4, equal_nan=True):
                continue
            with np.errstate(invalid="ignore"):
                error = np.nanmax(np.abs(g.astype(np.float64) - e))
                own_error = np.nanmax(np.abs(o.astype(np.float64) - e))
            assert error <= 2 * own_error, f"{test}: max error {error}, ONNX Runtime's own {own_error}"
    assert fused > 0, f"no model of {group} was fused"
