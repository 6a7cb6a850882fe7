"""`onyx quantize` (the console script's Python command): the calibration-data folder layouts,
the per-layer report (a planted badly-quantized layer must rank first; the end-to-end error it
prints must match what ONNX Runtime measures on the two models), --keep-float, and its errors."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import qt_models as qm
from onyx_harness import ort_session, require_ort, save_model


def onyx_quantize(*args):
    """`onyx quantize ARGS` through the console script's module (python -m onyx._cli)."""
    return subprocess.run([sys.executable, "-m", "onyx._cli", "quantize", *args], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))


def write_npy(folder, feeds):
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "x.npy"), np.stack([f["x"] for f in feeds]))  # [samples, 1, 3, 16, 16]
    return folder


def write_pb_sets(folder, feeds):
    for i, feed in enumerate(feeds):
        d = os.path.join(folder, f"test_data_set_{i}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feed["x"], "x").SerializeToString())
    return folder


def write_sample_dirs(folder, feeds):
    for i, feed in enumerate(feeds):
        d = os.path.join(folder, f"sample_{i}")
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "x.npy"), feed["x"])
    return folder


def ort_outputs(path, feeds):
    ort = require_ort()
    session = ort_session(ort, path)
    return np.concatenate([session.run(None, f)[0] for f in feeds])


@pytest.fixture
def work(scratch_folder_per_test):
    return scratch_folder_per_test


def test_folder_layouts_give_the_same_model(work):
    model_path = save_model(qm.conv_net(), "float.onnx")
    feeds = qm.feeds_for(qm.conv_net(), 5)
    models = []
    for name, writer in (("npy", write_npy), ("pb", write_pb_sets), ("dirs", write_sample_dirs)):
        out = os.path.join(work, f"q_{name}.onnx")
        proc = onyx_quantize("static", model_path, "-o", out, "--calibration-data",
                             writer(os.path.join(work, name), feeds))
        assert proc.returncode == 0, proc.stderr
        models.append(onnx.load(out).SerializeToString())
    assert models[0] == models[1] == models[2]
    # and a different sample set gives a different model (the data is really read)
    out = os.path.join(work, "q_other.onnx")
    proc = onyx_quantize("static", model_path, "-o", out, "--calibration-data",
                         write_npy(os.path.join(work, "other"), qm.feeds_for(qm.conv_net(), 5, seed=77)))
    assert proc.returncode == 0, proc.stderr
    assert onnx.load(out).SerializeToString() != models[0]


@pytest.mark.parametrize("bad_layer,node", [("W2", "conv2"), ("W3", "conv3")])
def test_report_ranks_the_planted_bad_layer_first(work, bad_layer, node):
    model = qm.conv_net(bad_weight=25.0, bad_layer=bad_layer)
    model_path = save_model(model, "bad.onnx")
    feeds = qm.feeds_for(model, 8)
    data = write_npy(os.path.join(work, "calib"), feeds)
    out, report = os.path.join(work, "q.onnx"), os.path.join(work, "report.json")
    proc = onyx_quantize("static", model_path, "-o", out, "--calibration-data", data, "--report",
                         "--report-json", report)
    assert proc.returncode == 0, proc.stderr
    with open(report) as f:
        rep = json.load(f)
    ranked = [r["node"] for r in rep["nodes"]]
    assert ranked[0] == node, proc.stdout
    assert sorted(ranked) == ["add3", "conv1", "conv2", "conv3", "fc", "gap", "pool2", "reshape", "sigmoid3"]
    snrs = [r["local"]["snr_db"] for r in rep["nodes"]]
    assert snrs == sorted(snrs)
    assert snrs[0] < snrs[1] - 6  # clearly worse than every other layer
    # the printed table: worst first, and the end-to-end error
    lines = proc.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("node"))
    assert lines[header + 1].split()[0] == node
    assert "end to end" in proc.stdout
    # the end-to-end SNR it reports is the one ONNX Runtime measures on the same feeds
    expected = qm.snr_db(ort_outputs(model_path, feeds), ort_outputs(out, feeds))
    assert rep["outputs"]["y"]["snr_db"] == pytest.approx(expected, abs=0.3)


def test_keep_float_keeps_the_worst_node_float_and_helps(work):
    model = qm.conv_net(bad_weight=25.0)
    model_path = save_model(model, "bad.onnx")
    feeds = qm.feeds_for(model, 8)
    data = write_npy(os.path.join(work, "calib"), feeds)
    plain, kept = os.path.join(work, "plain.onnx"), os.path.join(work, "kept.onnx")
    assert onyx_quantize("static", model_path, "-o", plain, "--calibration-data", data,
                         "--format", "qoperator").returncode == 0
    proc = onyx_quantize("static", model_path, "-o", kept, "--calibration-data", data, "--format", "qoperator",
                         "--keep-float", "1", "--report")
    assert proc.returncode == 0, proc.stderr
    assert "keeping in float the 1 worst node(s): conv2" in proc.stdout
    q = onnx.load(kept)
    assert [n.name for n in q.graph.node if n.op_type == "Conv"] == ["conv2"]
    assert sum(n.op_type == "QLinearConv" for n in q.graph.node) == 2
    test = qm.feeds_for(model, 20, seed=31)
    ref = ort_outputs(model_path, test)
    assert qm.snr_db(ref, ort_outputs(kept, test)) > qm.snr_db(ref, ort_outputs(plain, test)) + 3


def test_dynamic_with_report(work):
    model_path = save_model(qm.mlp_net(), "mlp.onnx")
    feeds = qm.feeds_for(qm.mlp_net(), 4, batch=2)
    folder = os.path.join(work, "calib")
    os.makedirs(folder)
    np.save(os.path.join(folder, "x.npy"), np.concatenate([f["x"] for f in feeds]))  # rank 2: rows are samples
    out = os.path.join(work, "d.onnx")
    proc = onyx_quantize("dynamic", model_path, "-o", out, "--calibration-data", folder, "--report",
                         "--per-channel")
    assert proc.returncode == 0, proc.stderr
    assert "quantized 3 node(s) (dynamic)" in proc.stdout
    assert {"mm1", "mm2", "mm3"} <= set(proc.stdout.split())
    assert sum(n.op_type == "MatMulInteger" for n in onnx.load(out).graph.node) == 3


def test_cli_options_reach_the_quantizer(work):
    model_path = save_model(qm.conv_net(), "float.onnx")
    data = write_npy(os.path.join(work, "calib"), qm.feeds_for(qm.conv_net(), 4))
    out = os.path.join(work, "q.onnx")
    proc = onyx_quantize("static", model_path, "-o", out, "--calibration-data", data, "--format", "qoperator",
                         "--op-types", "Conv,Gemm", "--nodes-to-exclude", "conv3", "--per-channel",
                         "--activation-type", "quint8", "--extra", "WeightSymmetric=false")
    assert proc.returncode == 0, proc.stderr
    q = onnx.load(out)
    ops = [n.op_type for n in q.graph.node]
    assert ops.count("QLinearConv") == 2 and "QGemm" in ops and "Add" in ops and "Conv" in ops
    inits = {i.name: numpy_helper.to_array(i) for i in q.graph.initializer}
    assert inits["x_zero_point"].dtype == np.uint8
    assert inits["W1_scale"].shape == (16,) and np.any(inits["W1_zero_point"] != 0)


@pytest.mark.parametrize("args,message", [
    (["static"], "--calibration-data DIR is needed"),
    (["static", "--calibration-data", "nowhere"], "does not exist"),
    (["static", "--extra", "SmoothQuant=true", "--calibration-data", "CALIB"], "SmoothQuant"),
    (["dynamic", "--format", "qoperator"], "dynamic quantization takes no --format"),
])
def test_errors(work, args, message):
    model_path = save_model(qm.conv_net(), "float.onnx")
    data = write_npy(os.path.join(work, "calib"), qm.feeds_for(qm.conv_net(), 2))
    args = [data if a == "CALIB" else a for a in args]
    proc = onyx_quantize(args[0], model_path, "-o", os.path.join(work, "q.onnx"), *args[1:])
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr


def test_more_cli_options_reach_the_quantizer(work):
    model_path = save_model(qm.conv_net(), "float.onnx")
    feeds = qm.feeds_for(qm.conv_net(), 4)
    data = write_npy(os.path.join(work, "calib"), feeds)
    out = os.path.join(work, "q.onnx")
    proc = onyx_quantize("static", model_path, "-o", out, "--calibration-data", data, "--max-samples", "1",
                         "--reduce-range", "--weight-type", "quint8", "--nodes-to-quantize", "conv1",
                         "--external-data")
    assert proc.returncode == 0, proc.stderr
    assert os.path.exists(out + ".data")
    q = onnx.load(out)
    inits = {i.name: numpy_helper.to_array(i) for i in q.graph.initializer}
    x0 = feeds[0]["x"]  # --max-samples 1: the first feed's range only
    assert float(inits["x_scale"]) == pytest.approx((x0.max() - x0.min()) / 255, rel=1e-6)
    assert inits["W1_quantized"].dtype == np.uint8 and inits["W1_quantized"].max() == 127  # 7 bits
    assert [n.name for n in q.graph.node if n.op_type == "Conv" and "W1" not in n.input[1]] == ["conv2", "conv3"]
    # --calibrate-method percentile with --extra CalibPercentile: a narrower input range
    proc = onyx_quantize("static", model_path, "-o", out, "--calibration-data", data, "--calibrate-method",
                         "percentile", "--extra", "CalibPercentile=95")
    assert proc.returncode == 0, proc.stderr
    x = np.stack([f["x"] for f in feeds])
    scale = float(numpy_helper.to_array(next(i for i in onnx.load(out).graph.initializer if i.name == "x_scale")))
    assert scale < 0.8 * (x.max() - x.min()) / 255
    # dynamic: --op-types and --reduce-range reach quantize_dynamic
    proc = onyx_quantize("dynamic", model_path, "-o", out, "--op-types", "Conv", "--reduce-range")
    assert proc.returncode == 0, proc.stderr
    q = onnx.load(out)
    assert sum(n.op_type == "ConvInteger" for n in q.graph.node) == 3 and not any(
        n.op_type == "MatMulInteger" for n in q.graph.node)
    w = numpy_helper.to_array(next(i for i in q.graph.initializer if i.name == "W1_quantized"))
    assert np.abs(w.astype(int)).max() == 64
