"""Thread flags of `onyx run` and `onyx perf`: --parallel, --inter-threads, --config; results
checked against ONNX Runtime, bad values as clean one-line errors."""
import json
import subprocess

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import ONYX_BIN, assert_outputs_close, run_onyx, run_ort, save_model


def onyx(*args):
    return subprocess.run([ONYX_BIN, *args], capture_output=True, text=True, timeout=120)


def branchy_model():
    """Four independent branches over x, joined by a Sum: room for four inter-op lanes."""
    w = numpy_helper.from_array(np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8), "w")
    nodes = [
        helper.make_node("Tanh", ["x"], ["a"]),
        helper.make_node("MatMul", ["x", "w"], ["b"]),
        helper.make_node("Sigmoid", ["x"], ["c"]),
        helper.make_node("Abs", ["x"], ["d"]),
        helper.make_node("Sum", ["a", "b", "c", "d"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return save_model(model, "thread_flags_branchy.onnx")


def test_parallel_run_matches_onnx_runtime():
    model = branchy_model()
    x = np.random.default_rng(3).standard_normal((16, 8)).astype(np.float32)
    expected = run_ort(model, {"x": x})
    for extra in (["--parallel", "--inter-threads", "4"], ["--parallel", "--inter-threads", "2", "--config",
                                                          "session.intra_op.allow_spinning=0"]):
        assert_outputs_close(expected, run_onyx(model, {"x": x}, threads=2, extra_args=extra))


def test_perf_reports_the_resolved_thread_setup():
    model = branchy_model()
    proc = onyx("perf", model, "--threads", "2", "--parallel", "--inter-threads", "3", "--runs", "3", "--json",
                "--config", "session.dynamic_block_base=2")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["threads"] == 2
    assert report["inter_threads"] == 3
    assert report["execution_mode"] == "parallel"
    proc = onyx("perf", model, "--threads", "1", "--runs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "threads: 1 intra-op; sequential execution" in proc.stdout


def test_bad_thread_settings_are_clean_errors():
    model = branchy_model()
    for args, fragment in [
        (["--config", "session.intra_op.allow_spinning=maybe"], "session.intra_op.allow_spinning"),
        (["--config", "session.no_such_key=1"], "session.no_such_key"),
        (["--config", "novalue"], "KEY=VALUE"),
        (["--threads", "3", "--config", "session.intra_op_thread_affinities=1"], "one entry per worker"),
        (["--inter-threads", "-1"], "inter_op_num_threads"),
    ]:
        proc = onyx("perf", model, "--runs", "1", *args)
        assert proc.returncode > 0, args
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("onyx: error: "), proc.stderr
        assert fragment in lines[0], (fragment, lines[0])
