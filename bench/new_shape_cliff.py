"""First Run at a new input shape against a repeated Run at that shape (issue 18, item 5), Onyx
and ONNX Runtime side by side.

For each model, one session per engine is made and warmed at one shape; then for each new shape
in turn, each engine (alternating, Onyx first) runs it once (the first-run time) and then
`--repeats` more times (their median is the repeated-run time), 50 ms idle before each Run. The
cliff is first / repeated:
1.0 means a new shape costs nothing extra. Reported per shape and as the median and the worst over
the shapes, with the CPU model.

    PYTHONPATH=<site with the onyx package>:tests/python .venv/bin/python bench/new_shape_cliff.py \
        [--models bert_tiny,yolo_like] [--threads 1] [--repeats 5] [--models-dir DIR]

Scenarios: a BERT over 20 sequence lengths (8 to 160 step 8), and PaddleOCR's DBNet text detector
(../shared/models/real, input [1, 3, H, W]) over 10 square image sizes (224 to 512 step 32). The
BERTs come from --models-dir, else onyx_harness.bench_models_dir() (generated from
../shared/models/bench)."""
import argparse
import os
import statistics
import sys
import time

import numpy as np
from bench_util import cpu_model

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))

SEQUENCE_LENGTHS = list(range(8, 161, 8))
IMAGE_SIZES = list(range(224, 513, 32))


def bert_feeds(session, sequence, rng):
    names = [i.name for i in session.get_inputs()]
    feeds = {}
    for name in names:
        if name == "input_ids":
            feeds[name] = rng.integers(0, 30522, (1, sequence), dtype=np.int64)
        elif name == "attention_mask":
            feeds[name] = np.ones((1, sequence), np.int64)
        else:
            feeds[name] = rng.integers(0, 2, (1, sequence), dtype=np.int64)
    return feeds


def image_feeds(session, size, rng):
    name = session.get_inputs()[0].name
    return {name: rng.standard_normal((1, 3, size, size)).astype(np.float32)}


SCENARIOS = {
    # model name -> (feed maker, the new shapes, the warm-up shape, where the model is)
    "bert_tiny": (bert_feeds, SEQUENCE_LENGTHS, 128, "bench"),
    "bert_base": (bert_feeds, SEQUENCE_LENGTHS, 128, "bench"),
    "ppocr_det": (image_feeds, IMAGE_SIZES, 640, "real/ch_PP-OCRv4_det_infer.onnx"),
}


def make_session(module, path, threads):
    options = module.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return module.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def timed_run(session, feeds, gap_s=0.05):
    # Idle first, so neither engine's spinning intra-op threads take a core from the next Run
    # (as bench/compare does).
    time.sleep(gap_s)
    start = time.perf_counter()
    session.run(None, feeds)
    return (time.perf_counter() - start) * 1e3


def measure(model, path, threads, repeats):
    import onnxruntime
    import onyx
    make_feeds, shapes, warm_shape, _ = SCENARIOS[model]
    engines = {"onyx": make_session(onyx, path, threads), "ort": make_session(onnxruntime, path, threads)}
    rng = np.random.default_rng(0)
    warm = make_feeds(engines["onyx"], warm_shape, rng)
    for session in engines.values():
        for _ in range(3):
            session.run(None, warm)
    rows = []
    for shape in shapes:
        feeds = make_feeds(engines["onyx"], shape, rng)
        row = {"shape": shape}
        for name, session in engines.items():
            first = timed_run(session, feeds)
            repeated = statistics.median(timed_run(session, feeds) for _ in range(repeats))
            row[name] = (first, repeated)
        rows.append(row)
    return rows


def report(model, threads, rows):
    print(f"\n## {model}, {threads} thread(s)\n")
    print("| shape | Onyx first ms | Onyx repeated ms | Onyx cliff | ORT first ms | ORT repeated ms | ORT cliff |")
    print("|---|---|---|---|---|---|---|")
    cliffs = {"onyx": [], "ort": []}
    for row in rows:
        cells = [str(row["shape"])]
        for name in ("onyx", "ort"):
            first, repeated = row[name]
            cliffs[name].append(first / repeated)
            cells += [f"{first:.2f}", f"{repeated:.2f}", f"{first / repeated:.2f}"]
        print("| " + " | ".join(cells) + " |")
    for name in ("onyx", "ort"):
        print(f"{name}: median cliff {statistics.median(cliffs[name]):.2f}, worst {max(cliffs[name]):.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="bert_tiny,ppocr_det")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--models-dir", default="")
    args = ap.parse_args()
    import onyx_harness
    print(f"CPU: {cpu_model()}")
    for model in args.models.split(","):
        if model not in SCENARIOS:
            sys.exit(f"no new-shape scenario for '{model}' (known: {', '.join(SCENARIOS)})")
        where = SCENARIOS[model][3]
        if where == "bench":
            path = os.path.join(args.models_dir or onyx_harness.bench_models_dir(), f"{model}.onnx")
        else:
            path = onyx_harness.require_shared("models", *where.split("/"))
        for threads in (int(t) for t in args.threads.split(",")):
            report(model, threads, measure(model, path, threads, args.repeats))


if __name__ == "__main__":
    main()
