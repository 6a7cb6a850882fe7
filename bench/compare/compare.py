#!/usr/bin/env python3
"""Side-by-side benchmark of Onyx, ONNX Runtime 1.31.1 (the `onnxruntime` Python package) and
OpenVINO's CPU runtime (the `openvino` Python package).

For each model and thread count every engine loads the model in its own worker process
(bench/compare/onyx_worker.cc, ort_worker.py, openvino_worker.py; the line protocol is in
worker_protocol.py), the outputs of Onyx and of OpenVINO on the same inputs are each checked
against ONNX Runtime's, and then the engines run in turn, one run each per round, the order
rotating from round to round (and reversed every other cycle), so machine noise hits all alike.
Reports medians, the ORT/Onyx and OpenVINO/Onyx ratios, p90s, session-creation times and peak
memory, and writes the table to bench/RESULTS.md. Where Onyx's outputs (or OpenVINO's: reported,
not fatal) disagree with ONNX Runtime's, the engines are also measured against the model evaluated
in float64 (float64_reference.py), the nearest thing to the exact answer. OpenVINO computes in
float32 (INFERENCE_PRECISION_HINT f32) like the others; a model it cannot load gets an error in
its columns only.

--variants int8-qdq,int8-qop,int8-dynamic,fp16,bf16 adds rows `model@variant` for the variants of
each selected model that bench/model_variants.py builds (kept in --variant-work and reused), each
measured like the float rows, with one more worker in the rotation: Onyx on the model's float32
twin, whose median over Onyx's on the variant is the column "Onyx fp32/variant". A variant's
outputs are checked against ONNX Runtime's on the same variant (where ORT cannot run it, against
ORT's on the float32 twin), by the variant's own rule (variant_check.py). The variant rows get a
table and geometric means of their own; the float rows' table and geomean are unchanged.

  bench/compare/compare.py [--models a,b] [--threads 1,2] [--rounds 20] [--warmup 3]
                           [--engines ort,openvino] [--onyx-worker PATH] [--no-float64]
                           [--variants a,b] [--variant-work DIR]
"""
import argparse
import datetime
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))
import onyx_harness  # noqa: E402
import float64_reference  # noqa: E402  (beside this file, so on sys.path when run as a script)
sys.path.insert(0, os.path.join(REPO, "bench"))
import model_variants  # noqa: E402
import variant_check  # noqa: E402
import variant_table  # noqa: E402

REAL_MODELS = {
    "ppocr_det": ("ch_PP-OCRv4_det_infer.onnx", lambda rng: {"x": rng.standard_normal((1, 3, 640, 640), np.float32)}),
    "ppocr_rec": ("ch_PP-OCRv4_rec_infer.onnx", lambda rng: {"x": rng.standard_normal((1, 3, 48, 320), np.float32)}),
    "ppocr_cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx",
                  lambda rng: {"x": rng.standard_normal((1, 3, 48, 192), np.float32)}),
    "silero_vad": ("silero_vad_v5.onnx", lambda rng: {
        "input": rng.uniform(-0.5, 0.5, (1, 512)).astype(np.float32),
        "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}),
}
BENCH_MODELS = ["resnet50", "mobilenetv2", "efficientnet_b0", "bert_base", "bert_tiny", "gpt2_small", "vit_tiny",
                "yolo_like"]


HERE = os.path.dirname(os.path.abspath(__file__))
LABELS = {"onyx": "Onyx", "ort": "ORT", "openvino": "OV", "onyx_fp32": "Onyx fp32"}


class Worker:
    def __init__(self, cmd):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.create_ms = float(self._expect("ready"))

    def _expect(self, word):
        line = self.proc.stdout.readline().strip()
        if not line.startswith(word):
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"worker said: {line or '(nothing)'}")
        return line[len(word):].strip()

    def ask(self, command, answer):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._expect(answer)

    def run(self):
        return float(self.ask("run", "ms"))

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def worker_command(engine, path, threads, specs, args, opt_level=None):
    if engine in ("onyx", "onyx_fp32"):  # onyx_fp32: Onyx on a variant's float32 twin
        return [args.onyx_worker, path, str(threads), args.opt_level] + specs
    if engine == "ort":
        return [sys.executable, os.path.join(HERE, "ort_worker.py"), path, str(threads),
                opt_level or args.opt_level] + specs
    # OpenVINO has no switch for its graph transformations: it always applies them.
    return [sys.executable, os.path.join(HERE, "openvino_worker.py"), path, str(threads)] + specs


def model_cases(names):
    cases = []
    for name in names:
        if name in REAL_MODELS:
            file, make = REAL_MODELS[name]
            path = onyx_harness.require_shared("models", "real", file)
            cases.append((name, path, make(np.random.default_rng(0))))
        else:
            folder, manifest = onyx_harness.bench_manifest()
            entry = manifest[name]
            cases.append((name, os.path.join(folder, entry["file"]), onyx_harness.bench_feeds(entry)))
    return cases


def _by_index(folder):
    return {f.split("_", 1)[0]: f for f in os.listdir(folder) if f.endswith(".npy")}


def outputs_off(dir_a, dir_b):
    """(elements outside rtol 1e-3 / atol 1e-4, elements in all, max abs diff, first file off).
    Outputs pair up by their index, so an engine that names an output differently still compares."""
    off = total = 0
    worst, first = 0.0, ""
    b_files = _by_index(dir_b)
    for f in sorted(f for f in os.listdir(dir_a) if f.endswith(".npy")):
        a = np.load(os.path.join(dir_a, f))
        other = b_files.get(f.split("_", 1)[0])
        b = np.load(os.path.join(dir_b, other)) if other else None
        if b is None or a.shape != b.shape:
            return a.size, a.size, math.inf, f
        total += a.size
        if a.dtype.kind not in "fc":
            n = int(np.count_nonzero(a != b))
        else:
            diff = np.abs(a.astype(np.float64) - b)
            n = int(np.count_nonzero(~(diff <= 1e-4 + 1e-3 * np.abs(a))))
            worst = max(worst, float(np.max(diff))) if a.size else worst
        off += n
        if n and not first:
            first = f
    return off, total, worst, first


def saved_outputs(folder):
    """The outputs a worker saved as <i>_<name>.npy, in model order."""
    files = sorted((f for f in os.listdir(folder) if f.endswith(".npy")), key=lambda f: int(f.split("_", 1)[0]))
    return [np.load(os.path.join(folder, f)) for f in files]


def float64_note(other_outputs, ort_outputs, reference, reason=None, label="Onyx"):
    """How far the engine (label) and ORT are from the float64 evaluation (values off by the same
    rule, mean abs error), or why there is no such evaluation."""
    if reference is None:
        return f"; no float64 reference: {reason}".replace("|", "/")
    other_off, other_err = float64_reference.deviation(other_outputs, reference)
    ort_off, ort_err = float64_reference.deviation(ort_outputs, reference)
    return (f"; vs float64: {label} {other_off} off (mean err {other_err:.1e}), "
            f"ORT {ort_off} off (mean err {ort_err:.1e})")


def compare_outputs(ort_dir, other_dir, ort_unoptimized_dir=None, float64=None, label="Onyx"):
    """Whether the engine's (label) outputs are within rtol 1e-3 / atol 1e-4 of ORT's, and a note.
    Where they are not, the note puts the count beside how far ORT's own outputs move when ORT runs
    the same model with its graph optimizations disabled (ort_unoptimized_dir), i.e. float rounding
    that depends on how the model is evaluated, and, given float64 = (outputs or None, reason), how
    far the engine and ORT are from the model evaluated in float64."""
    off, total, worst, first = outputs_off(ort_dir, other_dir)
    if not off:
        return True, f"max abs diff {worst:.2e}"
    note = f"{first}: {off} of {total} values off, max abs diff {worst:.2e}"
    if ort_unoptimized_dir is not None:
        own_off, _, own_worst, _ = outputs_off(ort_dir, ort_unoptimized_dir)
        note += f"; ORT unoptimized vs ORT: {own_off} off, max {own_worst:.2e}"
    if float64 is not None:
        note += float64_note(saved_outputs(other_dir), saved_outputs(ort_dir), *float64, label=label)
    return False, note


def float64_outputs(name, path, feeds, threads, args, tmp):
    """(outputs, None) or (None, reason) of the model evaluated in float64; computed once per
    model (it does not depend on the thread count) and not at all with --no-float64."""
    if args.no_float64:
        return None
    if name not in args.float64_cache:
        folder = os.path.join(tmp, name + "_float64")
        os.makedirs(folder, exist_ok=True)
        args.float64_cache[name] = float64_reference.run_float64(path, feeds, folder, args.onyx, threads)
    return args.float64_cache[name]


def round_orders(engines):
    """The engines' order in each round: every rotation, then every rotation of the reverse, so
    each engine goes first, and follows each other one, equally often (for two: A B, B A, B A, A B)."""
    n = len(engines)
    forward, backward = list(engines), list(reversed(engines))
    return [forward[k:] + forward[:k] for k in range(n)] + [backward[k:] + backward[:k] for k in range(n)]


def worker_error(e):
    """A worker's error for a table cell: its message without who said it and the exception's class."""
    text = str(e).splitlines()[0].removeprefix("worker said: ").removeprefix("error ")
    kind, _, message = text.partition(": ")
    text = message if message and kind.isidentifier() else text
    # ONNX Runtime's status name and what failed, without its code and the model's path.
    ort = re.match(r"\[ONNXRuntimeError\] : \d+ : (\w+) : (?:Load model from .*? failed:)?(.*)", text)
    return (f"{ort[1]}: {ort[2]}" if ort else text)[:160]


def start_workers(engines, path, threads, specs, args, result, optional=("openvino",), paths=None):
    """{engine: Worker}. The engine made first pays alone for what the first load of a model costs
    the machine (reading the file, first touches of fresh memory): which one goes first rotates by
    row. An optional engine (OpenVINO; ORT too on a variant) failing to load the model is a note in
    its columns; the others failing is the row's error. paths: {engine: model} where an engine
    loads another model than `path` (onyx_fp32: the float32 twin)."""
    k = (args.rows_measured - 1) % len(engines)
    workers = {}
    for engine in engines[k:] + engines[:k]:
        try:
            workers[engine] = Worker(worker_command(engine, (paths or {}).get(engine, path), threads, specs, args))
        except Exception as e:
            if engine not in optional:
                for w in workers.values():
                    w.close()
                raise
            result[f"{engine}_error"] = worker_error(e)
    return workers


def check_outputs(name, path, feeds, threads, specs, workers, args, tmp, result):
    folder = lambda engine: os.path.join(tmp, f"{name}_{threads}_{engine}")
    for engine in list(workers):
        try:
            workers[engine].ask(f"save {folder(engine)}", "saved")
        except Exception as e:
            if engine != "openvino":
                raise
            result["openvino_error"] = worker_error(e)
            workers.pop(engine).close()
    checked = [("onyx", "agree", "Onyx")] + ([("openvino", "openvino_agree", "OpenVINO")] if "openvino" in workers else [])
    notes = {key: compare_outputs(folder("ort"), folder(engine), label=label) for engine, key, label in checked}
    if all(agree for agree, _ in notes.values()):
        for key, (agree, detail) in notes.items():
            result[key], result[key + "_detail"] = agree, detail
        return
    unoptimized_dir = folder("ort_unoptimized")
    unoptimized = Worker(worker_command("ort", path, threads, specs, args, opt_level="disabled"))
    try:
        unoptimized.ask(f"save {unoptimized_dir}", "saved")
    finally:
        unoptimized.close()
    reference = float64_outputs(name, path, feeds, threads, args, tmp)
    for engine, key, label in checked:
        agree, detail = notes[key]
        if not agree:
            agree, detail = compare_outputs(folder("ort"), folder(engine), unoptimized_dir, reference, label)
        result[key], result[key + "_detail"] = agree, detail


def check_variant_outputs(name, path, float_path, threads, specs, workers, args, tmp, result):
    """Onyx's (and OpenVINO's) outputs on a variant against ORT's on the same variant or, where ORT
    cannot run it, ORT's on the float32 twin, by the variant's rule (variant_check.py)."""
    folder = lambda engine: os.path.join(tmp, f"{name}_{threads}_{engine}")
    for engine in [e for e in workers if e != "onyx_fp32"]:
        try:
            workers[engine].ask(f"save {folder(engine)}", "saved")
        except Exception as e:
            if engine == "onyx":
                raise
            result[f"{engine}_error"] = worker_error(e)
            workers.pop(engine).close()
    family, twin = model_variants.family(result["variant"]), "ort" not in workers
    float_dir = None
    if twin or variant_check.wants_float_twin(result["variant"]):  # the reference, or a second chance
        float_dir = folder("ort_fp32")
        ort_float = Worker(worker_command("ort", float_path, threads, specs, args))
        try:
            ort_float.ask(f"save {float_dir}", "saved")
        finally:
            ort_float.close()
    steps = variant_check.output_steps(path) if family == "int8" else {}
    for engine, key in (("onyx", "agree"), ("openvino", "openvino_agree")):
        if engine in workers:
            result[key], result[key + "_detail"] = variant_check.agreement(
                float_dir if twin else folder("ort"), folder(engine), family, steps, twin, None if twin else float_dir,
                dynamic=result["variant"] == "int8-dynamic")


def read_into_page_cache(path):
    """Reads the model file once, so no engine's creation pays for reading it from disk (this VM's page
    cache drops files it has not read lately). The bench and real models keep no external data."""
    with open(path, "rb") as f:
        while f.read(8 << 20):
            pass


def extra_creations(engines, path, threads, specs, args):
    """{engine: [creation ms]} of `--create-rounds` - 1 more fresh worker processes per engine, each
    made and closed at once, the order rotating from round to round. One creation is a noisy sample
    here: the first process to touch memory the VM has handed back to its host pays the host's page
    faults. An engine that fails to load the model is left out (its error comes from the measured
    workers)."""
    times = {engine: [] for engine in engines}
    orders = round_orders(engines)
    for r in range(args.create_rounds - 1):
        for engine in orders[(r + args.rows_measured) % len(orders)]:
            try:
                worker = Worker(worker_command(engine, path, threads, specs, args))
            except Exception:
                continue
            times[engine].append(worker.create_ms)
            worker.close()
    return times


def measure(name, path, feeds, threads, args, tmp, variant=None, float_path=None):
    """One row: the engines on `path`; for a variant, also Onyx on its float32 twin (float_path)."""
    specs = []
    for i, (input_name, array) in enumerate(feeds.items()):
        file = os.path.join(tmp, f"{name}_in{i}.npy")
        np.save(file, array)
        specs.append(f"{input_name}={file}")
    args.rows_measured = getattr(args, "rows_measured", 0) + 1
    result = {"model": name, "threads": threads}
    read_into_page_cache(path)
    create_times = extra_creations(["onyx"] + args.engines, path, threads, specs, args)
    if variant is None:
        workers = start_workers(["onyx"] + args.engines, path, threads, specs, args, result)
    else:
        result["variant"] = variant
        read_into_page_cache(float_path)
        workers = start_workers(["onyx"] + args.engines + ["onyx_fp32"], path, threads, specs, args, result,
                                optional=("ort", "openvino"), paths={"onyx_fp32": float_path})
    try:
        if variant is None:
            check_outputs(name, path, feeds, threads, specs, workers, args, tmp, result)
        else:
            check_variant_outputs(name, path, float_path, threads, specs, workers, args, tmp, result)
        for _ in range(args.warmup):
            for w in workers.values():
                w.run()
        times = {engine: [] for engine in workers}
        orders = round_orders(list(workers))
        for r in range(args.rounds):
            for engine in orders[r % len(orders)]:
                # The previous engine's pool may still be spinning from its run (ONNX Runtime's
                # workers measured busy for 20-30 ms after one); let it go to sleep so it does
                # not take a core from this one.
                time.sleep(args.gap_ms / 1000.0)
                times[engine].append(workers[engine].run())
        for engine, w in workers.items():
            result[f"{engine}_median"] = statistics.median(times[engine])
            result[f"{engine}_p90"] = float(np.percentile(times[engine], 90))
            result[f"{engine}_create_ms"] = statistics.median(create_times.get(engine, []) + [w.create_ms])
            result[f"{engine}_rss_mb"] = float(w.ask("stats", "rss_mb"))
        return result
    finally:
        for w in workers.values():
            w.close()


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def version(package):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def openvino_default_precision():
    """The precision OpenVINO's CPU plugin would compute in on this CPU without the f32 hint."""
    try:
        import openvino
        return openvino.Core().get_property("CPU", "INFERENCE_PRECISION_HINT").get_type_name()
    except Exception as e:  # the header says why rather than failing the whole run
        return f"unknown ({str(e).splitlines()[0][:80]})"


def geomean(values):
    return math.exp(sum(math.log(x) for x in values) / len(values))


def variants_flags(args):
    variants = getattr(args, "variants", [])
    return f" --models {args.models} --variants {','.join(variants)}" if variants else ""


def header(args):
    engines = ["onyx"] + args.engines
    ov = "openvino" in args.engines
    title = "# Onyx vs ONNX Runtime" + (" and OpenVINO" if ov else "") + " (CPU)"
    setup = (f"Date: {datetime.date.today().isoformat()}; CPU: {cpu_name()}, {os.cpu_count()} logical cores; "
             f"ONNX Runtime {version('onnxruntime')} (Python package: sequential execution, inter-op 1 thread, "
             f"intra-op = threads, optimization level {args.opt_level}, as Onyx)")
    if ov:
        setup += (f"; OpenVINO {version('openvino')} (CPU plugin, PERFORMANCE_HINT LATENCY, INFERENCE_NUM_THREADS = "
                  "threads, INFERENCE_PRECISION_HINT f32 so it computes in float32 like the other two: its default on "
                  f"this CPU would be {openvino_default_precision()}; models compiled as given, dynamic dimensions "
                  "left dynamic)")
    lines = [
        title, "",
        setup + ".",
        "",
        f"{args.rounds} rounds after {args.warmup} warm-ups, one run of each engine per round, the order rotating from "
        "round to round; times in ms, the wall time of one run inside each engine's worker process (Onyx's "
        "Session::Run in C++; ORT's `session.run` and OpenVINO's `infer` called from Python, so theirs include "
        "the Python call and wrapping outputs as numpy arrays, tens of microseconds). Peak RSS is the whole worker "
        "process (for ORT and OpenVINO it includes the Python interpreter and numpy, about 25 MB of it). "
        f"Session creation (OpenVINO: reading and compiling the model): the median of {args.create_rounds} fresh "
        "worker processes per engine, made one after another in an order that rotates, after the model file was "
        "read once so that none pays for reading it from disk."
        + (" OV = OpenVINO; its outputs are checked against ORT's like Onyx's, and a disagreement is only reported."
           if ov else ""),
        f"Command: `.venv/bin/python bench/compare/compare.py --threads {args.threads} --rounds {args.rounds}"
        f" --warmup {args.warmup} --create-rounds {args.create_rounds}{'' if ov else ' --engines ort'}"
        f"{variants_flags(args)}` ({args.gap_ms:g} ms idle before each run, so no engine's spinning threads "
        "take a core from the next)",
        "",
    ]
    columns = ([f"{LABELS[e]} median" for e in engines] + [f"{LABELS[e]}/Onyx" for e in args.engines]
               + [f"{LABELS[e]} p90" for e in engines] + [f"{LABELS[e]} create" for e in engines]
               + [f"{LABELS[e]} RSS MB" for e in engines] + ["Onyx vs ORT"] + (["OV vs ORT"] if ov else []))
    lines.append("| model | threads | " + " | ".join(columns) + " |")
    lines.append("|---|" + "---:|" * (len(columns) - ov) + "---|" * (1 + ov))
    return lines, len(columns)


def row(r, args, ratios):
    engines = ["onyx"] + args.engines
    cell = lambda engine, key, fmt: format(r[f"{engine}_{key}"], fmt) if f"{engine}_{key}" in r else "-"
    cells = [cell(e, "median", ".2f") for e in engines]
    for e in args.engines:
        if f"{e}_median" in r:
            ratios.setdefault(e, []).append(r[f"{e}_median"] / r["onyx_median"])
            cells.append(f"{ratios[e][-1]:.2f}")
        else:
            cells.append("-")
    cells += [cell(e, "p90", ".2f") for e in engines] + [cell(e, "create_ms", ".0f") for e in engines]
    cells += [cell(e, "rss_mb", ".0f") for e in engines]
    cells.append(f"{'yes' if r['agree'] else 'NO'} ({r['agree_detail']})")
    if "openvino" in args.engines:
        if "openvino_error" in r:
            cells.append(f"cannot run: {r['openvino_error']}".replace("|", "/"))
        else:
            cells.append(f"{'yes' if r['openvino_agree'] else 'no'} ({r['openvino_agree_detail']})")
    return f"| {r['model']} | {r['threads']} | " + " | ".join(cells) + " |"


def table(results, args):
    lines, n_columns = header(args)
    ratios = {}
    for r in (r for r in results if "variant" not in r):
        if "error" in r:
            lines.append(f"| {r['model']} | {r['threads']} | error: {r['error']} |" + " |" * (n_columns - 1))
        else:
            lines.append(row(r, args, ratios))
    if ratios:
        # Three decimals: the targets are thresholds (1.3, 1.0) that two would round across.
        lines.append("")
        for e in args.engines:
            if ratios.get(e):
                lines.append(f"Geometric mean of {LABELS[e]}/Onyx over {len(ratios[e])} rows: "
                             f"**{geomean(ratios[e]):.3f}**; lowest {min(ratios[e]):.3f}.")
    variant_rows = [r for r in results if "variant" in r]
    if variant_rows:
        lines += variant_table.section(variant_rows, args.engines, LABELS)
    return "\n".join(lines) + "\n"


def variant_plan(models, variants):
    """[(model, variant)] to measure, each model's variants after it; prints why a variant does not
    apply to a model."""
    plan = []
    for model in models:
        for variant in variants:
            reason = model_variants.skip_reason(variant, model)
            if reason:
                print(f"{model}@{variant}: skipped: {reason}", flush=True)
            else:
                plan.append((model, variant))
    return plan


def build_variant(name, path, feeds, variant, args):
    """The variant's model file, built into --variant-work once and reused."""
    def calibration():  # only transformers need the manifest (their token ranges)
        if name in model_variants.CNNS:
            return model_variants.image_calibration(feeds)
        return model_variants.token_calibration(onyx_harness.bench_manifest()[1][name])
    return model_variants.build(variant, path, args.variant_work, calibration, model=name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(BENCH_MODELS + list(REAL_MODELS)))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--engines", default="ort,openvino",
                    help="engines beside Onyx: ort (the reference, always) and openvino")
    ap.add_argument("--opt-level", default="all")
    ap.add_argument("--create-rounds", type=int, default=3,
                    help="fresh worker processes per engine whose session-creation times give the median shown")
    ap.add_argument("--gap-ms", type=float, default=50.0,
                    help="idle time before each run, so the other engines' spinning threads sleep")
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--onyx-worker", default="", help="the onyx_bench_worker binary (default: in --build)")
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "RESULTS.md"))
    ap.add_argument("--json", default="", help="also write the raw results here")
    ap.add_argument("--variants", default="",
                    help="also measure these variants of the models: " + ", ".join(model_variants.VARIANTS))
    ap.add_argument("--variant-work", default="",
                    help="where the variant models are built and kept (default: compare-variants in --build)")
    ap.add_argument("--no-float64", action="store_true",
                    help="where outputs disagree, skip measuring the engines against the model evaluated in "
                         "float64 by Onyx's unoptimized double kernels (one extra, slow run per such model)")
    args = ap.parse_args()
    args.engines = [e for e in args.engines.split(",") if e]
    if "ort" not in args.engines or not set(args.engines) <= {"ort", "openvino"}:
        ap.error("--engines: ort (the reference), optionally with openvino")
    args.engines = ["ort"] + (["openvino"] if "openvino" in args.engines else [])
    if args.create_rounds < 1:
        ap.error("--create-rounds: at least 1")
    args.variants = [v for v in args.variants.split(",") if v]
    unknown = model_variants.unknown_variants(args.variants)
    if unknown:
        ap.error(f"--variants: unknown variant {', '.join(unknown)} (known: {', '.join(model_variants.VARIANTS)})")
    for engine, package in (("ort", "onnxruntime"), ("openvino", "openvino")):
        if engine in args.engines and importlib.util.find_spec(package) is None:
            ap.error(f"{sys.executable} has no {package} (scripts/install_deps.sh installs it"
                     + ("; --engines ort leaves OpenVINO out)" if engine == "openvino" else ")"))
    args.onyx_worker = args.onyx_worker or os.path.join(args.build, "bench", "onyx_bench_worker")
    args.onyx = os.path.join(args.build, "tools", "onyx", "onyx")
    args.variant_work = args.variant_work or os.path.join(args.build, "compare-variants")
    args.float64_cache = {}
    os.environ.setdefault("ONYX_WORK_DIR", os.path.join(args.build, "test-work"))
    os.environ.setdefault("PYTHON", sys.executable)  # the bench-model generator needs onnx and numpy
    onyx_harness.WORK_ROOT = os.environ["ONYX_WORK_DIR"]
    results = []
    thread_counts = [int(t) for t in args.threads.split(",")]
    plan = variant_plan(args.models.split(","), args.variants)
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, feeds in model_cases(args.models.split(",")):
            for threads in thread_counts:
                try:
                    r = measure(name, path, feeds, threads, args, tmp)
                except Exception as e:  # a model Onyx cannot run yet still gets a row
                    r = {"model": name, "threads": threads, "error": str(e).splitlines()[0][:120]}
                results.append(r)
                print(json.dumps(r), flush=True)
            for variant in (v for m, v in plan if m == name):
                row_name = f"{name}@{variant}"
                try:
                    variant_path = build_variant(name, path, feeds, variant, args)
                except Exception as e:  # the quantizer or converter failed: an error row per thread count
                    variant_path, build_error = None, f"cannot build: {str(e).splitlines()[0][:120]}"
                for threads in thread_counts:
                    try:
                        if variant_path is None:
                            raise RuntimeError(build_error)
                        r = measure(row_name, variant_path, feeds, threads, args, tmp, variant=variant, float_path=path)
                    except Exception as e:
                        r = {"model": row_name, "threads": threads, "variant": variant,
                             "error": str(e).splitlines()[0][:120]}
                    results.append(r)
                    print(json.dumps(r), flush=True)
    text = table(results, args)
    print(text)
    with open(args.out, "w") as f:
        f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
