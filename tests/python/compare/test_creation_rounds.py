"""bench/compare's session-creation column: `--create-rounds N` makes N fresh workers per engine
(N - 1 made and closed at once, plus the one that is timed), in an order that rotates from round to
round, and the row shows the median of their creation times; an engine that cannot load the model
is left out of the extra rounds instead of stopping the row."""
import argparse
import os
import sys

import onyx_harness

sys.path.insert(0, os.path.join(onyx_harness.REPO, "bench", "compare"))
import compare  # noqa: E402


class FakeWorker:
    """Stands in for a worker process: its creation time comes from a per-engine queue."""
    made = []
    queues = {}

    def __init__(self, cmd):
        engine = cmd[0]
        if engine == "openvino":
            raise RuntimeError("worker said: error RuntimeError: cannot convert Conv-16")
        FakeWorker.made.append(engine)
        self.create_ms = FakeWorker.queues[engine].pop(0)
        self.closed = False

    def close(self):
        self.closed = True


def _args(create_rounds, rows_measured=1):
    return argparse.Namespace(create_rounds=create_rounds, rows_measured=rows_measured)


def test_extra_rounds_make_one_worker_per_engine_per_round_in_rotating_order(monkeypatch):
    monkeypatch.setattr(compare, "Worker", FakeWorker)
    monkeypatch.setattr(compare, "worker_command", lambda engine, *rest: [engine])
    FakeWorker.made = []
    FakeWorker.queues = {"onyx": [10.0, 30.0, 20.0], "ort": [5.0, 6.0, 7.0]}
    times = compare.extra_creations(["onyx", "ort"], "model.onnx", 1, [], _args(create_rounds=4))
    assert times == {"onyx": [10.0, 30.0, 20.0], "ort": [5.0, 6.0, 7.0]}
    # Each round makes every engine once, and the first one made changes between rounds.
    rounds = [FakeWorker.made[i:i + 2] for i in range(0, 6, 2)]
    assert all(sorted(r) == ["onyx", "ort"] for r in rounds)
    assert len({r[0] for r in rounds}) == 2


def test_one_create_round_makes_no_extra_worker(monkeypatch):
    monkeypatch.setattr(compare, "Worker", FakeWorker)
    monkeypatch.setattr(compare, "worker_command", lambda engine, *rest: [engine])
    FakeWorker.made = []
    assert compare.extra_creations(["onyx", "ort"], "model.onnx", 1, [], _args(create_rounds=1)) == {"onyx": [], "ort": []}
    assert FakeWorker.made == []


def test_an_engine_that_cannot_load_is_left_out_of_the_extra_rounds(monkeypatch):
    monkeypatch.setattr(compare, "Worker", FakeWorker)
    monkeypatch.setattr(compare, "worker_command", lambda engine, *rest: [engine])
    FakeWorker.made = []
    FakeWorker.queues = {"onyx": [1.0, 2.0], "ort": [3.0, 4.0]}
    times = compare.extra_creations(["onyx", "ort", "openvino"], "model.onnx", 2, [], _args(create_rounds=3))
    assert times == {"onyx": [1.0, 2.0], "ort": [3.0, 4.0], "openvino": []}


def test_model_file_is_read_whole(tmp_path, monkeypatch):
    path = tmp_path / "model.onnx"
    path.write_bytes(os.urandom(9 << 20))  # more than one 8 MB read
    read = []

    class CountingFile:
        def __init__(self, file, mode):
            self.file = open(file, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def read(self, n=-1):
            chunk = self.file.read(n)
            read.append(len(chunk))
            return chunk

    # The module's own name `open` shadows the builtin for read_into_page_cache.
    monkeypatch.setattr(compare, "open", CountingFile, raising=False)
    compare.read_into_page_cache(str(path))
    assert sum(read) == 9 << 20
