"""Every test gets its own scratch folder under the work root, removed when the test ends: the
optimized bench models alone are hundreds of megabytes each, and a full run must fit on a small
CI disk."""
import os
import shutil
import tempfile

# The bf16 GEMM runs by default only where this CPU's vdpbf16ps outruns FMA (bf16_gemm.h,
# Bf16GemmWorthIt); the tests of its numerics run it wherever the CPU has AVX-512 BF16.
os.environ.setdefault("ONYX_BF16_GEMM", "on")

import onnx
import pytest

import onyx_harness

# onnx 1.23's helper.make_model stamps IR version 14, which its own onnx.proto still marks
# unpublished ("published on TBD"); ONNX Runtime 1.31.1, the reference, and Onyx read up to 13.
# Models the tests build get 13 unless a test sets another version itself.
NEWEST_PUBLISHED_IR_VERSION = 13
_make_model = onnx.helper.make_model


def _make_model_with_published_ir(graph, **kwargs):
    kwargs.setdefault("ir_version", min(onnx.IR_VERSION, NEWEST_PUBLISHED_IR_VERSION))
    return _make_model(graph, **kwargs)


onnx.helper.make_model = _make_model_with_published_ir


@pytest.fixture(autouse=True)
def scratch_folder_per_test():
    root = onyx_harness._work_dir()
    folder = tempfile.mkdtemp(dir=root, prefix="test-")
    onyx_harness.SCRATCH = folder
    try:
        yield folder
    finally:
        onyx_harness.SCRATCH = None
        shutil.rmtree(folder, ignore_errors=True)
