"""The `onyx` command: run (files, random inputs, output files, test folders), info, and clean
one-line errors with a non-zero exit on bad input."""
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import ONYX_BIN, save_model, _work_dir


def onyx(*args):
    return subprocess.run([ONYX_BIN, *args], capture_output=True, text=True, timeout=120)


def add_model(name="add.onnx", out_name="sum/out:0"):
    w = numpy_helper.from_array(np.arange(3, dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], [out_name], name="adder")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, ["batch", 3])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return save_model(model, name)


def assert_clean_error(proc, *fragments):
    assert proc.returncode > 0, f"expected a failure exit code, got {proc.returncode}"
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {proc.stderr!r}"
    assert lines[0].startswith("onyx: error: ")
    for f in fragments:
        assert f in lines[0], f"{f!r} not in {lines[0]!r}"


def test_run_writes_outputs_named_by_index_and_sanitized_name(tmp_path):
    model = add_model()
    x = np.ones((2, 3), np.float32)
    np.save(tmp_path / "x.npy", x)
    out_dir = tmp_path / "out"
    proc = onyx("run", model, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", str(out_dir))
    assert proc.returncode == 0, proc.stderr
    assert os.listdir(out_dir) == ["0_sum_out_0.npy"]
    np.testing.assert_array_equal(np.load(out_dir / "0_sum_out_0.npy"), x + np.arange(3))
    assert "sum/out:0: float [2,3] sum=12" in proc.stdout
    assert "time per run" in proc.stdout


def test_run_reads_tensorproto_inputs(tmp_path):
    model = add_model()
    x = np.full((2, 3), 2.0, np.float32)
    (tmp_path / "x.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    proc = onyx("run", model, "--input", f"x={tmp_path / 'x.pb'}", "--output-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "0_sum_out_0.npy"), x + np.arange(3))


def test_random_inputs_are_seeded_and_use_dims(tmp_path):
    model = add_model()
    a = onyx("run", model, "--random", "--dim", "batch=2", "--output-dir", str(tmp_path / "a"))
    b = onyx("run", model, "--random", "--dim", "batch=2", "--output-dir", str(tmp_path / "b"))
    c = onyx("run", model, "--random", "--dim", "batch=2", "--seed", "5", "--output-dir", str(tmp_path / "c"))
    assert a.returncode == 0 and b.returncode == 0 and c.returncode == 0, a.stderr + b.stderr + c.stderr
    ra, rb, rc = (np.load(tmp_path / d / "0_sum_out_0.npy") for d in "abc")
    assert ra.shape == (2, 3)
    np.testing.assert_array_equal(ra, rb)
    assert not np.array_equal(ra, rc)
    # A symbolic dim left out of --dim defaults to 1.
    d = onyx("run", model, "--random", "--output-dir", str(tmp_path / "d"))
    assert np.load(tmp_path / "d" / "0_sum_out_0.npy").shape == (1, 3)


def test_test_dir_reports_each_data_set(tmp_path):
    model = add_model()
    folder = tmp_path / "test_add"
    for i, scale in enumerate([1.0, 3.0]):
        ds = folder / f"test_data_set_{i}"
        ds.mkdir(parents=True)
        x = np.full((1, 3), scale, np.float32)
        (ds / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
        expected = x + np.arange(3, dtype=np.float32)
        if i == 1:
            expected = expected + 1  # wrong on purpose: this data set must fail
        (ds / "output_0.pb").write_bytes(numpy_helper.from_array(expected, "y").SerializeToString())
    (folder / "model.onnx").write_bytes(open(model, "rb").read())
    proc = onyx("run", "--test-dir", str(folder))
    assert "test_data_set_0: PASS" in proc.stdout
    assert "test_data_set_1: FAIL" in proc.stdout
    assert proc.returncode != 0


def test_info_lists_ops_and_nodes_without_kernels():
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["y"], name="a1"),
         helper.make_node("FancyOp", ["y"], ["z"], name="fancy", domain="example.domain")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("example.domain", 1)])
    model.ir_version = 8
    path = save_model(model, "info.onnx")
    proc = onyx("info", path)
    assert proc.returncode == 0, proc.stderr
    assert "ir_version: 8" in proc.stdout
    assert "example.domain.FancyOp" in proc.stdout
    assert "nodes without a kernel: 1" in proc.stdout
    assert "node 'fancy'" in proc.stdout and "no CPU kernel for op example.domain.FancyOp" in proc.stdout


@pytest.mark.parametrize("command", ["run", "info"])
def test_truncated_model(command, tmp_path):
    data = open(add_model(), "rb").read()
    for cut in (1, 7, len(data) // 2, len(data) - 3):
        path = tmp_path / f"cut{cut}.onnx"
        path.write_bytes(data[:cut])
        args = [command, str(path)] + (["--random"] if command == "run" else [])
        proc = onyx(*args)
        assert_clean_error(proc, str(path))


def test_random_bytes(tmp_path):
    rng = np.random.default_rng(3)
    for i in range(20):
        path = tmp_path / f"noise{i}.onnx"
        path.write_bytes(rng.integers(0, 256, size=int(rng.integers(1, 4000)), dtype=np.uint8).tobytes())
        assert_clean_error(onyx("run", str(path), "--random"), str(path))


def test_unknown_op_names_the_node():
    graph = helper.make_graph(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="the_node")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = save_model(model, "unknown_op.onnx")
    assert_clean_error(onyx("run", path, "--random"), "'the_node'", "Frobnicate", "opset 17")


@pytest.mark.parametrize("location", ["../outside.bin", "/etc/hostname", "sub/../../outside.bin"])
def test_external_data_outside_the_folder(tmp_path, location):
    tensor = onnx.TensorProto()
    tensor.name = "w"
    tensor.data_type = TensorProto.FLOAT
    tensor.dims.extend([2])
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", location
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [tensor])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(model.SerializeToString())
    (tmp_path / "outside.bin").write_bytes(b"\0" * 8)
    assert_clean_error(onyx("run", str(path), "--random"), location, "escapes" if not location.startswith("/") else "relative")


def test_wrong_feed_type_is_a_clean_error(tmp_path):
    model = add_model()
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.int64))
    assert_clean_error(onyx("run", model, "--input", f"x={tmp_path / 'x.npy'}"), "'x'", "int64", "tensor(float)")
    np.save(tmp_path / "x.npy", np.ones((2, 4), np.float32))
    assert_clean_error(onyx("run", model, "--input", f"x={tmp_path / 'x.npy'}"), "dimension 1 is 4 instead of 3")
    assert_clean_error(onyx("run", model, "--input", f"nope={tmp_path / 'x.npy'}"), "nope")
