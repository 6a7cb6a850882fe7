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
