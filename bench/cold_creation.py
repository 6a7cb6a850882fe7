"""Cold session creation, Onyx against ONNX Runtime (issue 18, item 3): every creation in a fresh
worker process that imports its engine, reads the model file (so it is in the page cache), sits
idle for --gap seconds (on a VM that hands freed memory back to its host, that is when it goes)
and then creates one session. Engines alternate; medians in ms, with the minor page faults the
creation took (getrusage) and the worker's peak RSS.

    ONYX_SHARED_DIR=../shared PYTHONPATH=<site with the onyx package>:tests/python \\
        .venv/bin/python bench/cold_creation.py [--threads 1,2] [--rounds 3] [--gap 4] \\
        [--models gpt2_small,bert_base] [--onyx-site label=DIR ...] [--onyx-config label=KEY=VALUE ...]

--onyx-config (repeatable) puts an Onyx session with that config entry in the rotation, e.g.
`--onyx-config huge=onyx.memory.packs_on_small_pages=0 --onyx-config auto=onyx.memory.packs_on_small_pages=auto`.
--onyx-site (repeatable) puts several Onyx builds in the rotation (each worker gets DIR first on
its PYTHONPATH; a DIR/onyx holding libonyx.so also goes first on LD_LIBRARY_PATH, for a build
saved by copying its _C module and libonyx.so), e.g. the build before a change and the one after."""
import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
sys.path.insert(0, HERE)

DEFAULT_MODELS = "gpt2_small,bert_base,resnet50,vit_tiny,mobilenetv2"


def worker(engine, path, threads, gap, config):
    module = __import__("onnxruntime" if engine == "ort" else "onyx")
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass
    time.sleep(gap)
    options = module.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if config:
        options.add_session_config_entry(*config.split("=", 1))
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    module.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    ms = (time.perf_counter() - start) * 1e3
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu_ms = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e3
    print(json.dumps({"ms": ms, "cpu_ms": cpu_ms, "minflt": after.ru_minflt - before.ru_minflt,
                      "maxrss_mb": after.ru_maxrss / 1024}))


def run_worker(engine, site, path, threads, gap, config=""):
    env = dict(os.environ)
    if site:
        env["PYTHONPATH"] = site + os.pathsep + env.get("PYTHONPATH", "")
        if os.path.exists(os.path.join(site, "onyx", "libonyx.so")):  # a saved build: its own library
            env["LD_LIBRARY_PATH"] = os.path.join(site, "onyx") + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", engine, path, str(threads), str(gap), config],
                         env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{engine} worker on {path} failed: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gap", type=float, default=4.0, help="idle seconds before each creation")
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help="comma-separated bench model names or model file paths (a variant's .onnx)")
    ap.add_argument("--models-dir", default="")
    ap.add_argument("--onyx-site", action="append", default=[], help="label=DIR; repeatable")
    ap.add_argument("--onyx-config", action="append", default=[], help="label=KEY=VALUE; repeatable")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--samples", action="store_true", help="also print every creation's wall time")
    args = ap.parse_args()
    import onyx_harness
    from bench_util import cpu_model
    bench_dir = args.models_dir or onyx_harness.bench_models_dir()
    engines = [(label, "onyx", site, "") for label, site in (s.split("=", 1) for s in args.onyx_site)]
    engines += [(label, "onyx", "", config) for label, config in (s.split("=", 1) for s in args.onyx_config)]
    engines = engines or [("Onyx", "onyx", "", "")]
    if not args.no_ort:
        engines.append(("ORT", "ort", "", ""))
    print(f"CPU: {cpu_model()}; {args.rounds} fresh workers per engine, alternating, {args.gap:g} s idle before "
          "each creation; medians: wall ms (CPU ms of all threads; minor page faults in thousands; peak "
          "RSS MB)\n")
    print("| model | threads | " + " | ".join(label for label, _, _, _ in engines) + " |")
    print("|---|---:|" + "---:|" * len(engines))
    for name in args.models.split(","):
        # A name with a "/" or ending in .onnx is a model file (e.g. an int8 or float16 variant).
        path = name if name.endswith(".onnx") or os.sep in name else os.path.join(bench_dir, name + ".onnx")
        name = os.path.splitext(os.path.basename(name))[0] if path == name else name
        if not os.path.exists(path):
            print(f"| {name} | - | missing: {path} |")
            continue
        for threads in (int(t) for t in args.threads.split(",")):
            results = {label: [] for label, _, _, _ in engines}
            for _ in range(args.rounds):
                for label, engine, site, config in engines:
                    results[label].append(run_worker(engine, site, path, threads, args.gap, config))
            cells = []
            for label, _, _, _ in engines:
                r = results[label]
                cells.append(f"{statistics.median(x['ms'] for x in r):.0f} "
                             f"({statistics.median(x['cpu_ms'] for x in r):.0f}; "
                             f"{statistics.median(x['minflt'] for x in r) / 1e3:.0f}k; "
                             f"{statistics.median(x['maxrss_mb'] for x in r):.0f})")
            print(f"| {name} | {threads} | " + " | ".join(cells) + " |", flush=True)
            if args.samples:
                for label, _, _, _ in engines:
                    print(f"    {label}: wall ms " + ", ".join(f"{x['ms']:.0f}" for x in results[label]), flush=True)


if __name__ == "__main__":
    main()
