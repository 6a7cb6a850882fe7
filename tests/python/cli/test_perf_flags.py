"""onnxruntime_perf_test's flags in `onyx perf`, each shown to take effect: the run count and
length (-m/-r/-t), provider (-e), level (-o, seen in the profile's op names), profile (-p),
concurrent runs (-c, seen in the profile's threads), inputs (-I/-S/-f/-F), arena and memory
pattern (-A/-M, seen in the arena's own counters), provider options (-i), statistics (-s) and
threads (-x/-y/-P)."""
import collections
import glob
import json
import os
import re
import subprocess

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onyx_harness
from onyx_harness import ONYX_BIN, save_model


def onyx(*args, timeout=300):
    return subprocess.run([ONYX_BIN, *args], capture_output=True, text=True, timeout=timeout)


def perf_json(*args):
    proc = onyx("perf", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def one_line_error(proc, fragment):
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("onyx: error: "), proc.stderr
    assert fragment in lines[0], (fragment, lines[0])


def matmul_model(k=64):
    """x[batch, k] @ w[k, k] -> Relu: 'batch' is a free dimension."""
    w = numpy_helper.from_array(np.linspace(-1, 1, k * k, dtype=np.float32).reshape(k, k), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"), helper.make_node("Relu", ["y"], ["z"], name="relu")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", k])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", k])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def conv_relu_model():
    w = numpy_helper.from_array(np.full((4, 3, 3, 3), 0.1, np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], [w])
    return save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
                      "perf_flags_conv.onnx")


def profile_events(prefix):
    files = glob.glob(prefix + "_*.json")
    assert len(files) == 1, files
    with open(files[0]) as f:
        return json.load(f)


def test_run_count_and_duration_modes():
    model = save_model(matmul_model(), "perf_flags_mm.onnx")
    assert perf_json(model, "-m", "times", "-r", "7")["runs"] == 7
    assert perf_json(model, "-r", "4")["runs"] == 4  # -r alone counts runs, as --runs does
    report = perf_json(model, "-m", "duration", "-t", "1")
    assert report["run_time_s"] >= 1.0 and report["runs"] > 7
    one_line_error(onyx("perf", model, "-m", "forever"), "-m")
    one_line_error(onyx("perf", model, "-m", "times", "-t", "2"), "-m times")
    one_line_error(onyx("perf", model, "-m", "duration", "-r", "2"), "-m duration")


def test_threads_and_parallel_executor():
    model = save_model(matmul_model(), "perf_flags_mm.onnx")
    report = perf_json(model, "-x", "1", "-r", "2")
    assert report["threads"] == 1 and report["execution_mode"] == "sequential"
    report = perf_json(model, "-x", "2", "-P", "-y", "3", "-r", "2")
    assert (report["threads"], report["inter_threads"], report["execution_mode"]) == (2, 3, "parallel")


def test_execution_provider():
    model = save_model(matmul_model(), "perf_flags_mm.onnx")
    assert perf_json(model, "-e", "cpu", "-r", "1")["providers"] == ["CPUExecutionProvider"]
    proc = onyx("perf", model, "-e", "cuda", "-r", "1", "--json")
    if proc.returncode == 0:  # a build with CUDA, on a GPU
        assert json.loads(proc.stdout)["providers"][0] == "CUDAExecutionProvider"
    elif "CUDAExecutionProvider cannot be created" in proc.stderr:  # a build with CUDA, no GPU here
        one_line_error(proc, "no usable CUDA device")
    else:
        one_line_error(proc, "-e cuda: this build of Onyx has no CUDA execution provider")
    one_line_error(onyx("perf", model, "-e", "tpu"), "-e tpu")


def test_cuda_provider_options_reach_the_provider():
    model = save_model(matmul_model(), "perf_flags_mm.onnx")
    proc = onyx("perf", model, "-e", "cuda", "-i", "device_id|0 gpu_mem_limt|1024", "-r", "1")
    if "no CUDA execution provider" in proc.stderr:  # a build without CUDA
        one_line_error(proc, "-e cuda")
    else:  # the misspelt key is named, on any machine: options are checked before the device
        one_line_error(proc, "gpu_mem_limt")
        one_line_error(onyx("perf", model, "-e", "cuda", "-i", "device_id"), "key|value")


def test_provider_options_are_not_dropped():
    model = save_model(matmul_model(), "perf_flags_mm.onnx")
    one_line_error(onyx("perf", model, "-i", "arena_extend_strategy|kSameAsRequested"), "-i arena_extend_strategy")
    assert perf_json(model, "-i", "", "-r", "1")["runs"] == 1


def test_optimization_level_shows_in_the_profile():
    model = conv_relu_model()
    ops = {}
    for level in ("0", "1", "99", "3"):
        prefix = os.path.join(onyx_harness.SCRATCH, f"level{level}")
        perf_json(model, "-o", level, "-p", prefix, "-r", "1", "--warmup", "0")
        ops[level] = sorted(e["args"]["op_name"] for e in profile_events(prefix) if e["cat"] == "Node")
    assert ops["0"] == ["Conv", "Relu"]
    assert "Relu" not in ops["99"] and len(ops["99"]) < 2  # Conv+Relu fused
    assert ops["3"] == ops["99"]  # perf_test's layout level is within "all"
    one_line_error(onyx("perf", model, "-o", "5"), "-o 5")


def test_profile_flag_records_every_run():
    model = save_model(matmul_model(), "perf_flags_mm.onnx")
    prefix = os.path.join(onyx_harness.SCRATCH, "prof")
    report = perf_json(model, "-p", prefix, "-r", "3", "--warmup", "1", "-o", "0")
    assert os.path.basename(report["profile"]).startswith("prof_")
    runs = [e for e in profile_events(prefix) if e["name"] == "model_run"]
    assert len(runs) == 4  # the warm-up run is profiled too, as in perf_test


def test_concurrent_runs_come_from_several_threads():
    model = save_model(matmul_model(256), "perf_flags_mm256.onnx")
    prefix = os.path.join(onyx_harness.SCRATCH, "conc")
    report = perf_json(model, "-c", "3", "-r", "30", "-x", "1", "-p", prefix, "--warmup", "0", "-f", "batch:64")
    assert report["runs"] == 30 and report["concurrent"] == 3
    runs = [e for e in profile_events(prefix) if e["name"] == "model_run"]
    assert len(runs) == 30
    # Each of the three workers takes its share of the 30 runs, on its own thread.
    tids = collections.Counter(e["tid"] for e in runs)
    assert sorted(tids.values()) == [10, 10, 10], tids
    one_line_error(onyx("perf", model, "-c", "0"), "-c")
    # One at a time: every run on the calling thread.
    prefix1 = os.path.join(onyx_harness.SCRATCH, "one")
    perf_json(model, "-r", "5", "-x", "1", "-p", prefix1, "--warmup", "0")
    assert len({e["tid"] for e in profile_events(prefix1) if e["name"] == "model_run"}) == 1


def test_inputs_from_test_data_unless_generated():
    """perf_test feeds test_data_set_0 beside the model; -I generates inputs, free dims 1 unless -f."""
    folder = os.path.join(onyx_harness.SCRATCH, "model_dir")
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    model = os.path.join(folder, "model.onnx")
    with open(model, "wb") as f:
        f.write(matmul_model().SerializeToString())
    x = np.arange(3 * 64, dtype=np.float32).reshape(3, 64)
    with open(os.path.join(folder, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    report = perf_json(model, "-r", "1")
    assert report["input_source"] == "test_data_set_0" and report["inputs"] == {"x": [3, 64]}
    saved = os.path.join(onyx_harness.SCRATCH, "saved")
    perf_json(model, "-r", "1", "--save-inputs", saved)
    np.testing.assert_array_equal(np.load(os.path.join(saved, "x.npy")), x)
    report = perf_json(model, "-r", "1", "-I")
    assert report["input_source"] == "generated" and report["inputs"] == {"x": [1, 64]}
    assert perf_json(model, "-r", "1", "-I", "-f", "batch:5")["inputs"] == {"x": [5, 64]}


def test_seed_picks_the_generated_values():
    model = save_model(matmul_model(), "perf_flags_mm.onnx")

    def inputs(*seed):
        out = os.path.join(onyx_harness.SCRATCH, "seed_" + "_".join(seed))
        perf_json(model, "-r", "1", "-I", "--save-inputs", out, *seed)
        return np.load(os.path.join(out, "x.npy"))

    np.testing.assert_array_equal(inputs("-S", "1"), inputs("--seed", "1"))
    assert not np.array_equal(inputs("-S", "1"), inputs("-S", "2"))
    assert not np.array_equal(inputs("-S", "-1"), inputs("-S", "-1"))  # negative: a fresh seed each time


def test_free_dimension_overrides():
    model = save_model(matmul_model(), "perf_flags_mm.onnx")
    assert perf_json(model, "-r", "1", "-f", "batch:4")["inputs"] == {"x": [4, 64]}
    # several pairs in one -f, as perf_test allows; an unknown symbol is an error in Onyx
    one_line_error(onyx("perf", model, "-r", "1", "-f", "batch:4 seq:9"), "seq")
    one_line_error(onyx("perf", model, "-f", "batch:0"), "-f batch:0")
    one_line_error(onyx("perf", model, "-f", "batch"), "NAME:VALUE")
    one_line_error(onyx("perf", model, "-F", "DATA_BATCH:4"), "-F DATA_BATCH")


def test_arena_and_memory_pattern_switches():
    model = save_model(matmul_model(), "perf_flags_mm.onnx")
    default = perf_json(model, "-r", "3")["arena"]
    assert default["reserved_bytes"] > 0 and default["pattern_blocks"] >= 1 and default["pattern_allocations"] > 0
    no_pattern = perf_json(model, "-r", "3", "-M")["arena"]
    assert no_pattern["reserved_bytes"] > 0 and no_pattern["pattern_blocks"] == 0
    assert no_pattern["pattern_allocations"] == 0
    assert perf_json(model, "-r", "3", "-A")["arena"] is None


def test_perf_test_figures_and_statistics():
    model = save_model(matmul_model(), "perf_flags_mm.onnx")
    proc = onyx("perf", model, "-m", "times", "-r", "20")
    assert proc.returncode == 0, proc.stderr
    for label in ("Session creation time cost:", "First inference time cost:", "Total inference time cost:",
                  "Total inference requests: 20", "Average inference time cost:", "Total inference run time:",
                  "Number of inferences per second:", "Avg CPU usage:", "Peak working set size:"):
        assert label in proc.stdout, label
    assert "p99" in proc.stdout and "peak resident memory" in proc.stdout
    assert "P999 Latency" not in proc.stdout
    proc = onyx("perf", model, "-m", "times", "-r", "20", "-s")
    values = [float(v) for v in re.findall(r"^(?:Min|P50|P90|P95|P99|P999|Max) Latency: ([0-9.]+) s$", proc.stdout, re.M)]
    labels = re.findall(r"^(\w+) Latency:", proc.stdout, re.M)
    assert labels == ["Min", "Max", "P50", "P90", "P95", "P99", "P999"]
    order = [values[0], values[2], values[3], values[4], values[5], values[6], values[1]]
    assert order == sorted(order) and values[1] > 0
