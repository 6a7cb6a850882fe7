"""First Run at a new input shape against a repeated Run at that shape (issue 18, item 5), Onyx
and ONNX Runtime side by side.

A trial makes one session per engine and warms it at one shape; then for each new shape in turn,
each engine (alternating; which one goes first alternates from trial to trial) runs it once (the
first-run time) and then `--repeats` more times (their median is the repeated-run time), 50 ms
idle before each Run. The cliff of a shape is first / repeated, each the median over `--trials`
trials with fresh sessions: a first Run is one sample per trial, so on a shared machine a single
trial's cliff is as much the neighbours' load as the engine's. 1.0 means a new shape costs nothing
extra. Reported per shape with the page faults of the first Run (`getrusage` minor faults, the
median over trials; they do not depend on load), and as the median and the worst over the shapes,
with the CPU model. The floor cliff (the fastest first Run over the fastest repeated one) is what
an engine adds without the load: the neighbours' load only ever adds time, while a new shape's own
cost (page faults, per-shape preparation) is there in every trial.

    PYTHONPATH=<site with the onyx package>:tests/python .venv/bin/python bench/new_shape_cliff.py \
        [--models bert_tiny,ppocr_det,bert_base] [--threads 1,2] [--repeats 5] [--trials 5] [--models-dir DIR]

Scenarios: a BERT over 20 sequence lengths (8 to 160 step 8), and PaddleOCR's DBNet text detector
(../shared/models/real, input [1, 3, H, W]) over 10 square image sizes (224 to 512 step 32). The
BERTs come from --models-dir, else onyx_harness.bench_models_dir() (generated from
../shared/models/bench)."""
import argparse
import os
import resource
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
    """(milliseconds, minor page faults) of one Run."""
    # Idle first, so neither engine's spinning intra-op threads take a core from the next Run
    # (as bench/compare does).
    time.sleep(gap_s)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    session.run(None, feeds)
    elapsed = (time.perf_counter() - start) * 1e3
    return elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults


def measure_trial(model, path, threads, repeats, trial):
    """Per shape, per engine: (first ms, median repeated ms, first Run's page faults)."""
    import onnxruntime
    import onyx
    make_feeds, shapes, warm_shape, _ = SCENARIOS[model]
    order = [("onyx", onyx), ("ort", onnxruntime)]
    if trial % 2 == 1:
        order.reverse()
    engines = {name: make_session(module, path, threads) for name, module in order}
    rng = np.random.default_rng(trial)
    warm = make_feeds(engines["onyx"], warm_shape, rng)
    for session in engines.values():
        for _ in range(3):
            session.run(None, warm)
    rows = []
    for shape in shapes:
        feeds = make_feeds(engines["onyx"], shape, rng)
        row = {}
        for name, session in engines.items():
            first, faults = timed_run(session, feeds)
            repeated = statistics.median(timed_run(session, feeds)[0] for _ in range(repeats))
            row[name] = (first, repeated, faults)
        rows.append(row)
    return rows


def measure(model, path, threads, repeats, trials):
    """Per shape: {engine: (first ms, repeated ms, first-Run faults, floor cliff)}: medians over the
    trials, and the fastest first Run over the fastest repeated one (the floor)."""
    runs = [measure_trial(model, path, threads, repeats, t) for t in range(trials)]
    shapes = SCENARIOS[model][1]
    rows = []
    for k, shape in enumerate(shapes):
        row = {"shape": shape}
        for name in ("onyx", "ort"):
            samples = [trial[k][name] for trial in runs]
            medians = tuple(statistics.median(s[i] for s in samples) for i in range(3))
            floor = min(s[0] for s in samples) / min(s[1] for s in samples)
            row[name] = medians + (floor,)
        rows.append(row)
    return rows


def report(model, threads, trials, rows):
    print(f"\n## {model}, {threads} thread(s), {trials} trial(s)\n")
    print("| shape | Onyx first ms | Onyx repeated ms | Onyx cliff | Onyx floor cliff | Onyx first-Run faults "
          "| ORT first ms | ORT repeated ms | ORT cliff | ORT floor cliff | ORT first-Run faults |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    cliffs = {"onyx": [], "ort": []}
    floors = {"onyx": [], "ort": []}
    for row in rows:
        cells = [str(row["shape"])]
        for name in ("onyx", "ort"):
            first, repeated, faults, floor = row[name]
            cliffs[name].append(first / repeated)
            floors[name].append(floor)
            cells += [f"{first:.2f}", f"{repeated:.2f}", f"{first / repeated:.2f}", f"{floor:.2f}", f"{faults:.0f}"]
        print("| " + " | ".join(cells) + " |")
    for name in ("onyx", "ort"):
        print(f"{name}: cliff (medians) median {statistics.median(cliffs[name]):.2f}, worst {max(cliffs[name]):.2f}; "
              f"floor cliff median {statistics.median(floors[name]):.2f}, worst {max(floors[name]):.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="bert_tiny,ppocr_det")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--trials", type=int, default=5, help="fresh sessions per engine; medians over them")
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
            report(model, threads, args.trials, measure(model, path, threads, args.repeats, args.trials))


if __name__ == "__main__":
    main()
