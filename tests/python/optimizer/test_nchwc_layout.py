"""The NchwcLayout pass (level "all") on real convolution networks: the blocked regions it makes
give the outputs of the same model at level "extended" (no blocked layout), and it rewrites the
convolutions it should. Models come from ../shared (skipped when absent)."""
import os
import re
import subprocess
import tempfile

import numpy as np
import onnx
import pytest

from onyx_harness import ONYX_BIN, _work_dir, bench_feeds, bench_manifest, require_shared, run_onyx

# NchwcConv nodes a session makes (every conv of the backbone but those left in regions under
# three convs; independent of the CPU's block, since none of these has grouped convs the blocked
# kernels reject). MobileNetV2's 52 less the 4 depthwise + pointwise pairs on 56 x 56 and larger
# inputs that NchwcDepthwisePointwiseFusion makes one node each, less the 3 expanding 1x1 convs
# in front of them that NchwcExpandDepthwisePointwiseFusion takes in (the first pair has none).
BENCH_NCHWC_CONVS = {"resnet50": 53, "mobilenetv2": 41, "yolo_like": 60, "efficientnet_b0": 81}
# (ReorderToNchwc, ReorderFromNchwc) left: pools, squeeze-excitation gates, Adds, Concats and
# nearest Resizes run blocked, so only the inputs and the outputs cross the layout boundary.
BENCH_REORDERS = {"resnet50": (0, 1), "mobilenetv2": (0, 1), "yolo_like": (0, 3), "efficientnet_b0": (0, 1)}


def session_op_counts(path):
    """Node counts by op after a session's optimization at level all (kernels required)."""
    with tempfile.TemporaryDirectory(dir=_work_dir()) as tmp:
        out = os.path.join(tmp, "optimized.onnx")
        proc = subprocess.run([ONYX_BIN, "optimize", path, "-o", out, "--level", "all", "--require-kernels",
                               "--report"], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        model = onnx.load(out, load_external_data=False)
    counts = {"NchwcConv plain input": sum(
        1 for n in model.graph.node
        if n.op_type == "NchwcConv" and any(a.name == "plain_input" and a.i == 1 for a in n.attribute))}
    for op, after in re.findall(r"^\s+([\w.]+): \d+ -> (\d+)$", proc.stdout, re.MULTILINE):
        counts[op] = int(after)
    return counts


def outputs_at(path, inputs, level):
    return run_onyx(path, inputs, threads=2, extra_args=("--opt-level", level))


def assert_same_as_extended(path, inputs):
    """Level all against level extended: within 1e-3 of the output's range, and rtol 1e-3 /
    atol 1e-4 element-wise. Where deep stacks of random-weight convs make float32 rounding break
    the element-wise rule already between extended and disabled (yolo_like: hundreds of
    elements, outputs up to ~22), the largest difference must stay within 1e-4 of the output's
    range and the elements off must be no more than twice as many as extended's own
    optimizations put off."""
    expected = outputs_at(path, inputs, "extended")
    got = outputs_at(path, inputs, "all")
    assert len(expected) == len(got)
    baseline = None
    for i, (e, g) in enumerate(zip(expected, got)):
        assert e.shape == g.shape and e.dtype == g.dtype, f"output {i}"
        diff = np.abs(g - e)
        # Also against the output's range: PP-OCR det's probabilities stay below 1e-2 on random
        # images, where atol 1e-4 alone would pass anything.
        assert diff.max() <= 1e-3 * np.abs(e).max(), f"output {i}: max diff {diff.max()}"
        off = np.count_nonzero(diff > 1e-4 + 1e-3 * np.abs(e))
        if off == 0:
            continue
        assert diff.max() <= 1e-4 * np.abs(e).max(), f"output {i}: max diff {diff.max()}"
        if baseline is None:
            baseline = outputs_at(path, inputs, "disabled")
        own = np.count_nonzero(np.abs(e - baseline[i]) > 1e-4 + 1e-3 * np.abs(baseline[i]))
        assert off <= 2 * own, f"output {i}: {off} elements off, extended vs disabled {own}"


@pytest.mark.parametrize("name", sorted(BENCH_NCHWC_CONVS))
def test_bench_model_blocked_regions_match_extended(name):
    folder, manifest = bench_manifest()
    entry = manifest[name]
    path = os.path.join(folder, entry["file"])
    counts = session_op_counts(path)
    assert counts.get("com.onyx.NchwcConv", 0) == BENCH_NCHWC_CONVS[name], counts
    # Each region is entered through a reorder or, for an RGB first layer, a conv reading NCHW.
    assert counts.get("com.onyx.ReorderToNchwc", 0) + counts.get("NchwcConv plain input", 0) >= 1, counts
    reorders = (counts.get("com.onyx.ReorderToNchwc", 0), counts.get("com.onyx.ReorderFromNchwc", 0))
    assert reorders == BENCH_REORDERS[name], counts
    assert_same_as_extended(path, bench_feeds(entry))


@pytest.mark.parametrize("shape", [(1, 3, 640, 640), (1, 3, 320, 480)], ids=str)
def test_ppocr_det_matches_extended(shape):
    path = require_shared("models", "real", "ch_PP-OCRv4_det_infer.onnx")
    rng = np.random.default_rng(sum(shape))
    assert_same_as_extended(path, {"x": rng.standard_normal(shape).astype(np.float32)})


def test_ppocr_cls_blocked_region_matches_extended():
    path = require_shared("models", "real", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    # Its unfused HardSwish (Add, Clip, Mul, Div) and squeeze-excitation gates join the region:
    # every conv runs blocked, one reorder at the end.
    counts = session_op_counts(path)
    assert counts.get("com.onyx.NchwcConv", 0) == 53 and counts.get("com.onyx.ReorderFromNchwc", 0) == 1, counts
    rng = np.random.default_rng(5)
    assert_same_as_extended(path, {"x": rng.standard_normal((2, 3, 48, 192)).astype(np.float32)})


# Small models whose pools, squeeze-excitation gates, Adds and Concats join the blocked regions
# (channel counts that are and are not multiples of the block, 8 or 16): outputs against ONNX
# Runtime, and the reorders left at the region edges.
def _conv(name, x, cin, cout, rng, inits, k=1, stride=1, pad=None, act="Relu"):
    from onnx import helper, numpy_helper
    w = (rng.standard_normal((cout, cin, k, k)) * (1.0 / np.sqrt(cin * k * k))).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
    inits += [numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")]
    p = k // 2 if pad is None else pad
    nodes = [helper.make_node("Conv", [x, name + "_w", name + "_b"], [name + "_c"], kernel_shape=[k, k],
                              strides=[stride, stride], pads=[p] * 4)]
    if act is None:
        return nodes, name + "_c"
    nodes.append(helper.make_node(act, [name + "_c"], [name]))
    return nodes, name


def _model(nodes, inits, x_shape, y_name, opset=17):
    from onnx import TensorProto, helper
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info(y_name, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _check_against_ort(model, name, x_shape, seed=0):
    from onyx_harness import assert_outputs_close, run_ort, save_model
    path = save_model(model, name)
    x = np.random.default_rng(seed).standard_normal(x_shape).astype(np.float32)
    for threads in (1, 2):
        assert_outputs_close(run_ort(path, {"x": x}), run_onyx(path, {"x": x}, threads=threads))
    return session_op_counts(path)


def test_stem_pool_and_global_pool_join_the_region():
    """conv -> MaxPool 3x3/2 -> convs -> GlobalAveragePool (ResNet's stem and head): one region
    from the plain RGB input to a 1x1 output."""
    from onnx import helper
    rng, inits, nodes = np.random.default_rng(1), [], []
    n, y = _conv("stem", "x", 3, 24, rng, inits, k=3, stride=2)
    nodes += n
    nodes.append(helper.make_node("MaxPool", [y], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
    n, y = _conv("c1", "pool", 24, 40, rng, inits, k=3)
    nodes += n
    n, y = _conv("c2", y, 40, 40, rng, inits, k=1)
    nodes += n
    nodes.append(helper.make_node("GlobalAveragePool", [y], ["y"]))
    counts = _check_against_ort(_model(nodes, inits, [2, 3, 33, 29], "y"), "stem_pool.onnx", (2, 3, 33, 29))
    assert counts.get("com.onyx.NchwcMaxPool") == 1 and counts.get("com.onyx.NchwcGlobalAveragePool") == 1, counts
    assert counts.get("com.onyx.NchwcConv") == 3 and counts.get("NchwcConv plain input") == 1, counts
    assert counts.get("com.onyx.ReorderToNchwc", 0) == 0 and counts.get("com.onyx.ReorderFromNchwc") == 1, counts
    assert counts.get("MaxPool", 0) == 0 and counts.get("GlobalAveragePool", 0) == 0, counts


def _squeeze_excite_and_project(x, rng, inits, nodes, gate_first):
    """Appends EfficientNet's SE gate over x (24 channels: GlobalAveragePool, 1x1 conv to 6,
    1x1 conv back with Sigmoid, Mul) and a 1x1 projection to 20; returns the output's name."""
    from onnx import helper
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    n, s = _conv("fc1", "gap", 24, 6, rng, inits)
    nodes += n
    n, s = _conv("fc2", s, 6, 24, rng, inits, act="Sigmoid")
    nodes += n
    nodes.append(helper.make_node("Mul", [s, x] if gate_first else [x, s], ["se"]))
    n, y = _conv("project", "se", 24, 20, rng, inits, act=None)
    nodes += n
    return y


@pytest.mark.parametrize("gate_first", [True, False])
def test_squeeze_excitation_joins_the_region(gate_first):
    """EfficientNet's SE block: GlobalAveragePool -> 1x1 conv -> 1x1 conv -> Sigmoid -> Mul with
    the block's tensor (24 channels: padded lanes in the last block) stays blocked. Three convs
    over the image make the region; the gate's convs on one pixel do not count."""
    rng, inits, nodes = np.random.default_rng(2), [], []
    n, x = _conv("expand", "x", 16, 24, rng, inits, k=1)
    nodes += n
    n, x = _conv("spatial", x, 24, 24, rng, inits, k=3)
    nodes += n
    y = _squeeze_excite_and_project(x, rng, inits, nodes, gate_first)
    counts = _check_against_ort(_model(nodes, inits, [1, 16, 14, 15], y), "se.onnx", (1, 16, 14, 15))
    assert counts.get("com.onyx.NchwcScaleChannels") == 1, counts
    assert counts.get("com.onyx.NchwcGlobalAveragePool") == 1 and counts.get("com.onyx.NchwcConv") == 5, counts
    assert counts.get("com.onyx.ReorderToNchwc") == 1 and counts.get("com.onyx.ReorderFromNchwc") == 1, counts


def test_squeeze_excitation_convs_alone_make_no_region():
    """Two convs over the image and the two of a gate: too few to block."""
    rng, inits, nodes = np.random.default_rng(6), [], []
    n, x = _conv("expand", "x", 16, 24, rng, inits, k=3)
    nodes += n
    y = _squeeze_excite_and_project(x, rng, inits, nodes, gate_first=False)
    counts = _check_against_ort(_model(nodes, inits, [1, 16, 9, 10], y), "se_small.onnx", (1, 16, 9, 10))
    assert counts.get("com.onyx.NchwcConv", 0) == 0 and counts.get("com.onyx.ReorderToNchwc", 0) == 0, counts


def test_pool_windows_join_the_region():
    """AveragePool with ceil_mode, padding and count_include_pad, and a dilated MaxPool between
    convs of 20 channels (not a multiple of the block)."""
    from onnx import helper
    rng, inits, nodes = np.random.default_rng(3), [], []
    n, y = _conv("a", "x", 8, 20, rng, inits, k=3)
    nodes += n
    nodes.append(helper.make_node("AveragePool", [y], ["avg"], kernel_shape=[3, 2], strides=[2, 2],
                                  pads=[1, 0, 1, 1], ceil_mode=1, count_include_pad=1))
    n, y = _conv("b", "avg", 20, 20, rng, inits, k=3)
    nodes += n
    nodes.append(helper.make_node("AveragePool", [y], ["avg2"], kernel_shape=[2, 2], strides=[1, 1], pads=[1] * 4))
    nodes.append(helper.make_node("MaxPool", ["avg2"], ["max"], kernel_shape=[2, 3], dilations=[2, 1],
                                  strides=[1, 2], pads=[1, 1, 0, 1], ceil_mode=1))
    n, y = _conv("c", "max", 20, 12, rng, inits, k=1)
    nodes += n
    counts = _check_against_ort(_model(nodes, inits, [1, 8, 17, 19], y), "pools.onnx", (1, 8, 17, 19))
    assert counts.get("com.onyx.NchwcAveragePool") == 2 and counts.get("com.onyx.NchwcMaxPool") == 1, counts
    assert counts.get("com.onyx.ReorderFromNchwc") == 1, counts


def test_add_concat_and_sppf_join_the_region():
    """YOLO's neck: a residual Add of two conv outputs, MaxPool chains (SPPF) and a channel Concat
    of 32-channel tensors stay blocked; a MaxPool with an Indices output stays plain."""
    from onnx import helper
    rng, inits, nodes = np.random.default_rng(4), [], []
    n, a = _conv("a", "x", 32, 32, rng, inits, k=3, act="Sigmoid")
    nodes += n
    n, b = _conv("b", a, 32, 32, rng, inits, k=3, act="Sigmoid")
    nodes += n
    nodes.append(helper.make_node("Add", [a, b], ["sum"]))
    nodes.append(helper.make_node("MaxPool", ["sum"], ["m1"], kernel_shape=[5, 5], pads=[2] * 4))
    nodes.append(helper.make_node("MaxPool", ["m1"], ["m2"], kernel_shape=[5, 5], pads=[2] * 4))
    nodes.append(helper.make_node("Concat", ["sum", "m1", "m2", a], ["cat"], axis=1))
    n, y = _conv("c", "cat", 128, 16, rng, inits, k=1)
    nodes += n
    nodes.append(helper.make_node("MaxPool", [y], ["out", "idx"], kernel_shape=[2, 2], strides=[2, 2]))
    model = _model(nodes, inits, [1, 32, 20, 20], "out")
    counts = _check_against_ort(model, "neck.onnx", (1, 32, 20, 20))
    assert counts.get("com.onyx.NchwcMaxPool") == 2 and counts.get("MaxPool") == 1, counts
    assert counts.get("Concat") == 1 and counts.get("Add") == 1, counts
    assert counts.get("com.onyx.ReorderToNchwc") == 1 and counts.get("com.onyx.ReorderFromNchwc") == 1, counts


@pytest.mark.parametrize("coords", ["asymmetric", "half_pixel", "align_corners"])
def test_nearest_resize_joins_the_region(coords):
    """YOLO's upsampling: a nearest Resize by constant scales between convs, its output
    concatenated with an earlier conv's, stays blocked (scales gain a 1 for the block axis)."""
    from onnx import helper, numpy_helper
    rng, inits, nodes = np.random.default_rng(7), [], []
    n, a = _conv("a", "x", 16, 32, rng, inits, k=3)
    nodes += n
    n, b = _conv("b", a, 32, 16, rng, inits, k=3, stride=2)
    nodes += n
    inits.append(numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"))
    nodes.append(helper.make_node("Resize", [b, "", "scales"], ["up"], mode="nearest",
                                  coordinate_transformation_mode=coords, nearest_mode="round_prefer_ceil"))
    nodes.append(helper.make_node("Concat", ["up", a], ["cat"], axis=1))
    n, y = _conv("c", "cat", 48, 8, rng, inits, k=1)
    nodes += n
    counts = _check_against_ort(_model(nodes, inits, [1, 16, 12, 10], y), "resize.onnx", (1, 16, 12, 10))
    # half_pixel by whole scales becomes com.onyx.NchwcUpsample (test_nchwc_upsample.py)
    assert counts.get("Resize", 0) + counts.get("com.onyx.NchwcUpsample", 0) == 1, counts
    assert counts.get("com.onyx.NchwcConv") == 3, counts
    assert counts.get("com.onyx.ReorderToNchwc") == 1 and counts.get("com.onyx.ReorderFromNchwc") == 1, counts


def test_unfused_hardswish_and_scalar_ops_join_the_region():
    """PP-OCR's HardSwish as x * Clip(x + 3, 0, 6) / 6 and its learnable affine (Mul and Add by
    constant scalars), a standalone Relu and a Sub from a scalar, between convs of 20 channels
    (padded lanes turn into finite values, never read by the next conv)."""
    from onnx import helper, numpy_helper
    rng, inits, nodes = np.random.default_rng(8), [], []
    for name, value in [("three", 3.0), ("zero", 0.0), ("six", 6.0), ("w", 0.7), ("b", -0.2)]:
        inits.append(numpy_helper.from_array(np.array(value, np.float32), name))
    inits.append(numpy_helper.from_array(np.array([1.5], np.float32), "one_d"))
    n, a = _conv("a", "x", 8, 20, rng, inits, k=3, act=None)
    nodes += n
    nodes += [helper.make_node("Add", [a, "three"], ["a3"]),
              helper.make_node("Clip", ["a3", "zero", "six"], ["a_clip"]),
              helper.make_node("Mul", [a, "a_clip"], ["a_mul"]),
              helper.make_node("Div", ["a_mul", "six"], ["a_hs"]),
              helper.make_node("Mul", ["w", "a_hs"], ["a_scaled"]),
              helper.make_node("Add", ["a_scaled", "b"], ["a_affine"])]
    n, c = _conv("c", "a_affine", 20, 20, rng, inits, k=3, act=None)
    nodes += n
    nodes += [helper.make_node("Relu", [c], ["c_relu"]), helper.make_node("Sub", ["one_d", "c_relu"], ["c_sub"])]
    n, y = _conv("d", "c_sub", 20, 12, rng, inits, k=1, act=None)
    nodes += n
    counts = _check_against_ort(_model(nodes, inits, [1, 8, 13, 11], y), "hardswish.onnx", (1, 8, 13, 11))
    assert counts.get("com.onyx.NchwcConv") == 3 and counts.get("com.onyx.ReorderFromNchwc") == 1, counts
    # 8 input channels: read plain with 16-lane blocks, reordered once with 8-lane ones.
    assert counts.get("com.onyx.ReorderToNchwc", 0) + counts.get("NchwcConv plain input", 0) == 1, counts


def test_gate_broadcasting_the_batch_stays_a_plain_mul():
    """Mul(image [1, C, H, W], gate [2, C, 1, 1]) broadcasts the image over the batch: it runs
    blocked as a broadcasting Mul, not as NchwcScaleChannels (whose image has the gate's batch)."""
    from onnx import TensorProto, helper
    from onyx_harness import assert_outputs_close, run_ort, save_model
    rng, inits, nodes = np.random.default_rng(9), [], []
    n, a = _conv("a", "x", 16, 24, rng, inits, k=3)
    nodes += n
    n, a = _conv("b", a, 24, 24, rng, inits, k=3)
    nodes += n
    nodes.append(helper.make_node("Mul", [a, "g"], ["gated"]))
    n, y = _conv("c", "gated", 24, 24, rng, inits, k=3, act=None)
    nodes += n
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 9, 8]),
                                           helper.make_tensor_value_info("g", TensorProto.FLOAT, [2, 24, 1, 1])],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = save_model(model, "gate_batch.onnx")
    feeds = {"x": rng.standard_normal((1, 16, 9, 8)).astype(np.float32),
             "g": rng.standard_normal((2, 24, 1, 1)).astype(np.float32)}
    assert_outputs_close(run_ort(path, feeds), run_onyx(path, feeds, threads=2))
    counts = session_op_counts(path)
    assert counts.get("com.onyx.NchwcConv") == 3 and counts.get("com.onyx.NchwcScaleChannels", 0) == 0, counts
    assert counts.get("com.onyx.ReorderToNchwc") == 2 and counts.get("com.onyx.ReorderFromNchwc") == 1, counts


@pytest.mark.parametrize("channels", [20, 3])
def test_one_d_conv_chain_runs_blocked(channels):
    """A 1-D conv stack (k5 from 20 channels, or from 3 read plain (plain_input), k3, a stride-2 k3 with 40 channels: a partial last
    block, a dilated k3, a k1 head): one region of NchwcConv over rank-4 blocked tensors, against
    ONNX Runtime at 1 and 2 threads; a GlobalMaxPool after it stays plain (pools join 2-D regions
    only)."""
    from onnx import helper, numpy_helper
    rng, inits, nodes = np.random.default_rng(9), [], []
    x = "x"
    for i, (cin, cout, k, stride, dilation) in enumerate(
            [(channels, 32, 5, 1, 1), (32, 40, 3, 1, 1), (40, 40, 3, 2, 1), (40, 48, 3, 1, 2), (48, 24, 1, 1, 1)]):
        w = (rng.standard_normal((cout, cin, k)) / np.sqrt(cin * k)).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        pad = dilation * (k - 1) // 2
        nodes.append(helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], kernel_shape=[k], strides=[stride],
                                      dilations=[dilation], pads=[pad, pad]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        x = f"r{i}"
    nodes.append(helper.make_node("GlobalMaxPool", [x], ["y"]))
    counts = _check_against_ort(_model(nodes, inits, [2, channels, 97], "y"), f"conv1d_chain_{channels}.onnx",
                                (2, channels, 97))
    assert counts.get("com.onyx.NchwcConv") == 5, counts
    plain = channels < 8  # under the block of every ISA (8 or 16)
    assert counts.get("NchwcConv plain input", 0) == (1 if plain else 0), counts
    assert counts.get("com.onyx.ReorderToNchwc", 0) == (0 if plain else 1) and counts.get("com.onyx.ReorderFromNchwc") == 1, counts
    assert counts.get("GlobalMaxPool") == 1 and counts.get("com.onyx.NchwcGlobalMaxPool", 0) == 0, counts
