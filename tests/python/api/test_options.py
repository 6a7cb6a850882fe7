"""SessionOptions and RunOptions: each attribute onyx honours changes what the session does (a test
here fails if it is ignored), each one it cannot honour is an error naming it."""
import gc
import json
import os
import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onyx
import onyx_harness
from api_models import conv_relu_model, matmul_chain_model, model_bytes, relu_model, two_output_model
from onyx.capi import onnxruntime_pybind11_state as state


def saved_op_types(level):
    so = onyx.SessionOptions()
    so.graph_optimization_level = level
    so.optimized_model_filepath = os.path.join(onyx_harness._work_dir(), f"opt_{int(level)}.onnx")
    onyx.InferenceSession(conv_relu_model(), so)
    return [n.op_type for n in onnx.load(so.optimized_model_filepath).graph.node]


def test_graph_optimization_level_and_optimized_model_filepath():
    assert saved_op_types(onyx.GraphOptimizationLevel.ORT_DISABLE_ALL) == ["Conv", "Relu"]
    assert "Relu" not in saved_op_types(onyx.GraphOptimizationLevel.ORT_ENABLE_ALL)  # fused into the conv


def thread_count():
    return len(os.listdir("/proc/self/task"))


def threads_started(so, model=None):
    gc.collect()  # sessions of earlier tests end their threads now, not during the count
    before = thread_count()
    session = onyx.InferenceSession(model or matmul_chain_model(n=64, depth=2), so)
    session.run(None, {"x": np.ones((4, 64), np.float32)})
    started = thread_count() - before
    del session
    return started


def test_intra_op_num_threads_starts_that_many_workers():
    so = onyx.SessionOptions()
    so.intra_op_num_threads = 1
    assert threads_started(so) == 0  # the calling thread does the work
    so.intra_op_num_threads = 3
    assert threads_started(so) == 2


def test_execution_mode_and_inter_op_num_threads():
    so = onyx.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 3
    assert threads_started(so) == 0  # sequential: no inter-op threads
    so.execution_mode = onyx.ExecutionMode.ORT_PARALLEL
    assert threads_started(so) == 2


def test_use_per_session_threads_off_uses_the_global_pools():
    onyx.set_global_thread_pool_sizes(intra_op_num_threads=2, inter_op_num_threads=1)
    so = onyx.SessionOptions()
    so.use_per_session_threads = False
    assert threads_started(so) == 0
    so.use_per_session_threads = True
    so.intra_op_num_threads = 2
    assert threads_started(so) == 1


def test_free_dimension_override_by_name():
    so = onyx.SessionOptions()
    so.add_free_dimension_override_by_name("N", 2)
    session = onyx.InferenceSession(relu_model(), so)
    np.testing.assert_array_equal(session.run(None, {"x": -np.ones((2, 3), np.float32)})[0], np.zeros((2, 3)))
    with pytest.raises(state.InvalidArgument, match="dimension 0 is 3 instead of 2"):
        session.run(None, {"x": np.ones((3, 3), np.float32)})


def test_add_initializer_replaces_the_models():
    so = onyx.SessionOptions()
    w = np.array([100, 200, 300], np.float32)
    so.add_initializer("w", onyx.OrtValue.ortvalue_from_numpy(w))
    got = onyx.InferenceSession(two_output_model(), so).run(["sum"], {"a": np.ones((2, 3), np.float32),
                                                                       "b": np.ones((2, 3), np.float32)})[0]
    np.testing.assert_array_equal(got, np.tile(w + 2, (2, 1)))
    with pytest.raises(TypeError, match="OrtValue"):
        so.add_initializer("w", w)


def test_session_config_entries_reach_the_session():
    so = onyx.SessionOptions()
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    onyx.InferenceSession(relu_model(), so)
    so.add_session_config_entry("session.no_such_key", "1")
    with pytest.raises(state.InvalidArgument, match="session.no_such_key"):
        onyx.InferenceSession(relu_model(), so)
    with pytest.raises(RuntimeError, match="does not have configuration with key: nope"):
        so.get_session_config_entry("nope")


def test_packs_on_small_pages_entry():
    # Onyx's own entry (docs/memory.md): where the packs live changes, not what a Run computes;
    # the unit test SmallPagePacks checks the placement itself.
    x = np.random.default_rng(0).standard_normal((3, 1024)).astype(np.float32)
    outputs = []
    for value in ("0", "1", "auto"):
        so = onyx.SessionOptions()
        so.add_session_config_entry("onyx.memory.packs_on_small_pages", value)
        outputs.append(onyx.InferenceSession(matmul_chain_model(n=1024, depth=2), so).run(None, {"x": x})[0])
    np.testing.assert_array_equal(outputs[0], outputs[1])
    np.testing.assert_array_equal(outputs[0], outputs[2])
    np.testing.assert_allclose(outputs[1], x, rtol=0, atol=0)
    so = onyx.SessionOptions()
    so.add_session_config_entry("onyx.memory.packs_on_small_pages", "yes")
    with pytest.raises(state.InvalidArgument, match="onyx.memory.packs_on_small_pages"):
        onyx.InferenceSession(relu_model(), so)


def test_disable_specified_optimizers_entry():
    def ops(disabled=None, **kwargs):
        so = onyx.SessionOptions()
        so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = os.path.join(onyx_harness._work_dir(), "opt.onnx")
        if disabled:
            so.add_session_config_entry("optimization.disable_specified_optimizers", disabled)
        onyx.InferenceSession(conv_relu_model(), so, **kwargs)
        return [n.op_type for n in onnx.load(so.optimized_model_filepath).graph.node]

    assert ops() == ["FusedConv"]
    assert ops("ConvActivationFusion") == ["Conv", "Relu"]
    assert ops(disabled_optimizers=["ConvActivationFusion"]) == ["Conv", "Relu"]  # ORT's internal kwarg


def test_profiling_writes_onnxruntimes_trace(tmp_path):
    so = onyx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "myprofile")
    session = onyx.InferenceSession(conv_relu_model(), so)
    assert session.get_profiling_start_time_ns() > 0
    session.run(None, {"x": np.ones((1, 2, 5, 5), np.float32)})
    path = session.end_profiling()
    assert os.path.basename(path).startswith("myprofile") and path.endswith(".json")
    events = json.load(open(path))
    nodes = [e for e in events if e.get("cat") == "Node"]
    assert nodes and all(e["ph"] == "X" and "op_name" in e["args"] for e in nodes)
    assert {e["cat"] for e in events} >= {"Session", "Node"}


def test_profiling_off_by_default():
    session = onyx.InferenceSession(relu_model())
    assert session.get_profiling_start_time_ns() == 0
    assert session.end_profiling() == ""


def test_memory_and_determinism_options_reach_the_session():
    so = onyx.SessionOptions()
    so.enable_cpu_mem_arena = False
    so.enable_mem_pattern = False
    so.enable_mem_reuse = False
    so.use_deterministic_compute = True
    so.log_severity_level = 3
    so.log_verbosity_level = 1
    so.logid = "mine"
    c = so._to_c(["CPUExecutionProvider"])
    assert (c.enable_cpu_mem_arena, c.enable_mem_pattern, c.enable_mem_reuse) == (False, False, False)
    assert (c.use_deterministic_compute, c.log_severity_level, c.log_verbosity_level, c.logid) == (True, 3, 1, "mine")
    x = np.linspace(-1, 1, 64 * 4, dtype=np.float32).reshape(4, 64)
    got = onyx.InferenceSession(matmul_chain_model(n=64, depth=3), so).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, x, rtol=1e-6)


def test_default_logger_severity_applies_to_sessions_left_at_minus_one():
    so = onyx.SessionOptions()
    assert so.log_severity_level == -1
    onyx.set_default_logger_severity(3)
    try:
        assert so._to_c(["CPUExecutionProvider"]).log_severity_level == 3
        so.log_severity_level = 1
        assert so._to_c(["CPUExecutionProvider"]).log_severity_level == 1
    finally:
        onyx.set_default_logger_severity(2)
    with pytest.raises(ValueError, match=r"\[0, 4\]"):
        onyx.set_default_logger_severity(7)


def test_verbose_logging_goes_to_stderr_with_the_logid(capfd):
    so = onyx.SessionOptions()
    so.log_severity_level = 0
    so.log_verbosity_level = 1
    so.logid = "python-logid"
    onyx.InferenceSession(relu_model(), so).run(None, {"x": np.ones((1, 3), np.float32)})
    assert "python-logid" in capfd.readouterr().err
    so.log_severity_level = 3
    onyx.InferenceSession(relu_model(), so).run(None, {"x": np.ones((1, 3), np.float32)})
    assert "python-logid" not in capfd.readouterr().err


def test_defaults_are_onnxruntimes():
    import onnxruntime

    ours, theirs = onyx.SessionOptions(), onnxruntime.SessionOptions()
    for name in ("enable_cpu_mem_arena", "enable_mem_pattern", "enable_mem_reuse", "enable_profiling",
                 "inter_op_num_threads", "intra_op_num_threads", "log_severity_level", "log_verbosity_level", "logid",
                 "optimized_model_filepath", "profile_file_prefix", "use_deterministic_compute",
                 "use_per_session_threads"):
        assert getattr(ours, name) == getattr(theirs, name), name
    for name in ("graph_optimization_level", "execution_mode", "execution_order"):
        assert int(getattr(ours, name)) == int(getattr(theirs, name)), name
    ro_ours, ro_theirs = onyx.RunOptions(), onnxruntime.RunOptions()
    for name in ("log_severity_level", "log_verbosity_level", "logid", "only_execute_path_to_fetches", "terminate"):
        assert getattr(ro_ours, name) == getattr(ro_theirs, name), name


def test_options_onyx_cannot_honour_are_errors():
    so = onyx.SessionOptions()
    with pytest.raises(state.NotImplemented, match="execution_order"):
        so.execution_order = onyx.ExecutionOrder.PRIORITY_BASED
    so.execution_order = onyx.ExecutionOrder.DEFAULT  # the default is fine
    with pytest.raises(state.NotImplemented, match="denotation"):
        so.add_free_dimension_override_by_denotation("DATA_BATCH", 1)
    with pytest.raises(state.NotImplemented, match="custom-op"):
        so.register_custom_ops_library("libcustom.so")
    ro = onyx.RunOptions()
    with pytest.raises(state.NotImplemented, match="only_execute_path_to_fetches"):
        ro.only_execute_path_to_fetches = True
    with pytest.raises(state.InvalidArgument, match="gpu_graph_id"):
        ro.add_run_config_entry("gpu_graph_id", "1")


def test_attribute_types_are_checked_like_onnxruntime():
    so = onyx.SessionOptions()
    with pytest.raises(TypeError, match="intra_op_num_threads"):
        so.intra_op_num_threads = "2"
    with pytest.raises(TypeError, match="GraphOptimizationLevel"):
        so.graph_optimization_level = 5
    with pytest.raises(AttributeError):
        onyx.RunOptions().no_such_option = 1
    with pytest.raises(AttributeError, match="intra_op_threads"):
        so.intra_op_threads = 2  # misspelt: an error, as in ORT, not an ignored setting


def test_terminate_before_the_run():
    ro = onyx.RunOptions()
    ro.terminate = True
    with pytest.raises(state.Fail, match="terminated"):
        onyx.InferenceSession(relu_model()).run(None, {"x": np.ones((1, 3), np.float32)}, ro)
    ro.terminate = False
    onyx.InferenceSession(relu_model()).run(None, {"x": np.ones((1, 3), np.float32)}, ro)


def test_terminate_from_another_thread_stops_a_running_run():
    session = onyx.InferenceSession(matmul_chain_model(n=1024, depth=200))
    x = np.ones((64, 1024), np.float32)
    start = time.perf_counter()
    session.run(None, {"x": x})
    full = time.perf_counter() - start
    ro = onyx.RunOptions()
    timer = threading.Timer(full / 10, lambda: setattr(ro, "terminate", True))
    timer.start()
    with pytest.raises(state.Fail, match="terminated"):  # stopped mid-run: a finished run would not raise
        session.run(None, {"x": x}, ro)
    timer.join()


def test_run_logid_names_the_run_in_errors():
    shape = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = model_bytes([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], [x, shape], [y])
    ro = onyx.RunOptions()
    ro.logid = "run-seven"
    with pytest.raises(Exception, match="run-seven"):
        onyx.InferenceSession(model).run(None, {"x": np.ones((2, 3), np.float32), "shape": np.array([4, 4])}, ro)


def test_arena_shrinkage_run_config_entry():
    ro = onyx.RunOptions()
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert ro.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    assert ro._c.shrink_arena_after_run
    got = onyx.InferenceSession(relu_model()).run(None, {"x": -np.ones((1, 3), np.float32)}, ro)[0]
    np.testing.assert_array_equal(got, np.zeros((1, 3)))


def test_run_severity_minus_one_follows_the_default_logger(capfd):
    # A verbose default logger shows the run's verbose messages, named by the run's logid.
    session = onyx.InferenceSession(relu_model())
    ro = onyx.RunOptions()
    ro.logid = "run-logid"
    ro.log_verbosity_level = 1
    onyx.set_default_logger_severity(0)
    try:
        session.run(None, {"x": np.ones((1, 3), np.float32)}, ro)
    finally:
        onyx.set_default_logger_severity(2)
    verbose = capfd.readouterr().err
    session.run(None, {"x": np.ones((1, 3), np.float32)}, ro)
    assert "run-logid" in verbose and "run-logid" not in capfd.readouterr().err
