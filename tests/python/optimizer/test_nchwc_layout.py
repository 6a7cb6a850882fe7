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
# kernels reject).
BENCH_NCHWC_CONVS = {"resnet50": 52, "mobilenetv2": 52, "yolo_like": 42}


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
    assert_same_as_extended(path, bench_feeds(entry))


@pytest.mark.parametrize("shape", [(1, 3, 640, 640), (1, 3, 320, 480)], ids=str)
def test_ppocr_det_matches_extended(shape):
    path = require_shared("models", "real", "ch_PP-OCRv4_det_infer.onnx")
    rng = np.random.default_rng(sum(shape))
    assert_same_as_extended(path, {"x": rng.standard_normal(shape).astype(np.float32)})


def test_ppocr_cls_blocked_region_matches_extended():
    path = require_shared("models", "real", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    assert session_op_counts(path).get("com.onyx.NchwcConv", 0) == 16  # HardSwish (x * Clip(x + 3, 0, 6) / 6) fused
    rng = np.random.default_rng(5)
    assert_same_as_extended(path, {"x": rng.standard_normal((2, 3, 48, 192)).astype(np.float32)})
