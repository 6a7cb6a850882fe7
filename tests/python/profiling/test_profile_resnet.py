"""`onyx run --profile` on the ResNet-50 benchmark model: one Node event per kernel the session
runs (the optimized graph, written independently by `onyx optimize --require-kernels`, says
which), and the Node durations, summed per op type as a user would, account for the Run's wall
time within 10%."""
import collections
import json
import os
import re
import subprocess
import tempfile

import numpy as np
import onnx
import pytest

from onyx_harness import ONYX_BIN, _work_dir, bench_feeds, bench_manifest


def onyx(*args):
    proc = subprocess.run([ONYX_BIN, *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"onyx {' '.join(args)} failed: {proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def resnet_profile():
    """(profile events, optimized graph, wall ms of the run as `onyx run` timed it) for one run
    on the manifest's input."""
    folder, models = bench_manifest()
    entry = models["resnet50"]
    # Module-scoped, so outside the per-test scratch folder: its own, removed once read.
    with tempfile.TemporaryDirectory(dir=_work_dir()) as work:
        return profile_and_optimize(os.path.join(folder, entry["file"]), bench_feeds(entry), work)


def profile_and_optimize(model, feeds, work):
    feed_args = []
    for name, array in feeds.items():
        path = os.path.join(work, f"{name}.npy")
        np.save(path, array)
        feed_args += ["--input", f"{name}={path}"]
    out = onyx("run", model, *feed_args, "--runs", "1", "--profile", os.path.join(work, "resnet"))
    profile = re.search(r"^profile: (.+)$", out, re.M).group(1)
    wall_ms = float(re.search(r"time per run: ([0-9.]+) ms", out).group(1))
    assert os.path.basename(profile).startswith("resnet_") and profile.endswith(".json")
    with open(profile) as f:
        events = json.load(f)
    # The graph a session runs: the same optimization, fusing only what has a kernel.
    optimized = os.path.join(work, "resnet50_optimized.onnx")
    onyx("optimize", model, "-o", optimized, "--require-kernels")
    graph = onnx.load(optimized, load_external_data=False).graph
    return events, graph, wall_ms


def kernel_name(node, index):
    """The event name a node gets: ONNX Runtime's "<name>_kernel_time", "<op>_<index>" when unnamed."""
    return (node.name or f"{node.op_type}_{index}") + "_kernel_time"


def node_events(events):
    return [e for e in events if e["cat"] == "Node"]


def op_type_summary(events):
    """What a user computes from the file: {op type: (kernel runs, total microseconds)}."""
    runs, total = collections.Counter(), collections.Counter()
    for e in node_events(events):
        runs[e["args"]["op_name"]] += 1
        total[e["args"]["op_name"]] += e["dur"]
    return {op: (runs[op], total[op]) for op in runs}


def test_one_node_event_per_executed_kernel(resnet_profile):
    events, graph, _ = resnet_profile
    nodes = node_events(events)
    assert len(nodes) == len(graph.node)
    expected = collections.Counter(kernel_name(n, i) for i, n in enumerate(graph.node))
    assert collections.Counter(e["name"] for e in nodes) == expected
    op_of = {kernel_name(n, i): n.op_type for i, n in enumerate(graph.node)}
    for e in nodes:
        assert e["args"]["op_name"] == op_of[e["name"]]
        assert e["args"]["provider"] == "CPUExecutionProvider"
        assert e["ph"] == "X"


def test_first_conv_reports_image_weight_and_bias_shapes(resnet_profile):
    events, graph, _ = resnet_profile
    first = graph.node[0]
    assert first.input[0] == "input"  # the stem conv reads the image
    stem = [e for e in node_events(events) if e["name"] == kernel_name(first, 0)]
    assert len(stem) == 1
    args = stem[0]["args"]
    inits = {t.name: list(t.dims) for t in graph.initializer}
    assert args["input_type_shape"][0] == {"float": [1, 3, 224, 224]}
    # Weights and bias keep their shapes though the kernel pre-packed them.
    assert args["input_type_shape"][1] == {"float": inits[first.input[1]]}
    weight_bytes = 4 * sum(int(np.prod(inits[name])) for name in first.input[1:] if name in inits)
    assert int(args["parameter_size"]) == weight_bytes
    assert int(args["activation_size"]) == 4 * 3 * 224 * 224


def test_op_type_totals_match_the_run_wall_time(resnet_profile):
    events, graph, wall_ms = resnet_profile
    runs = [e for e in events if e["name"] == "model_run"]
    assert len(runs) == 1
    run = runs[0]
    summary = op_type_summary(events)
    print("\nResNet-50, one run, by op type (kernel runs, ms):")
    for op, (count, us) in sorted(summary.items(), key=lambda kv: -kv[1][1]):
        print(f"  {op:28s} {count:4d} {us / 1000:9.3f}")
    # The summary covers every op type of the optimized graph, each as often as it has nodes.
    assert {op: c for op, (c, _) in summary.items()} == dict(collections.Counter(n.op_type for n in graph.node))
    kernels_us = sum(us for _, us in summary.values())
    print(f"  kernels {kernels_us / 1000:.3f} ms, model_run {run['dur'] / 1000:.3f} ms, onyx run {wall_ms:.3f} ms")
    assert abs(kernels_us - run["dur"]) <= 0.10 * run["dur"]
    assert abs(run["dur"] / 1000 - wall_ms) <= 0.10 * wall_ms
    # The nodes ran inside the run, one after another on the thread that called Run.
    for e in node_events(events):
        assert e["tid"] == run["tid"]
        assert run["ts"] <= e["ts"] and e["ts"] + e["dur"] <= run["ts"] + run["dur"]
    starts = [e["ts"] for e in node_events(events)]
    assert starts == sorted(starts)
