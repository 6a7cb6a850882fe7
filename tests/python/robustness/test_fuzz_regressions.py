"""The models the fuzz harnesses keep as regressions (tests/fuzz/regressions/session) through the
`onyx` command as a user would run them: each runs or fails with one clean line, never a signal.
Before the shape-inference fixes they found, `onyx run --random` died with SIGSEGV on two of them
(Slice on a scalar, Add of a scalar's empty shape and a length-1 constant)."""
import glob
import os
import sys

import pytest

import onyx_harness

sys.path.insert(0, os.path.join(onyx_harness.REPO, "tests", "fuzz"))
import mutate_models  # noqa: E402

MODELS = sorted(glob.glob(os.path.join(onyx_harness.REPO, "tests", "fuzz", "regressions", "session", "*.onnx")))


def test_there_are_regression_models():
    assert len(MODELS) >= 3, MODELS


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_regression_model_runs_or_fails_cleanly(path):
    verdict, stderr = mutate_models.run_mutant(onyx_harness.ONYX_BIN, path, {}, 30, 6 * 2**30)
    assert verdict in ("ran", "error"), (verdict, stderr)


# Mutants of the bench and real models the campaign found crashing (too large to keep: each is
# rebuilt from its source, seed and index, see mutate_models.py --replay).
MUTANTS = [
    # A Conv's strides set to [1, 2^31 - 1]: shapes the plan inferred for an in-place Concat no
    # longer held at run time and a producer wrote past the Concat's buffer (heap corruption).
    ("bench", "yolo_like.onnx", 2027, 204),
    # A depthwise Conv's strides set to [1, INT64_MAX]: its column bounds overflowed (heap
    # corruption).
    ("real", "ch_ppocr_mobile_v2.0_cls_infer.onnx", 2028, 3156),
]


@pytest.mark.parametrize("kind,source,seed,index", MUTANTS, ids=lambda v: str(v))
def test_mutant_runs_or_fails_cleanly(kind, source, seed, index):
    if kind == "bench":
        path = os.path.join(onyx_harness.bench_models_dir(), source)
    else:
        path = onyx_harness.require_shared("models", "real", source)
    import onnx
    base = onnx.load(path)
    blob, _ = mutate_models.make_mutant(path, base, base.SerializeToString(), seed, index)
    mutant = os.path.join(onyx_harness.SCRATCH, f"mutant_{seed}_{index}.onnx")
    with open(mutant, "wb") as f:
        f.write(blob)
    try:
        # As the campaign ran it: its dims, feeds and loader limit.
        dims = mutate_models.symbolic_dims(base, overrides=mutate_models.DIM_OVERRIDES)
        feeds = mutate_models.source_feeds(path, onyx_harness.SCRATCH)
        verdict, stderr = mutate_models.run_mutant(onyx_harness.ONYX_BIN, mutant, dims, 60, 6 * 2**30, feeds,
                                                   mutate_models.DEFAULT_CONFIG)
    finally:
        os.remove(mutant)
    assert verdict in ("ran", "error"), (verdict, stderr)
