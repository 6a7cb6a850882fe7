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


# Mutants of the bench models the campaign found crashing (too large to keep: each is rebuilt
# from its source, seed and index, see mutate_models.py --replay).
BENCH_MUTANTS = [
    # A Conv's strides set to [1, 2^31 - 1]: shapes the plan inferred for an in-place Concat no
    # longer held at run time and a producer wrote past the Concat's buffer (heap corruption).
    ("yolo_like.onnx", 2027, 204),
]


@pytest.mark.parametrize("source,seed,index", BENCH_MUTANTS, ids=lambda v: str(v))
def test_bench_mutant_runs_or_fails_cleanly(source, seed, index):
    folder = onyx_harness.bench_models_dir()
    path = os.path.join(folder, source)
    import onnx
    base = onnx.load(path)
    blob, _ = mutate_models.make_mutant(path, base, base.SerializeToString(), seed, index)
    mutant = os.path.join(onyx_harness.SCRATCH, f"mutant_{seed}_{index}.onnx")
    with open(mutant, "wb") as f:
        f.write(blob)
    try:
        verdict, stderr = mutate_models.run_mutant(onyx_harness.ONYX_BIN, mutant,
                                                   mutate_models.symbolic_dims(base), 60, 6 * 2**30)
    finally:
        os.remove(mutant)
    assert verdict in ("ran", "error"), (verdict, stderr)
