"""onyx.quantization.quantize_static against ONNX Runtime's own quantize_static on the same float
model and calibration data: both quantized models run in ONNX Runtime on 200 inputs, and Onyx's
must be at least as accurate against the float model (output SNR, top-1 agreement), within a
margin for rounding-level differences (SNR_MARGIN_DB, TOP1_MARGIN).

`pytest -s` prints the table docs/quantization.md quotes."""
import os

import numpy as np
import pytest

import qt_models as qm
from onyx_harness import ort_session, require_ort, save_model
import onyx.quantization as oq

SNR_MARGIN_DB = 0.25
TOP1_MARGIN = 1  # inputs of the 200
CONFIGS = [(fmt, pc, method) for fmt in ("QDQ", "QOperator") for pc in (False, True)
           for method in ("MinMax", "Entropy", "Percentile")]


def _run(ort, path, x):
    return ort_session(ort, path).run(None, {"x": x})[0]


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


@pytest.fixture(scope="module")
def real_classifier():
    """PaddleOCR's text-direction classifier (a real MobileNetV3 export, 0.6 MB, opset 9) moved
    to opset 13 and through onyx.quantization.quant_pre_process (ONNX Runtime's quantizer needs
    its Constant-node biases folded first): both quantizers get the same float model."""
    import shutil
    import tempfile

    import onnx
    from onnx import version_converter
    from onyx_harness import _work_dir, require_shared
    ort = require_ort()
    src = require_shared("models", "real", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    model = version_converter.convert_version(onnx.load(src), 13)
    model.ir_version = 8
    folder = tempfile.mkdtemp(dir=_work_dir(), prefix="cls-")  # module-wide: the per-test folder is not set yet
    raw, path = os.path.join(folder, "cls_opset13.onnx"), os.path.join(folder, "cls_pre.onnx")
    onnx.save(model, raw)
    oq.quant_pre_process(raw, path)
    rng = np.random.default_rng(21)
    calib = [{"x": rng.uniform(-1, 1, size=(1, 3, 48, 192)).astype(np.float32)} for _ in range(16)]
    test_x = rng.uniform(-1, 1, size=(200, 3, 48, 192)).astype(np.float32)
    yield ort, path, calib, test_x
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("fmt,per_channel", [("QDQ", False), ("QDQ", True), ("QOperator", False),
                                             ("QOperator", True)])
def test_real_classifier_at_least_as_accurate(real_classifier, fmt, per_channel):
    import onnxruntime.quantization as rq
    ort, path, calib, test_x = real_classifier
    ref = _run(ort, path, test_x)
    ort_path, onyx_path = path.replace("cls_pre", "cls_ort_q"), path.replace("cls_pre", "cls_onyx_q")
    rq.quantize_static(path, ort_path, qm.ListReader(calib), quant_format=getattr(rq.QuantFormat, fmt),
                       per_channel=per_channel)
    oq.quantize_static(path, onyx_path, qm.ListReader(calib), quant_format=getattr(oq.QuantFormat, fmt),
                       per_channel=per_channel)
    theirs, ours = _run(ort, ort_path, test_x), _run(ort, onyx_path, test_x)
    snr_theirs, snr_ours = qm.snr_db(ref, theirs), qm.snr_db(ref, ours)
    top1_theirs = int(np.sum(ref.argmax(1) == theirs.argmax(1)))
    top1_ours = int(np.sum(ref.argmax(1) == ours.argmax(1)))
    print(f"\ncls {fmt:<9} {'per-channel' if per_channel else 'per-tensor':<11} MinMax     "
          f"ORT quantizer: SNR {snr_theirs:6.2f} dB top-1 {top1_theirs}/200   "
          f"onyx.quantization: SNR {snr_ours:6.2f} dB top-1 {top1_ours}/200")
    assert snr_ours >= snr_theirs - SNR_MARGIN_DB, (snr_ours, snr_theirs)
    # two classes whose scores often sit near 0.5 on random inputs: a few flips either way
    assert top1_ours >= top1_theirs - 4, (top1_ours, top1_theirs)
