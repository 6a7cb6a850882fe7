"""Replays seeded model mutations (tests/fuzz/mutate_models.py) through `onyx run`: every mutant
either runs or fails with one clean line of valid UTF-8; none crashes or hangs. The mutants are
a pure function of (model, seed, index), so a failure here names one to replay by hand:
    python tests/fuzz/mutate_models.py --onyx BIN --replay MODEL:SEED:INDEX"""
import os
import sys

import pytest

import onyx_harness

sys.path.insert(0, os.path.join(onyx_harness.REPO, "tests", "fuzz"))
import mutate_models  # noqa: E402
import seed_models  # noqa: E402

def _assert_clean(counts, kept):
    bad = [f"{k['verdict']}: {k['id']} ({k['mutation']}): {k['stderr'][-300:]}" for k in kept]
    assert not bad, "\n".join(bad)
    assert counts["ran"] + counts["error"] == sum(counts.values())


@pytest.mark.parametrize("name", sorted(seed_models.SEED_MODELS))
def test_seed_model_mutants_run_or_fail_cleanly(name):
    folder = onyx_harness.SCRATCH
    path = os.path.join(folder, f"{name}.onnx")
    import onnx
    onnx.save(seed_models.SEED_MODELS[name](), path)
    counts, kept = mutate_models.mutate_source(onyx_harness.ONYX_BIN, path, seed=17, count=150, work=folder,
                                               jobs=2, timeout=30, log=lambda line: None)
    _assert_clean(counts, kept)
    # The campaign exercises both outcomes: some mutants still run, most are refused.
    assert counts["ran"] > 0 and counts["error"] > 0, dict(counts)


def test_real_model_mutants_run_or_fail_cleanly():
    source = onyx_harness.require_shared("models", "real", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    counts, kept = mutate_models.mutate_source(onyx_harness.ONYX_BIN, source, seed=3, count=40,
                                               work=onyx_harness.SCRATCH, jobs=2, timeout=30, log=lambda line: None)
    _assert_clean(counts, kept)


def test_declared_sizes_beyond_the_limit_are_refused_not_run():
    """A graph input declaring 2^31 x 224 x 224 x 3 elements is refused under the default limit
    (the harness relies on it), and the config entry moves the limit."""
    import onnx
    from onnx import TensorProto, helper
    folder = onyx_harness.SCRATCH
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2**31, 3, 224, 224])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = os.path.join(folder, "huge.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    verdict, stderr = mutate_models.run_mutant(onyx_harness.ONYX_BIN, path, {}, 30, 6 * 2**30, config=())
    assert verdict == "error" and b"onyx.loader.max_elements" in stderr, stderr
    small = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = os.path.join(folder, "small.onnx")
    onnx.save(helper.make_model(small, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert mutate_models.run_mutant(onyx_harness.ONYX_BIN, path, {}, 30, 6 * 2**30, config=())[0] == "ran"
    verdict, stderr = mutate_models.run_mutant(onyx_harness.ONYX_BIN, path, {}, 30, 6 * 2**30,
                                               config=("onyx.loader.max_elements=19",))
    assert verdict == "error" and b"more than 19 elements" in stderr, stderr
