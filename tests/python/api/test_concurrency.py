"""Several Python threads running one session: right answers, and the GIL is free while Onyx runs."""
import threading
import time

import numpy as np

import onyx
from api_models import matmul_chain_model, two_output_model


def test_threads_calling_run_get_their_own_answers():
    session = onyx.InferenceSession(two_output_model())
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(50):
            a = rng.standard_normal((2, 3), dtype=np.float32)
            b = rng.standard_normal((2, 3), dtype=np.float32)
            total, product = session.run(None, {"a": a, "b": b})
            if not (np.allclose(total, a + b + [10, 20, 30]) and np.allclose(product, a * b)):
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_run_releases_the_gil():
    so = onyx.SessionOptions()
    so.intra_op_num_threads = 1
    session = onyx.InferenceSession(matmul_chain_model(n=1024, depth=32), so)
    x = np.ones((256, 1024), np.float32)  # 17 GFLOP: a run of a tenth of a second or more
    ticks = []
    running = threading.Event()
    finished = threading.Event()

    def run():
        running.set()
        session.run(None, {"x": x})
        finished.set()

    thread = threading.Thread(target=run)
    thread.start()
    running.wait()
    start = time.perf_counter()
    # Python code keeps running while the session computes; with the GIL held it could not.
    while not finished.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    thread.join()
    elapsed_ms = (time.perf_counter() - start) * 1000
    assert len(ticks) >= max(3, elapsed_ms / 4), f"the main thread ran {len(ticks)} times in {elapsed_ms:.0f} ms"

