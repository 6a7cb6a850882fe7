"""Real exported models from ../shared/models/real give the same outputs as ONNX Runtime 1.30 on
identical inputs, at more than one input shape (their dims are symbolic)."""
import numpy as np
import pytest

from onyx_harness import assert_outputs_close, require_shared, run_onnx_and_ort

IMAGE_CASES = [
    ("ch_PP-OCRv4_det_infer.onnx", [(1, 3, 640, 640), (1, 3, 320, 480)]),
    ("ch_PP-OCRv4_rec_infer.onnx", [(1, 3, 48, 320), (2, 3, 48, 160)]),
    ("ch_ppocr_mobile_v2.0_cls_infer.onnx", [(1, 3, 48, 192), (4, 3, 48, 192)]),
]


@pytest.mark.parametrize("model_name,shape", [(m, s) for m, shapes in IMAGE_CASES for s in shapes],
                         ids=lambda v: str(v))
def test_ppocr_matches_onnx_runtime(model_name, shape):
    path = require_shared("models", "real", model_name)
    rng = np.random.default_rng(sum(shape))
    inputs = {"x": rng.standard_normal(shape).astype(np.float32)}
    expected, got = run_onnx_and_ort(path, inputs)
    assert_outputs_close(expected, got, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("samples,rate", [(512, 16000), (256, 8000)])
def test_silero_vad_matches_onnx_runtime(samples, rate):
    path = require_shared("models", "real", "silero_vad_v5.onnx")
    rng = np.random.default_rng(samples)
    inputs = {
        "input": rng.uniform(-0.5, 0.5, (1, samples)).astype(np.float32),
        "state": np.zeros((2, 1, 128), np.float32),
        "sr": np.array(rate, np.int64),
    }
    expected, got = run_onnx_and_ort(path, inputs)
    assert_outputs_close(expected, got, rtol=1e-3, atol=1e-4)
