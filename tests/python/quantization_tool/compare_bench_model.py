"""One-off comparison (not a test: too slow for the test budget) of onyx.quantization and ONNX
Runtime's quantizer on a bench model, both quantized models run by ONNX Runtime against the float
model: image models quantize_static, 200 random images (output SNR, top-1 agreement); token models
(int64 inputs) quantize_dynamic, 8 bench feeds (output SNR). docs/quantization.md quotes it.

    ONYX_WORK_DIR=build/<preset>/test-work PYTHONPATH=tests/python \
        python tests/python/quantization_tool/compare_bench_model.py mobilenetv2"""
import os
import sys
import tempfile

import numpy as np

import onyx_harness

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qt_models as qm  # noqa: E402


def dynamic(name, src, entry):
    """Token models: quantize_dynamic by both tools, 8 bench feeds, SNR of every output."""
    import onnxruntime as ort
    import onnxruntime.quantization as rq
    import onyx.quantization as oq
    feeds = [onyx_harness.bench_feeds(entry, seed=s) for s in range(8)]
    with tempfile.TemporaryDirectory(dir=onyx_harness._work_dir()) as tmp:
        theirs, ours = os.path.join(tmp, "ort_q.onnx"), os.path.join(tmp, "onyx_q.onnx")
        rq.quantize_dynamic(src, theirs)
        oq.quantize_dynamic(src, ours)

        def run(path):
            s = onyx_harness.ort_session(ort, path)
            return [s.run(None, f) for f in feeds]

        ref, a, b = run(src), run(theirs), run(ours)
        for k in range(len(ref[0])):
            r, ra, rb = (np.concatenate([x[k].ravel() for x in outs]) for outs in (ref, a, b))
            print(f"{name} dynamic output {k}: ORT quantizer {qm.snr_db(r, ra):.2f} dB | "
                  f"onyx.quantization {qm.snr_db(r, rb):.2f} dB")


def main(name):
    import onnxruntime as ort
    import onnxruntime.quantization as rq
    import onyx.quantization as oq
    folder, manifest = onyx_harness.bench_manifest()
    src = os.path.join(folder, manifest[name]["file"])
    if manifest[name]["inputs"][0]["dtype"] == "int64":
        return dynamic(name, src, manifest[name])
    input_name = manifest[name]["inputs"][0]["name"]
    rng = np.random.default_rng(0)
    calib = [{input_name: rng.standard_normal((1, 3, 224, 224), dtype=np.float32)} for _ in range(16)]
    test = [rng.standard_normal((8, 3, 224, 224), dtype=np.float32) for _ in range(25)]
    with tempfile.TemporaryDirectory(dir=onyx_harness._work_dir()) as tmp:
        pre, theirs, ours = (os.path.join(tmp, f) for f in ("pre.onnx", "ort_q.onnx", "onyx_q.onnx"))
        oq.quant_pre_process(src, pre)

        def run(path):
            s = onyx_harness.ort_session(ort, path)
            return np.concatenate([s.run(None, {input_name: t})[0] for t in test])

        ref = run(pre)
        for fmt, per_channel in (("QDQ", False), ("QDQ", True), ("QOperator", True)):
            rq.quantize_static(pre, theirs, qm.ListReader(calib), quant_format=getattr(rq.QuantFormat, fmt),
                               per_channel=per_channel)
            oq.quantize_static(pre, ours, qm.ListReader(calib), quant_format=getattr(oq.QuantFormat, fmt),
                               per_channel=per_channel)
            rows = []
            for path in (theirs, ours):
                out = run(path)
                rows.append(f"{qm.snr_db(ref, out):.2f} dB, top-1 {int(np.sum(ref.argmax(1) == out.argmax(1)))}/200")
            print(f"{name} {fmt} {'per-channel' if per_channel else 'per-tensor'}: ORT quantizer {rows[0]} | "
                  f"onyx.quantization {rows[1]}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "mobilenetv2")
