"""onyx.quantization.quantize_static against ONNX Runtime's own quantize_static on the same float
model and calibration data: both quantized models run in ONNX Runtime on 200 inputs, and Onyx's
must be at least as accurate against the float model (output SNR, top-1 agreement), within a
margin for rounding-level differences (SNR_MARGIN_DB, TOP1_MARGIN).

`pytest -s` prints the table docs/quantization.md quotes."""
import numpy as np
import pytest

import qt_models as qm
from onyx_harness import require_ort, save_model
import onyx.quantization as oq

SNR_MARGIN_DB = 0.25
TOP1_MARGIN = 1  # inputs of the 200
CONFIGS = [(fmt, pc, method) for fmt in ("QDQ", "QOperator") for pc in (False, True)
           for method in ("MinMax", "Entropy", "Percentile")]


def _run(ort, path, x):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


@pytest.fixture(scope="module")
def setup():
    ort = require_ort()
    model = qm.conv_net(seed=3)
    calib = qm.feeds_for(model, 32, seed=11)
    rng = np.random.default_rng(12)
    test_x = rng.normal(size=(200, 3, 16, 16)).astype(np.float32)
    return ort, model, calib, test_x


@pytest.mark.parametrize("fmt,per_channel,method", CONFIGS,
                         ids=[f"{f}-{'pc' if p else 'pt'}-{m}" for f, p, m in CONFIGS])
def test_at_least_as_accurate_as_ort_quantizer(setup, fmt, per_channel, method):
    import onnxruntime.quantization as rq
    ort, model, calib, test_x = setup
    float_path = save_model(model, "float.onnx")
    ref = _run(ort, float_path, test_x)
    ort_path = float_path.replace("float.onnx", "ort_quantized.onnx")
    onyx_path = float_path.replace("float.onnx", "onyx_quantized.onnx")
    rq.quantize_static(float_path, ort_path, qm.ListReader(calib), quant_format=getattr(rq.QuantFormat, fmt),
                       per_channel=per_channel, calibrate_method=getattr(rq.CalibrationMethod, method))
    oq.quantize_static(float_path, onyx_path, qm.ListReader(calib), quant_format=getattr(oq.QuantFormat, fmt),
                       per_channel=per_channel, calibrate_method=getattr(oq.CalibrationMethod, method))
    theirs, ours = _run(ort, ort_path, test_x), _run(ort, onyx_path, test_x)
    snr_theirs, snr_ours = qm.snr_db(ref, theirs), qm.snr_db(ref, ours)
    top1_theirs = int(np.sum(ref.argmax(1) == theirs.argmax(1)))
    top1_ours = int(np.sum(ref.argmax(1) == ours.argmax(1)))
    print(f"\n{fmt:<9} {'per-channel' if per_channel else 'per-tensor':<11} {method:<10} "
          f"ORT quantizer: SNR {snr_theirs:6.2f} dB top-1 {top1_theirs}/200   "
          f"onyx.quantization: SNR {snr_ours:6.2f} dB top-1 {top1_ours}/200")
    assert snr_ours >= snr_theirs - SNR_MARGIN_DB, (snr_ours, snr_theirs)
    assert top1_ours >= top1_theirs - TOP1_MARGIN, (top1_ours, top1_theirs)
    assert snr_ours > 20.0  # and it is a real quantization, not a copy of the float model
    assert snr_ours < 80.0
