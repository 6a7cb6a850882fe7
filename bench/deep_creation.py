"""Session creation of deep models, Onyx against ONNX Runtime (issue 18, item 3): does creation
grow with the model's size, or faster? BERT, GPT-2 and ViT graphs as the bench generator writes
them (../shared/models/bench/gen_bench_models.py, exporter style), made deep and narrow (hidden
64, 2 heads) so that the node count, not the weights, sets the cost; optionally also quantized by
ONNX Runtime's quantizer (dynamic, QDQ, QOperator). For each model, `--rounds` creations of each
engine in turn, medians in milliseconds and ORT / Onyx, one thread.

    ONYX_SHARED_DIR=../shared PYTHONPATH=<site with the onyx package> \\
        .venv/bin/python bench/deep_creation.py [--families bert,gpt2,vit] [--layers 12,96]
                                                [--forms float,dyn,qdq,qop] [--rounds 3]
"""
import argparse
import logging
import os
import statistics
import sys
import tempfile

import numpy as np

from bench_util import cpu_model
from creation_time import create_ms


def generator():
    shared = os.environ.get("ONYX_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared"))
    path = os.path.join(shared, "models", "bench")
    if not os.path.exists(os.path.join(path, "gen_bench_models.py")):
        sys.exit(f"skipped: the bench generator is not at {path} (set ONYX_SHARED_DIR)")
    sys.path.insert(0, path)
    import gen_bench_models
    return gen_bench_models


def build(gen, family, layers):
    b = gen.Builder(7)
    if family == "bert":
        gen.build_bert(b, layers, 64, 2, 128, vocab=100)
    elif family == "gpt2":
        gen.build_gpt2(b, layers=layers, hidden=64, heads=2, vocab=100, n_pos=64)
    else:
        gen.build_vit(b, layers, 64, 2, 128, img=32, patch=16, ncls=10)
    return b.finish(f"{family}, {layers} layers, hidden 64")


def calibration_feeds(family):
    rng = np.random.default_rng(0)
    if family == "vit":
        return [{"pixel_values": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)}]
    ids = rng.integers(0, 100, (1, 16))
    if family == "gpt2":
        return [{"input_ids": ids}]
    return [{"input_ids": ids, "attention_mask": np.ones((1, 16), np.int64),
             "token_type_ids": np.zeros((1, 16), np.int64)}]


def quantized(float_path, out_path, family, form):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)
    logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process, once per model

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter(calibration_feeds(family))

        def get_next(self):
            return next(self.feeds, None)

    if form == "dyn":
        quantize_dynamic(float_path, out_path, weight_type=QuantType.QInt8)
    else:
        fmt = QuantFormat.QDQ if form == "qdq" else QuantFormat.QOperator
        quantize_static(float_path, out_path, Reader(), quant_format=fmt, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", default="bert,gpt2,vit")
    ap.add_argument("--layers", default="12,96")
    ap.add_argument("--forms", default="float")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import onnx
    import onnxruntime
    import onyx
    gen = generator()
    print(f"CPU: {cpu_model()}; one thread; {args.rounds} creations per engine, alternating")
    print("| model | layers | form | nodes | Onyx ms | ORT ms | ORT/Onyx |")
    print("|---|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for family in args.families.split(","):
            for layers in (int(n) for n in args.layers.split(",")):
                float_path = os.path.join(tmp, f"{family}{layers}.onnx")
                onnx.save(build(gen, family, layers), float_path)
                for form in args.forms.split(","):
                    path = float_path
                    if form != "float":
                        path = os.path.join(tmp, f"{family}{layers}_{form}.onnx")
                        quantized(float_path, path, family, form)
                    with open(path, "rb") as f:
                        model_bytes = f.read()
                    nodes = len(onnx.load_from_string(model_bytes).graph.node)
                    times = {"onyx": [], "ort": []}
                    for _ in range(args.rounds):
                        times["onyx"].append(create_ms(onyx, model_bytes, 1))
                        times["ort"].append(create_ms(onnxruntime, model_bytes, 1))
                    a, b = statistics.median(times["onyx"]), statistics.median(times["ort"])
                    print(f"| {family} | {layers} | {form} | {nodes} | {a:.1f} | {b:.1f} | {b / a:.2f} |", flush=True)


if __name__ == "__main__":
    main()
