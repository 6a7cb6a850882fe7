"""int8 forms benchmark: bench models quantized by ONNX Runtime's own quantizer in each form,
run in Onyx and in ONNX Runtime on the same inputs, one run of each in turn (alternating, so
load on the machine hits both alike), at 1 and 2 threads; medians in milliseconds.

  qdq      quantize_static, QDQ (uint8 activations, int8 weights), CNNs
  qop      quantize_static, QOperator (QLinearConv, com.microsoft QLinearAdd, ...), CNNs
  dynamic  quantize_dynamic (DynamicQuantizeLinear + MatMulInteger, int8 weights), BERT; CNNs:
           op_types_to_quantize=['Conv'] after quant_pre_process (DynamicQuantizeLinear + ConvInteger)
  qdq      (BERT) quantize_static, QDQ, ORT's defaults (uint8 activations, int8 weights,
           per-tensor), calibrated on random token ids; ORT quantizes MatMul, Add, Gather, ...
           but leaves Softmax, LayerNormalization, Erf/Gelu float between DQ and Q

Each row also runs the float model in Onyx in the same rotation, so "int8 speedup" is Onyx
fp32 / Onyx int8 measured alternately; "max |d|" is the largest difference of the first output
from ONNX Runtime's on the int8 model.

    PYTHONPATH=<site with the onyx package>:tests/python .venv/bin/python bench/int8_forms.py \
        [--models resnet50,mobilenetv2,bert_tiny,bert_base] [--forms qdq,qop,dynamic] \
        [--threads 1,2] [--runs 20] [--models-dir DIR] [--work-dir DIR] [--also-without PASS,...]

--also-without adds a fourth session in the rotation: Onyx on the int8 model with those passes
disabled (session config optimization.disable_specified_optimizers), the "before" of a fusion.

The float models come from --models-dir (a folder with the bench models and their
manifest.json), else onyx_harness.bench_models_dir() (generated from ../shared/models/bench).
Quantized models are kept in --work-dir (default: a temporary folder) and reused."""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np
from bench_util import cpu_model

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))

from model_variants import CNNS, build, calibration_for


def quantized_model(work, models_dir, model, form, feeds, entry):
    """The int8 model in `form` (qdq, qop, dynamic), built by bench/model_variants.py into `work`
    (reused when there)."""
    return build(f"int8-{form}", os.path.join(models_dir, entry["file"]), work,
                 calibration=lambda: calibration_for(model, feeds, entry), model=model)


def sessions(paths, threads, without=None):
    import onnxruntime as ort
    import onyx

    def make(mod, path, disabled=None):
        so = mod.SessionOptions()
        if disabled:
            so.add_session_config_entry("optimization.disable_specified_optimizers", disabled)
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        if mod is ort:
            so.log_severity_level = 3
        return mod.InferenceSession(path, so, providers=["CPUExecutionProvider"])

    runners = {"onyx int8": make(onyx, paths["int8"]), "ort int8": make(ort, paths["int8"]),
               "onyx fp32": make(onyx, paths["fp32"])}
    if without:
        runners["onyx int8 without"] = make(onyx, paths["int8"], without)
    return runners


def measure(paths, feeds, threads, runs, without=None):
    runners = sessions(paths, threads, without)
    first = {name: s.run(None, feeds)[0] for name, s in runners.items()}  # warm-up
    times = {name: [] for name in runners}
    for _ in range(runs):
        for name, s in runners.items():
            # Idle first, so no engine's spinning intra-op threads take a core from the next
            # Run (as bench/compare does): without it the 2-thread rows ran on one core.
            time.sleep(0.05)
            start = time.perf_counter()
            s.run(None, feeds)
            times[name].append((time.perf_counter() - start) * 1e3)
    med = {name: statistics.median(t) for name, t in times.items()}
    diff = float(np.max(np.abs(first["onyx int8"].astype(np.float64) - first["ort int8"].astype(np.float64))))
    return med, diff


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="resnet50,mobilenetv2,bert_tiny,bert_base")
    parser.add_argument("--forms", default="qdq,qop,dynamic")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--models-dir", help="a folder holding the bench models and manifest.json")
    parser.add_argument("--work-dir", help="where the quantized models are kept (reused when present)")
    parser.add_argument("--also-without", help="also time Onyx int8 with these passes disabled (comma-separated)")
    args = parser.parse_args()

    import onnxruntime as ort
    ort.set_default_logger_severity(3)
    from onyx_harness import bench_feeds, bench_models_dir

    models_dir = args.models_dir or bench_models_dir()
    manifest = {m["name"]: m for m in json.load(open(os.path.join(models_dir, "manifest.json")))["models"]}
    forms = args.forms.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    work = args.work_dir or tempfile.mkdtemp(prefix="int8_forms_")
    os.makedirs(work, exist_ok=True)

    print(f"int8 forms, ONNX Runtime {ort.__version__}, {args.runs} alternating runs, CPU: {cpu_model()}")
    print(f"{'model':12s} {'form':8s} {'thr':>3s} {'onyx int8':>10s} {'ort int8':>10s} {'onyx/ort':>9s} "
          f"{'onyx fp32':>10s} {'int8 speedup':>12s} {'max |d|':>9s}" +
          (f" {'int8 w/o':>9s} {'speedup w/o':>11s}" if args.also_without else ""))
    for model in args.models.split(","):
        entry = manifest[model]
        feeds = bench_feeds(entry)
        for form in forms:
            if form == "qop" and model not in CNNS:
                continue  # CNNs static (QDQ, QOperator) and dynamic, transformers dynamic and QDQ
            paths = {"int8": quantized_model(work, models_dir, model, form, feeds, entry),
                     "fp32": os.path.join(models_dir, entry["file"])}
            for t in threads:
                med, diff = measure(paths, feeds, t, args.runs, args.also_without)
                extra = ""
                if args.also_without:
                    w = med["onyx int8 without"]
                    extra = f" {w:9.2f} {med['onyx fp32'] / w:11.2f}"
                print(f"{model:12s} {form:8s} {t:3d} {med['onyx int8']:10.2f} {med['ort int8']:10.2f} "
                      f"{med['onyx int8'] / med['ort int8']:9.2f} {med['onyx fp32']:10.2f} "
                      f"{med['onyx fp32'] / med['onyx int8']:12.2f} {diff:9.3g}{extra}", flush=True)


if __name__ == "__main__":
    main()
