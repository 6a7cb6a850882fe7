"""QDQ fusion benchmark: a bench model quantized by ONNX Runtime's quantize_static (QDQ format,
uint8 activations, int8 weights), run with 1 thread in Onyx with the QDQ fusions, in Onyx with
them disabled (the DQ -> float op -> Q graph) and in ONNX Runtime, one run of each in turn
(alternating, so load on the machine hits all three alike); medians in milliseconds.

    PYTHONPATH=<site with the onyx package>:tests/python .venv/bin/python bench/qdq_fusion.py \
        [--model mobilenetv2] [--runs 30] [--per-channel] [--models-dir DIR]

The float model comes from --models-dir, else onyx_harness.bench_models_dir() (generated from
../shared/models/bench)."""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
from bench_util import cpu_model

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))

QDQ_PASSES = ["QdqPropagation", "QdqBiasQuantization", "QdqClipReluElimination", "QdqS8ToU8", "QdqConvMatMulFusion", "QdqOpFusion", "QdqDropFusion", "QdqDynamicMatMulFusion"]


def quantize(float_path, out_path, shape, per_channel, samples=8):
    """ORT's recommended flow: quant_pre_process (shape inference, BatchNormalization folded
    into the convs), then quantize_static."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    prepared = out_path.replace(".onnx", "_prepared.onnx")
    quant_pre_process(float_path, prepared, skip_symbolic_shape=True)

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(0)
            self.feeds = iter([{"input": rng.standard_normal(shape).astype(np.float32)} for _ in range(samples)])

        def get_next(self):
            return next(self.feeds, None)

    quantize_static(prepared, out_path, Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=per_channel)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mobilenetv2")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--per-channel", action="store_true")
    parser.add_argument("--keep", help="also save the quantized model here")
    parser.add_argument("--models-dir", help="a folder holding <model>.onnx (default: the generated bench models)")
    args = parser.parse_args()

    import onnxruntime as ort
    import onyx
    ort.set_default_logger_severity(3)
    from onyx_harness import bench_models_dir

    float_path = os.path.join(args.models_dir or bench_models_dir(), f"{args.model}.onnx")
    shape = (1, 3, 224, 224)
    with tempfile.TemporaryDirectory() as tmp:
        qdq_path = os.path.join(tmp, f"{args.model}_qdq.onnx")
        quantize(float_path, qdq_path, shape, args.per_channel)
        if args.keep:
            import shutil
            shutil.copy(qdq_path, args.keep)

        def onyx_session(disabled):
            so = onyx.SessionOptions()
            so.intra_op_num_threads = 1
            so.inter_op_num_threads = 1
            return onyx.InferenceSession(qdq_path, so, providers=["CPUExecutionProvider"],
                                         disabled_optimizers=disabled)

        so = ort.SessionOptions()
        so.log_severity_level = 3
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sessions = {
            "onyx (QDQ fusion)": onyx_session([]),
            "onyx (fusion off)": onyx_session(QDQ_PASSES),
            f"onnxruntime {ort.__version__}": ort.InferenceSession(qdq_path, so, providers=["CPUExecutionProvider"]),
        }
        feed = {"input": np.random.default_rng(1).standard_normal(shape).astype(np.float32)}
        outputs = {name: s.run(None, feed)[0] for name, s in sessions.items()}  # warm-up
        times = {name: [] for name in sessions}
        for _ in range(args.runs):
            for name, s in sessions.items():
                start = time.perf_counter()
                s.run(None, feed)
                times[name].append((time.perf_counter() - start) * 1e3)

    print(f"{args.model} QDQ (uint8 activations, int8 weights, per_channel={args.per_channel}), 1 thread, "
          f"{args.runs} alternating runs, CPU: {cpu_model()}")
    reference = outputs[f"onnxruntime {ort.__version__}"]
    for name, t in times.items():
        diff = float(np.max(np.abs(outputs[name] - reference)))
        print(f"  {name:28s} median {statistics.median(t):8.2f} ms   min {min(t):8.2f} ms   "
              f"max |out - ORT| {diff:.4g}")


if __name__ == "__main__":
    main()
