"""`onyx profile`: the summary of a trace written by ONNX Runtime 1.31's own profiler equals the
per-op-type sums of its JSON done by hand; a MODEL run's summary leaves the warm-up out, counts
a MatMul's and a Conv's FLOPs and bytes as computed by hand from their shapes, and prints the
top nodes, providers and copies; bad input is a one-line error."""
import collections
import glob
import json
import os
import subprocess

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onyx_harness
from onyx_harness import ONYX_BIN, require_ort, save_model


def onyx(*args):
    return subprocess.run([ONYX_BIN, *args], capture_output=True, text=True, timeout=600)


def profile_json(*args):
    proc = onyx("profile", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def conv_matmul_model():
    """Conv [1,3,16,16] * [8,3,3,3] -> Relu -> Reshape [1, 8*16*16] -> MatMul [2048, 32] -> Softmax."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(np.array([1, 8 * 16 * 16], np.int64), "shape"),
             numpy_helper.from_array(rng.standard_normal((8 * 16 * 16, 32)).astype(np.float32), "m")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Reshape", ["r", "shape"], ["f"], name="flatten"),
             helper.make_node("MatMul", ["f", "m"], ["y"], name="matmul"),
             helper.make_node("Softmax", ["y"], ["z"], name="softmax")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 32])], inits)
    return save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
                      "profile_cmd.onnx")


def hand_sums(events, skip_runs=0):
    """{op: (calls, total us)} over kernel events, after the first skip_runs model_run events."""
    runs = [e for e in events if e.get("name") == "model_run"]
    start = max((r["ts"] + r["dur"] for r in runs[:skip_runs]), default=-1)
    calls, total = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["ts"] >= start:
            calls[e["args"]["op_name"]] += 1
            total[e["args"]["op_name"]] += e["dur"]
    return {op: (calls[op], total[op]) for op in calls}, runs[skip_runs:]


def test_from_onnx_runtime_profile_matches_a_hand_sum():
    ort = require_ort()
    model = conv_matmul_model()
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(onyx_harness.SCRATCH, "ort")
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    for _ in range(5):
        sess.run(None, {"x": x})
    trace = sess.end_profiling()
    with open(trace) as f:
        events = json.load(f)
    expected, runs = hand_sums(events)
    assert expected, "ONNX Runtime's profile has no kernel events"
    summary = profile_json("--from", trace)
    assert {t["name"]: (t["calls"], t["total_us"]) for t in summary["op_types"]} == expected
    assert summary["runs"] == len(runs) == 5
    assert summary["run_us"] == sum(r["dur"] for r in runs)
    totals = [t["total_us"] for t in summary["op_types"]]
    assert totals == sorted(totals, reverse=True)  # slowest first
    for t in summary["op_types"]:
        assert abs(t["percent"] - 100.0 * t["total_us"] / summary["run_us"]) < 1e-3
    assert summary["providers_us"] == {"CPUExecutionProvider": sum(us for _, us in expected.values())}
    assert summary["copies"] == 0


def test_model_run_summary_leaves_out_the_warmup_and_counts_work():
    model = conv_matmul_model()
    prefix = os.path.join(onyx_harness.SCRATCH, "own")
    summary = profile_json(model, "--runs", "3", "--warmup", "2", "--trace", prefix, "--opt-level", "disabled",
                           "--threads", "1")
    (trace,) = glob.glob(prefix + "_*.json")
    with open(trace) as f:
        events = json.load(f)
    expected, runs = hand_sums(events, skip_runs=2)
    assert summary["runs"] == 3 and len(runs) == 3
    assert {t["name"]: (t["calls"], t["total_us"]) for t in summary["op_types"]} == expected
    nodes = {n["name"]: n for n in summary["nodes"]}
    assert nodes["matmul"]["calls"] == 3
    # FLOPs: 2 per multiply-add. Conv: every output element is a dot product over 3 * 3 * 3.
    assert nodes["conv"]["flops"] == 2 * (1 * 8 * 16 * 16) * (3 * 3 * 3)
    assert nodes["matmul"]["flops"] == 2 * 1 * 32 * 2048
    assert nodes["relu"]["flops"] is None  # not an op whose work is counted
    # Bytes: input, weight, output of one call (float32).
    assert nodes["matmul"]["bytes"] == 4 * (2048 + 2048 * 32 + 32)
    assert nodes["conv"]["bytes"] == 4 * (3 * 16 * 16 + 8 * 3 * 3 * 3 + 8 * 16 * 16)
    assert summary["peak"]["gflops"] > 0 and summary["peak"]["gbytes_per_s"] > 0
    assert summary["peak"]["threads"] == 1


def test_text_summary():
    model = conv_matmul_model()
    proc = onyx("profile", model, "--runs", "2", "--top", "2", "--trace", os.path.join(onyx_harness.SCRATCH, "t"),
                "--opt-level", "disabled")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "by op type:" in out and "top 2 nodes (of 5):" in out
    node_rows = out.split("top 2 nodes")[1].split("by provider:")[0].strip().splitlines()[2:]
    assert len(node_rows) == 2
    assert "CPUExecutionProvider" in out.split("by provider:")[1]
    assert "host<->device copies: 0" in out
    assert "GFLOP/s" in out and "peak of this machine" in out


def test_bad_input_is_a_one_line_error():
    for args, fragment in [
        (["--from", os.path.join(onyx_harness.SCRATCH, "absent.json")], "absent.json"),
        ([], "MODEL or --from"),
    ]:
        proc = onyx("profile", *args)
        assert proc.returncode != 0
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("onyx: error: ") and fragment in lines[0], proc.stderr
    not_trace = os.path.join(onyx_harness.SCRATCH, "not_trace.json")
    with open(not_trace, "w") as f:
        f.write('{"a": 1}')
    proc = onyx("profile", "--from", not_trace)
    assert proc.returncode != 0 and "not a Chrome trace" in proc.stderr


def test_dim_sets_a_symbolic_input_size():
    w = numpy_helper.from_array(np.ones((16, 8), np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])], [w])
    model = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
                       "profile_dim.onnx")
    prefix = os.path.join(onyx_harness.SCRATCH, "dim")
    (node,) = profile_json(model, "--dim", "n=5", "--runs", "1", "--trace", prefix)["nodes"]
    assert node["shapes"] == "float[5,16], float[16,8] -> float[5,8]"
    assert node["flops"] == 2 * 5 * 16 * 8


def test_report_from_a_trace_draws_the_models_graph_when_given():
    """--from TRACE with MODEL: the summary is the trace's, the graph the model's (optimized)."""
    model = conv_matmul_model()
    prefix = os.path.join(onyx_harness.SCRATCH, "g")
    profile_json(model, "--runs", "1", "--trace", prefix, "--opt-level", "disabled")
    (trace,) = glob.glob(prefix + "_*.json")

    def report_data(*args):
        html = os.path.join(onyx_harness.SCRATCH, "r.html")
        proc = onyx("profile", *args, "--from", trace, "-o", html)
        assert proc.returncode == 0, proc.stderr
        text = open(html, encoding="utf-8").read()
        return json.loads(text.split('<script type="application/json" id="data">')[1].split("</script>")[0])

    alone = report_data()
    assert alone["graph"]["nodes"] == [] and "No graph" in alone["graph"]["note"]
    with_model = report_data(model, "--opt-level", "disabled")
    assert [n["name"] for n in with_model["graph"]["nodes"]] == ["conv", "relu", "flatten", "matmul", "softmax"]
    conv = with_model["graph"]["nodes"][0]
    assert conv["attrs"]["pads"] == "[1,1,1,1]" and conv["pass"].startswith("the model")
