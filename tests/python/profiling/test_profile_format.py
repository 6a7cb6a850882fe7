"""The profile `onyx run --profile` writes has ONNX Runtime's format: the same events, names,
keys and per-node args as the profile ONNX Runtime 1.31.1 writes for the same model and input
(both unoptimized, so the graphs are the same), and the CLI's --profile options for run and perf."""
import glob
import json
import os
import re
import subprocess

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import ONYX_BIN, require_ort, save_model

NODE_ARGS = ["op_name", "provider", "node_index", "activation_size", "parameter_size", "output_size",
             "input_type_shape", "output_type_shape"]
FILE_NAME = re.compile(r"_\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_\d{3}\.json$")


def onyx(*args, cwd=None):
    return subprocess.run([ONYX_BIN, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def conv_model():
    """Conv(+bias) -> Relu -> Add(constant) -> Flatten -> MatMul(constant), x [1, 2, 5, 5]."""
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
             for name, shape in [("W", (3, 2, 3, 3)), ("B", (3,)), ("C", (3, 1, 1)), ("M", (27, 4))]]
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "C"], ["a"], name="add"),
             helper.make_node("Flatten", ["a"], ["f"], name="flatten"),
             helper.make_node("MatMul", ["f", "M"], ["y"], name="matmul")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def onyx_profile(model_path, x_path, prefix, *extra):
    proc = onyx("run", model_path, "--input", f"x={x_path}", "--opt-level", "disabled", "--profile", prefix, *extra)
    assert proc.returncode == 0, proc.stderr
    path = re.search(r"^profile: (.+)$", proc.stdout, re.M).group(1)
    with open(path) as f:
        return path, json.load(f)


def ort_profile(model_path, x, prefix):
    ort = require_ort()
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = prefix
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    sess.run(None, {"x": x})
    path = sess.end_profiling()
    with open(path) as f:
        return path, json.load(f)


def test_events_match_onnxruntime(tmp_path):
    model_path = save_model(conv_model(), "profile_conv.onnx")
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    onyx_path, ours = onyx_profile(model_path, str(tmp_path / "x.npy"), str(tmp_path / "onyx"))
    ort_path, theirs = ort_profile(model_path, x, str(tmp_path / "ort"))
    # Named alike: <prefix>_<date>_<time>_<ms>.json.
    assert FILE_NAME.search(onyx_path) and FILE_NAME.search(ort_path)
    assert os.path.basename(onyx_path).startswith("onyx_")

    def by_cat(events, cat):
        return [e for e in events if e["cat"] == cat]

    assert sorted(e["name"] for e in by_cat(ours, "Session")) == sorted(e["name"] for e in by_cat(theirs, "Session"))
    for e in ours:
        assert sorted(e) == sorted(theirs[0]), e  # the same keys on every event
        assert e["ph"] == "X"
    ours_nodes = {e["name"]: e["args"] for e in by_cat(ours, "Node")}
    theirs_nodes = {e["name"]: e["args"] for e in by_cat(theirs, "Node")}
    assert sorted(ours_nodes) == sorted(theirs_nodes)
    assert len(ours_nodes) == 5
    # ONNX Runtime leaves out of a node's args the weight its kernel pre-packed (MatMul's B);
    # Onyx still lists it and counts it in parameter_size. Compare without it.
    m_bytes = str(27 * 4 * 4)
    assert ours_nodes["matmul_kernel_time"]["input_type_shape"][1] == {"float": [27, 4]}
    assert ours_nodes["matmul_kernel_time"]["parameter_size"] == m_bytes
    assert theirs_nodes["matmul_kernel_time"]["input_type_shape"] == [{"float": [1, 27]}]
    ours_nodes["matmul_kernel_time"] = dict(ours_nodes["matmul_kernel_time"], parameter_size="0",
                                            input_type_shape=[{"float": [1, 27]}])
    for name, args in ours_nodes.items():
        for key in NODE_ARGS:
            assert args[key] == theirs_nodes[name][key], (name, key)
    # Onyx's extra arg: the variant a kernel with several took (a 3x3 map is <= 64 pixels: im2col
    # GEMM; a constant B is packed); ops with one path have none, and ONNX Runtime writes none.
    assert ours_nodes["conv_kernel_time"]["kernel"].startswith("gemm im2col f32_gemm_")
    assert ours_nodes["matmul_kernel_time"]["kernel"].startswith("gemm packed B f32_gemm_")
    assert "kernel" not in ours_nodes["relu_kernel_time"] and "kernel" not in theirs_nodes["conv_kernel_time"]
    for args in ours_nodes.values():
        assert isinstance(args["thread_scheduling_stats"], dict)
        assert args["thread_scheduling_stats"]["main_thread"]["thread_id"].isdigit()


def test_run_profile_without_prefix_writes_onnxruntime_profile_in_cwd(tmp_path):
    model_path = save_model(conv_model(), "profile_conv.onnx")
    proc = onyx("run", model_path, "--random", "--runs", "2", "--opt-level", "disabled", "--profile", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    path = re.search(r"^profile: (.+)$", proc.stdout, re.M).group(1)
    written = glob.glob(str(tmp_path / "onnxruntime_profile_*.json"))
    assert len(written) == 1 and os.path.samefile(written[0], tmp_path / path)
    with open(written[0]) as f:
        events = json.load(f)
    assert len([e for e in events if e["name"] == "model_run"]) == 2
    assert len([e for e in events if e["cat"] == "Node"]) == 2 * 5


def test_run_without_profile_writes_nothing(tmp_path):
    model_path = save_model(conv_model(), "profile_conv.onnx")
    proc = onyx("run", model_path, "--random", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "profile:" not in proc.stdout
    assert not glob.glob(str(tmp_path / "*.json"))


def test_perf_profile_records_warmup_and_timed_runs(tmp_path):
    model_path = save_model(conv_model(), "profile_conv.onnx")
    proc = onyx("perf", model_path, "--warmup", "1", "--runs", "3", "--opt-level", "disabled", "--profile",
                str(tmp_path / "perf"))
    assert proc.returncode == 0, proc.stderr
    path = re.search(r"^profile: (.+)$", proc.stdout, re.M).group(1)
    assert os.path.basename(path).startswith("perf_")
    with open(path) as f:
        events = json.load(f)
    assert len([e for e in events if e["name"] == "model_run"]) == 4
    assert len([e for e in events if e["cat"] == "Node"]) == 4 * 5

    proc = onyx("perf", model_path, "--runs", "2", "--json", "--profile", str(tmp_path / "perfjson"))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert os.path.basename(report["profile"]).startswith("perfjson_") and os.path.exists(report["profile"])


def test_parallel_run_profile_names_the_parallel_executor(tmp_path):
    model_path = save_model(conv_model(), "profile_conv.onnx")
    proc = onyx("run", model_path, "--random", "--parallel", "--opt-level", "disabled", "--profile",
                str(tmp_path / "par"))
    assert proc.returncode == 0, proc.stderr
    with open(re.search(r"^profile: (.+)$", proc.stdout, re.M).group(1)) as f:
        events = json.load(f)
    assert [e["name"] for e in events if e["name"].endswith("Executor::Execute")] == ["ParallelExecutor::Execute"]
    assert len([e for e in events if e["cat"] == "Node"]) == 5


def test_profile_with_test_dir_is_a_clear_error(tmp_path):
    proc = onyx("run", "--test-dir", str(tmp_path), "--profile")
    assert proc.returncode > 0
    assert "--profile" in proc.stderr and "--test-dir" in proc.stderr
