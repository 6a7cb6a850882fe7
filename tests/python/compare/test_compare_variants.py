"""bench/compare --variants: unknown names are an error naming them, a variant that does not apply
to a model is skipped with the reason printed, a variant row runs Onyx on the float32 twin as one
more worker in the rotation and its column comes from that worker's own medians, the variant rows
get their own table and geomeans while the float rows' stay as they were, and the output check
follows each variant's rule."""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onyx_harness

sys.path.insert(0, os.path.join(onyx_harness.REPO, "bench", "compare"))
import compare  # noqa: E402
import model_variants  # noqa: E402  (compare put bench/ on the path)
import variant_check  # noqa: E402


def test_unknown_variant_is_an_error_naming_it():
    proc = subprocess.run([sys.executable, os.path.join(onyx_harness.REPO, "bench", "compare", "compare.py"),
                           "--models", "mobilenetv2", "--variants", "int8-qdq,int9", "--engines", "ort"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "unknown variant int9" in proc.stderr and "int8-qdq" not in proc.stderr.split("unknown variant")[1].split("(")[0]


def test_variant_that_does_not_apply_is_skipped_with_its_reason(capsys):
    plan = compare.variant_plan(["efficientnet_b0", "resnet50", "ppocr_det"], ["int8-qop", "fp16"])
    assert plan == [("efficientnet_b0", "fp16"), ("resnet50", "int8-qop"), ("resnet50", "fp16")]
    out = capsys.readouterr().out
    assert "efficientnet_b0@int8-qop: skipped: int8-qop is built for resnet50, mobilenetv2, yolo_like only" in out
    assert "ppocr_det@int8-qop: skipped" in out and "ppocr_det@fp16: skipped" in out
    assert "resnet50@" not in out


def _args(variants=("int8-qdq",)):
    return argparse.Namespace(engines=["ort"], rounds=6, warmup=1, create_rounds=1, gap_ms=0.0, threads="1",
                              opt_level="all", variants=list(variants), models="mobilenetv2", rows_measured=0,
                              onyx_worker="onyx_bench_worker")


class FakeWorker:
    """A worker process stand-in: (engine, model) picks its run times and the outputs it saves."""
    made = []
    times = {}
    outputs = {}
    refuse = set()

    def __init__(self, cmd):
        self.key = (cmd[0], cmd[1])
        if self.key in FakeWorker.refuse:
            raise RuntimeError("worker said: error Fail: no bfloat16 kernel for Conv")
        FakeWorker.made.append(self.key)
        self.create_ms = 1.0
        self.runs = 0

    def run(self):
        values = FakeWorker.times.get(self.key, [1.0])
        self.runs += 1
        return values[(self.runs - 1) % len(values)]

    def ask(self, command, answer):
        if command.startswith("save "):
            folder = command[5:]
            os.makedirs(folder, exist_ok=True)
            np.save(os.path.join(folder, "0_y.npy"), FakeWorker.outputs.get(self.key, np.ones(4, np.float32)))
            return ""
        return "100"

    def close(self):
        pass


def _fake(monkeypatch):
    monkeypatch.setattr(compare, "Worker", FakeWorker)
    # onyx_fp32 runs the same worker binary as onyx: the fake tells them apart by the model path.
    monkeypatch.setattr(compare, "worker_command",
                        lambda engine, path, *rest, **kw: ["onyx" if engine == "onyx_fp32" else engine, path])
    FakeWorker.made, FakeWorker.refuse = [], set()


def test_variant_row_times_the_float32_twin_in_the_same_rotation(tmp_path, monkeypatch):
    _fake(monkeypatch)
    variant, twin = str(tmp_path / "m_int8.onnx"), str(tmp_path / "m.onnx")
    for p in (variant, twin):
        open(p, "wb").write(b"x")
    y = np.array([1, 2, 3], np.uint8)
    FakeWorker.times = {("onyx", variant): [2.0, 2.2, 1.8], ("ort", variant): [3.0],
                        ("onyx", twin): [5.0, 7.0, 6.0]}
    FakeWorker.outputs = {("onyx", variant): y, ("ort", variant): y}
    monkeypatch.setattr(variant_check, "output_steps", lambda path: {})
    args = _args()
    r = compare.measure("m@int8-qdq", variant, {"x": np.zeros(2, np.float32)}, 1, args, str(tmp_path),
                        variant="int8-qdq", float_path=twin)
    assert ("onyx", twin) in FakeWorker.made
    assert r["onyx_median"] == 2.0 and r["ort_median"] == 3.0 and r["onyx_fp32_median"] == 6.0
    assert r["agree"] and "all 3 equal" in r["agree_detail"]
    text = compare.table([r], args)
    line = next(l for l in text.splitlines() if l.startswith("| m@int8-qdq |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    # model, threads, Onyx, ORT, ORT/Onyx, Onyx fp32, Onyx fp32/variant
    assert cells[:7] == ["m@int8-qdq", "1", "2.00", "3.00", "1.50", "6.00", "3.00"]


def test_engine_that_cannot_run_a_variant_gets_its_error_and_the_float32_twin_is_the_reference(tmp_path, monkeypatch):
    _fake(monkeypatch)
    variant, twin = str(tmp_path / "m_bf16.onnx"), str(tmp_path / "m.onnx")
    for p in (variant, twin):
        open(p, "wb").write(b"x")
    FakeWorker.refuse = {("ort", variant)}
    FakeWorker.times = {("onyx", variant): [4.0], ("onyx", twin): [5.0]}
    FakeWorker.outputs = {("onyx", variant): np.array([1.0, 2.04], np.float32),
                          ("ort", twin): np.array([1.0, 2.0], np.float32)}
    r = compare.measure("m@bf16", variant, {"x": np.zeros(2, np.float32)}, 2, _args(["bf16"]), str(tmp_path),
                        variant="bf16", float_path=twin)
    assert r["ort_error"] == "no bfloat16 kernel for Conv" and "ort_median" not in r
    assert r["agree"] and r["agree_detail"].startswith("vs ORT on the float32 twin: ")
    assert "2.00% of max |ref|" in r["agree_detail"]
    line = next(l for l in compare.table([r], _args(["bf16"])).splitlines() if l.startswith("| m@bf16 |"))
    assert "ORT cannot run it: no bfloat16 kernel for Conv" in line
    assert [c.strip() for c in line.strip("|").split("|")][2:7] == ["4.00", "-", "-", "5.00", "1.25"]


def _tiny_cnn(path):
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_main_measures_the_selected_variants_built_into_variant_work(tmp_path, monkeypatch):
    _fake(monkeypatch)
    float_path = _tiny_cnn(str(tmp_path / "mobilenetv2.onnx"))
    feeds = {"x": np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)}
    monkeypatch.setattr(compare, "model_cases", lambda names: [("mobilenetv2", float_path, feeds)])
    monkeypatch.setenv("ONYX_WORK_DIR", onyx_harness.WORK_ROOT)
    monkeypatch.setattr(onyx_harness, "WORK_ROOT", onyx_harness.WORK_ROOT)
    work = str(tmp_path / "variants")
    fp16 = model_variants.variant_path("fp16", float_path, work)
    FakeWorker.times = {("onyx", float_path): [4.0], ("onyx", fp16): [3.0], ("ort", fp16): [6.0]}
    out = str(tmp_path / "table.md")
    monkeypatch.setattr(sys, "argv", ["compare.py", "--models", "mobilenetv2", "--variants", "fp16,int8-qop",
                                      "--variant-work", work, "--threads", "1", "--rounds", "2", "--warmup", "0",
                                      "--create-rounds", "1", "--gap-ms", "0", "--engines", "ort", "--no-float64",
                                      "--onyx-worker", "fake", "--out", out])
    compare.main()
    assert os.path.exists(fp16) and os.path.exists(model_variants.variant_path("int8-qop", float_path, work))
    text = open(out).read()
    line = next(l for l in text.splitlines() if l.startswith("| mobilenetv2@fp16 | 1 |"))
    assert [c.strip() for c in line.strip("|").split("|")][2:7] == ["3.00", "6.00", "2.00", "4.00", "1.33"]
    assert "| mobilenetv2@int8-qop | 1 |" in text and "| mobilenetv2 | 1 |" in text


def _variant_row(model, variant, onyx, ort, fp32):
    return {"model": f"{model}@{variant}", "threads": 1, "variant": variant, "onyx_median": onyx,
            "ort_median": ort, "onyx_fp32_median": fp32, "agree": True, "agree_detail": "all 10 equal"}


def test_variant_geomeans_are_their_own_and_the_float_rows_keep_theirs():
    args = _args(["int8-qdq", "int8-qop", "fp16"])
    float_row = {"model": "mobilenetv2", "threads": 1, "onyx_median": 10.0, "ort_median": 12.0,
                 "agree": True, "agree_detail": "max abs diff 1e-06"}
    rows = [_variant_row("mobilenetv2", "int8-qdq", 2.0, 3.0, 5.0),
            _variant_row("mobilenetv2", "int8-qop", 4.0, 4.0, 6.0),
            _variant_row("mobilenetv2", "fp16", 8.0, 6.0, 8.8),
            {"model": "mobilenetv2@int8-qdq", "threads": 2, "variant": "int8-qdq", "error": "boom"}]
    only_float = compare.table([float_row], args)
    text = compare.table([float_row] + rows, args)
    assert text.startswith(only_float.rstrip("\n"))  # the float table and its geomean as before
    assert "Geometric mean of ORT/Onyx over 1 rows: **1.200**" in text
    summary = {l.split("|")[1].strip(): [c.strip() for c in l.strip("|").split("|")]
               for l in text.splitlines() if l.startswith("| int8-") or l.startswith("| all ") or l.startswith("| fp16 |")}
    assert summary["int8-qdq"][1:4] == ["1", "1.500", "1.500 (mobilenetv2@int8-qdq, 1 thr)"]
    assert summary["int8-qdq"][4] == "2.500"
    # all int8: geomean of 1.5 and 1.0; fp32/int8 of 2.5 and 1.5; lowest named.
    assert summary["all int8"][1:6] == ["2", "1.225", "1.000 (mobilenetv2@int8-qop, 1 thr)", "1.936",
                                        "1.500 (mobilenetv2@int8-qop, 1 thr)"]
    assert summary["fp16"][2] == "0.750" and summary["fp16"][4] == "1.100"
    assert "| mobilenetv2@int8-qdq | 2 | error: boom |" in text
    lines = text.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("| model | threads | Onyx median | ORT median | ORT/Onyx | Onyx fp32"))
    assert lines[head + 1].count("|") == lines[head].count("|") and lines[head + 1].endswith("---:| ---|".replace(" ", ""))
    assert "--variants int8-qdq,int8-qop,fp16" in text


def _dq_output_model(path, scale):
    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    graph = helper.make_graph(nodes, "dq", [helper.make_tensor_value_info("q", TensorProto.UINT8, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
                               helper.make_tensor_value_info("q", TensorProto.UINT8, [4])],
                              [numpy_helper.from_array(np.array(scale, np.float32), "s"),
                               numpy_helper.from_array(np.array(3, np.uint8), "z")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _save(folder, *arrays):
    os.makedirs(folder, exist_ok=True)
    for i, a in enumerate(arrays):
        np.save(os.path.join(folder, f"{i}_out{i}.npy"), a)
    return folder


def test_int8_check_allows_one_output_step_and_no_integer_difference(tmp_path):
    steps = variant_check.output_steps(_dq_output_model(str(tmp_path / "dq.onnx"), 0.5))
    assert steps == {0: 0.5}
    q = np.array([1, 2, 3, 4], np.uint8)
    ref = _save(str(tmp_path / "ref"), np.array([0.0, 1.0, 2.0, 3.0], np.float32), q)
    one_step = _save(str(tmp_path / "a"), np.array([0.5, 1.0, 2.0, 3.0], np.float32), q)
    agree, note = variant_check.agreement(ref, one_step, "int8", steps)
    assert agree and "1.00 output steps" in note and "all 4 equal" in note
    two_steps = _save(str(tmp_path / "b"), np.array([1.0, 1.0, 2.0, 3.0], np.float32), q)
    assert not variant_check.agreement(ref, two_steps, "int8", steps)[0]
    flipped = _save(str(tmp_path / "c"), np.array([0.0, 1.0, 2.0, 3.0], np.float32), q + np.array([0, 0, 1, 0], np.uint8))
    agree, note = variant_check.agreement(ref, flipped, "int8", steps)
    assert not agree and "1 of 4 differ" in note
    # Without a known step a float output gets the float rows' tolerance.
    assert not variant_check.agreement(ref, one_step, "int8", {})[0]


def test_half_checks_take_a_share_of_the_largest_value(tmp_path):
    ref = _save(str(tmp_path / "ref"), np.array([10.0, -20.0], np.float32))
    off = _save(str(tmp_path / "off"), np.array([10.8, -20.0], np.float32))  # 4% of 20
    assert not variant_check.agreement(ref, off, "fp16")[0]
    agree, note = variant_check.agreement(ref, off, "bf16")
    assert agree and "4.00% of max |ref|" in note
    assert not variant_check.agreement(ref, _save(str(tmp_path / "far"), np.array([15.0, -20.0], np.float32)), "bf16")[0]


def test_fp16_passes_where_it_is_nearer_the_float32_twin_than_ort(tmp_path):
    ort_half = _save(str(tmp_path / "ort"), np.array([10.0, -20.0], np.float32))
    onyx = _save(str(tmp_path / "onyx"), np.array([10.8, -20.0], np.float32))  # 4% from ORT's
    near = _save(str(tmp_path / "near"), np.array([10.9, -20.0], np.float32))  # ORT off by 0.9, Onyx by 0.1
    agree, note = variant_check.agreement(ort_half, onyx, "fp16", float_dir=near)
    assert agree and "mean error vs the float32 twin: this 0.250%, ORT 2.250%" in note
    far = _save(str(tmp_path / "far"), np.array([9.9, -20.0], np.float32))  # ORT off by 0.1, Onyx by 0.9
    assert not variant_check.agreement(ort_half, onyx, "fp16", float_dir=far)[0]


def test_ort_errors_are_shortened_to_the_status_and_what_failed():
    e = RuntimeError("worker said: error InvalidGraph: [ONNXRuntimeError] : 10 : INVALID_GRAPH : Load model from "
                     "/x/m_bf16.onnx failed:This is an invalid model. Type Error: bfloat16 Conv")
    assert compare.worker_error(e) == "INVALID_GRAPH: This is an invalid model. Type Error: bfloat16 Conv"


def test_int8_dynamic_float_output_agrees_where_no_farther_from_the_float32_twin_than_ort(tmp_path):
    ort = _save(str(tmp_path / "ort"), np.array([1.0, 2.0, 3.0, 4.0], np.float32), np.array([7], np.uint8))
    onyx = _save(str(tmp_path / "onyx"), np.array([1.1, 2.0, 2.9, 4.0], np.float32), np.array([7], np.uint8))
    twin = _save(str(tmp_path / "twin"), np.array([1.05, 2.0, 2.95, 4.0], np.float32), np.array([7], np.uint8))
    # ORT and Onyx both 0.05 from the twin on two values: equal mean errors.
    agree, note = variant_check.agreement(ort, onyx, "int8", {}, float_dir=twin, dynamic=True)
    assert agree and "mean error vs the float32 twin: this 0.625%, ORT 0.625% (1.000x, at most 1.02x)" in note
    # The same outputs without the dynamic rule (QDQ / QOperator models) keep the strict tolerance.
    assert not variant_check.agreement(ort, onyx, "int8", {}, float_dir=twin)[0]
    # Farther from the twin than ORT by more than 2 %: no agreement.
    near_ort = _save(str(tmp_path / "near_ort"), np.array([1.01, 2.0, 3.0, 4.0], np.float32), np.array([7], np.uint8))
    agree, note = variant_check.agreement(ort, onyx, "int8", {}, float_dir=near_ort, dynamic=True)
    assert not agree and "(19.000x, at most 1.02x)" in note
    # An integer output still has to be equal.
    flipped = _save(str(tmp_path / "flipped"), np.array([1.1, 2.0, 2.9, 4.0], np.float32), np.array([8], np.uint8))
    assert not variant_check.agreement(ort, flipped, "int8", {}, float_dir=twin, dynamic=True)[0]


def test_int8_dynamic_row_checks_against_ort_on_the_float32_twin(tmp_path, monkeypatch):
    _fake(monkeypatch)
    variant, twin = str(tmp_path / "m_int8-dynamic.onnx"), str(tmp_path / "m.onnx")
    for p in (variant, twin):
        open(p, "wb").write(b"x")
    FakeWorker.outputs = {("onyx", variant): np.array([1.1, 2.0], np.float32),
                          ("ort", variant): np.array([1.0, 2.0], np.float32),
                          ("ort", twin): np.array([1.05, 2.0], np.float32)}
    monkeypatch.setattr(variant_check, "output_steps", lambda path: {})
    r = compare.measure("m@int8-dynamic", variant, {"x": np.zeros(2, np.float32)}, 1, _args(["int8-dynamic"]),
                        str(tmp_path), variant="int8-dynamic", float_path=twin)
    assert ("ort", twin) in FakeWorker.made
    assert r["agree"] and "mean error vs the float32 twin" in r["agree_detail"]
    FakeWorker.made = []
    r = compare.measure("m@int8-qdq", variant, {"x": np.zeros(2, np.float32)}, 1, _args(["int8-qdq"]),
                        str(tmp_path), variant="int8-qdq", float_path=twin)
    assert ("ort", twin) not in FakeWorker.made and not r["agree"]
