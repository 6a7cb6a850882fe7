"""Session creation with and without the creation cache (session.onyx_creation_cache_dir,
issue 18 item 3): for each model, `--rounds` creations of each kind in turn, each in a fresh
process (nothing is warm in it but the OS page cache: each model file, and any external data
file beside it, is read once before its rounds, so every creation timed finds its bytes in the
page cache even when the machine evicted them), timing only the InferenceSession call;
medians in milliseconds and uncached / cached. Kinds: uncached; cached with the default key
(every byte of the model hashed once, the hash then remembered by the file's identity); cached
with session.onyx_creation_cache_key = content_always (every byte hashed on every creation);
cached with file_stat (the file's identity and edges). The cache files (and the remembered
hash) are made once before the rounds.

    ONYX_SHARED_DIR=../shared PYTHONPATH=<site with the onyx package>:tests/python \\
        .venv/bin/python bench/creation_cache.py [--threads 2] [--rounds 7] [--models-dir DIR] [--models a,b]

Models: the bench set (--models-dir, else onyx_harness.bench_models_dir()) and the real models
of ../shared/models/real."""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from bench_util import cpu_model

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))

CHILD = r"""
import sys, time
import onyx
path, threads, cache, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
options = onyx.SessionOptions()
options.intra_op_num_threads = threads
options.inter_op_num_threads = 1
if cache:
    options.add_session_config_entry("session.onyx_creation_cache_dir", cache)
    options.add_session_config_entry("session.onyx_creation_cache_key", key)
start = time.perf_counter()
onyx.InferenceSession(path, options, providers=["CPUExecutionProvider"])
print((time.perf_counter() - start) * 1e3)
"""


def create_ms(path, threads, cache, key="content"):
    time.sleep(0.05)
    out = subprocess.run([sys.executable, "-c", CHILD, path, str(threads), cache, key], check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def warm_page_cache(path):
    # The model and the files next to it (its external data, if any): read once, discarded.
    folder = os.path.dirname(path)
    stem = os.path.basename(path)[:-5]
    for name in [os.path.basename(path)] + [n for n in os.listdir(folder) if n.startswith(stem) and
                                            not n.endswith(".onnx")]:
        full = os.path.join(folder, name)
        if os.path.isfile(full):
            with open(full, "rb") as f:
                while f.read(1 << 24):
                    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--models-dir", default="")
    ap.add_argument("--models", default="", help="comma-separated model names (default: all)")
    args = ap.parse_args()
    import onyx_harness
    bench_dir = args.models_dir or onyx_harness.bench_models_dir()
    models = sorted(glob.glob(os.path.join(bench_dir, "*.onnx")))
    real = onyx_harness.require_shared("models", "real")
    models += sorted(glob.glob(os.path.join(real, "*.onnx")))
    if args.models:
        wanted = set(args.models.split(","))
        models = [m for m in models if os.path.basename(m)[:-5] in wanted]
    print(f"CPU: {cpu_model()}; {args.rounds} creations of each kind in turn, each in a fresh process; "
          "medians in ms\n")
    print("| model | MB | threads | uncached | cached | uncached / cached | cached, content_always key | "
          "uncached / that | cached, file_stat key | uncached / that |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in models:
        for threads in (int(t) for t in args.threads.split(",")):
            warm_page_cache(path)
            cache = tempfile.mkdtemp(prefix="onyx_creation_cache_bench_")
            try:
                create_ms(path, threads, cache)  # writes the cache files
                create_ms(path, threads, cache, "content_always")
                create_ms(path, threads, cache, "file_stat")
                times = {"uncached": [], "cached": [], "always": [], "stat": []}
                for _ in range(args.rounds):
                    times["uncached"].append(create_ms(path, threads, ""))
                    times["cached"].append(create_ms(path, threads, cache))
                    times["always"].append(create_ms(path, threads, cache, "content_always"))
                    times["stat"].append(create_ms(path, threads, cache, "file_stat"))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            u, c, a, st = (statistics.median(times[k]) for k in ("uncached", "cached", "always", "stat"))
            mb = os.path.getsize(path) / 1e6
            print(f"| {os.path.basename(path)[:-5]} | {mb:.0f} | {threads} | {u:.1f} | {c:.1f} | {u / c:.1f} | "
                  f"{a:.1f} | {u / a:.1f} | {st:.1f} | {u / st:.1f} |", flush=True)


if __name__ == "__main__":
    main()
