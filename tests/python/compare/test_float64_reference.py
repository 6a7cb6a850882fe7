"""bench/compare's float64 reference: the widened model really computes in double (it matches a
numpy float64 evaluation far more closely than the float32 model does), what cannot be widened or
run is reported instead of stopping the benchmark, and a disagreement's note says how far each
engine is from the reference."""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

import pytest

import onyx_harness
from onyx_harness import run_onyx, save_model

sys.path.insert(0, os.path.join(onyx_harness.REPO, "bench", "compare"))
import compare  # noqa: E402
import float64_reference  # noqa: E402


def _require_onyx():
    if not os.path.exists(onyx_harness.ONYX_BIN):
        pytest.skip(f"{onyx_harness.ONYX_BIN} is absent (build the onyx CLI first)")


def _conv_model(rng):
    """Conv (3x3, pad 1) + a float Constant + an int64 Constant cast to float, summed."""
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    shift = rng.standard_normal((1, 4, 1, 1)).astype(np.float32)
    steps = np.arange(4, dtype=np.int64).reshape(1, 4, 1, 1)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Constant", [], ["shift"], value=numpy_helper.from_array(shift)),
        helper.make_node("Constant", [], ["steps"], value=numpy_helper.from_array(steps)),
        helper.make_node("Cast", ["steps"], ["steps_f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["conv", "shift"], ["shifted"]),
        helper.make_node("Add", ["shifted", "steps_f"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "conv_add", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, (w, b, shift, steps)


def _numpy_float64(x, w, b, shift, steps):
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # n c h w kh kw
    conv = np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64))
    return conv + b.astype(np.float64).reshape(1, -1, 1, 1) + shift.astype(np.float64) + steps.astype(np.float64)


def test_widened_model_computes_in_double():
    _require_onyx()
    rng = np.random.default_rng(3)
    model, params = _conv_model(rng)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    expected = _numpy_float64(x, *params)

    wide = float64_reference.to_float64(model)
    onnx.checker.check_model(wide, full_check=True)
    assert [n.attribute[0].i for n in wide.graph.node if n.op_type == "Cast"] == [TensorProto.DOUBLE]
    assert wide.graph.node[2].attribute[0].t.data_type == TensorProto.INT64  # other dtypes kept

    got, reason = float64_reference.run_float64(save_model(model, "conv_add.onnx"), {"x": x}, onyx_harness._work_dir(),
                                                onyx_harness.ONYX_BIN)
    assert reason is None and got[0].dtype == np.float64
    float32_out = run_onyx(save_model(model, "conv_add32.onnx"), {"x": x}, extra_args=("--opt-level", "disabled"))[0]
    assert np.max(np.abs(got[0] - expected)) < 1e-12
    assert np.max(np.abs(float32_out - expected)) > 1e-9  # float32 rounding is visible, so the above is double


def test_what_cannot_be_widened_or_run_is_reported():
    _require_onyx()
    folder = onyx_harness._work_dir()
    x = np.ones((2, 3), np.float32)
    dequant = helper.make_model(helper.make_graph(
        [helper.make_node("DequantizeLinear", ["q", "s"], ["y"], name="dq")], "dq",
        [helper.make_tensor_value_info("q", TensorProto.UINT8, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "s")]), opset_imports=[helper.make_opsetid("", 13)])
    out, reason = float64_reference.run_float64(save_model(dequant, "dq.onnx"), {"q": np.ones((2, 3), np.uint8)},
                                                folder, onyx_harness.ONYX_BIN)
    assert out is None and "'dq'" in reason and "DequantizeLinear" in reason

    # Converts (an unknown op keeps its inputs' type) but Onyx has no kernel for it.
    unknown = helper.make_model(helper.make_graph(
        [helper.make_node("NoSuchOp", ["x"], ["y"])], "unknown",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])]), opset_imports=[helper.make_opsetid("", 17)])
    out, reason = float64_reference.run_float64(save_model(unknown, "unknown.onnx"), {"x": x}, folder,
                                                onyx_harness.ONYX_BIN)
    assert out is None and "NoSuchOp" in reason


def test_disagreement_note_measures_both_engines_against_float64(tmp_path):
    reference = np.linspace(0.0, 1.0, 100)
    ort = reference.astype(np.float32)
    onyx = ort.copy()
    onyx[:3] += 1e-2  # three values off both ORT and the reference
    ort_dir, onyx_dir = tmp_path / "ort", tmp_path / "onyx"
    for folder, value in ((ort_dir, ort), (onyx_dir, onyx)):
        folder.mkdir()
        np.save(folder / "0_y.npy", value)
        np.save(folder / "1_ids.npy", np.arange(4))  # not a float output: no part in the float64 figures

    agree, note = compare.compare_outputs(str(ort_dir), str(onyx_dir), float64=([reference, np.arange(4)], None))
    assert not agree
    assert note.startswith("0_y.npy: 3 of 104 values off")
    assert "; vs float64: Onyx 3 off (mean err 3.0e-04), ORT 0 off (mean err " in note

    agree, note = compare.compare_outputs(str(ort_dir), str(onyx_dir), float64=(None, "no double kernel | here"))
    assert not agree and note.endswith("; no float64 reference: no double kernel / here")
