"""Soak through the Python API: 8 threads x R Runs (ONYX_SOAK_RUNS; 1000 at full size) on one
session of each model give, bit for bit, the serial Runs' outputs for the same inputs, and those
serial outputs match ONNX Runtime's. A pool of 2T + 1 seeded feeds (of two or three shapes) is
shared: thread t's run i takes feed (i * T + t) mod (2T + 1), so threads side by side have
different inputs and a thread's consecutive Runs differ. The C++ side (onyx_soak_tests) soaks
the other real models, without Python in between."""
import os
import threading
import time

import numpy as np
import pytest

import onyx
from onyx_harness import assert_outputs_close, bench_feeds, bench_manifest, require_ort, require_shared

THREADS = int(os.environ.get("ONYX_SOAK_THREADS", "8"))


def soak_runs(ci_default):
    return int(os.environ.get("ONYX_SOAK_RUNS", ci_default))


def soak(label, path, make_feeds, ci_runs, rtol=1e-3, atol=1e-4):
    ort = require_ort()
    so = onyx.SessionOptions()
    so.intra_op_num_threads = 2
    session = onyx.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    reference = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    pool_size = 2 * THREADS + 1
    pool = [make_feeds(k, 1000 + k) for k in range(pool_size)]
    serial = [session.run(None, feeds) for feeds in pool]
    for k, feeds in enumerate(pool):  # the serial Runs are right
        assert_outputs_close(reference.run(None, feeds), serial[k])
    assert not all(np.array_equal(a, b) for a, b in zip(serial[0], serial[1])), "feeds 0 and 1 give one answer"

    runs = soak_runs(ci_runs)
    problems = []

    def work(t):
        for i in range(runs):
            k = (i * THREADS + t) % pool_size
            try:
                got = session.run(None, pool[k])
            except Exception as e:  # noqa: BLE001 (any failure is a finding)
                problems.append(f"thread {t} run {i} feed {k}: {e}")
                continue
            for n, (a, b) in enumerate(zip(got, serial[k])):
                if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                    problems.append(f"thread {t} run {i} feed {k}: output {n} differs from the serial Run's")

    start = time.perf_counter()
    workers = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print(f"[soak] {label}: {THREADS} threads x {runs} runs ({pool_size} feeds): {len(problems)} problems, "
          f"{time.perf_counter() - start:.1f} s")
    assert not problems, problems[:5]


@pytest.mark.parametrize("name,ci_runs,shapes", [
    ("bert_tiny", 12, [{"input_ids": [1, 128], "attention_mask": [1, 128], "token_type_ids": [1, 128]},
                       {"input_ids": [2, 33], "attention_mask": [2, 33], "token_type_ids": [2, 33]}]),
    ("mobilenetv2", 3, [{"input": [1, 3, 224, 224]}, {"input": [2, 3, 224, 224]}]),
])
def test_bench_model_concurrent_runs_equal_serial(name, ci_runs, shapes):
    folder, manifest = bench_manifest()
    entry = manifest[name]
    soak(name, os.path.join(folder, entry["file"]),
         lambda k, seed: bench_feeds(entry, seed=seed, shape_override=shapes[k % len(shapes)]), ci_runs)


def test_real_classifier_concurrent_runs_equal_serial():
    path = require_shared("models", "real", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    widths = [192, 96, 320]

    def feeds(k, seed):
        rng = np.random.default_rng(seed)
        return {"x": rng.standard_normal((1, 3, 48, widths[k % 3])).astype(np.float32)}

    soak("ch_ppocr_mobile_v2.0_cls", path, feeds, 12)


def test_silero_vad_concurrent_runs_equal_serial():
    path = require_shared("models", "real", "silero_vad_v5.onnx")

    def feeds(k, seed):
        rng = np.random.default_rng(seed)
        samples, rate = (512, 16000) if k % 2 == 0 else (256, 8000)
        return {"input": rng.uniform(-0.5, 0.5, (1, samples)).astype(np.float32),
                "state": rng.uniform(-0.1, 0.1, (2, 1, 128)).astype(np.float32),
                "sr": np.array(rate, np.int64)}

    soak("silero_vad_v5", path, feeds, 12)
