"""The line protocol of bench/compare's workers, for the ones written in Python (the Onyx one,
onyx_worker.cc, speaks the same):
  WORKER MODEL THREADS [OPT_LEVEL] NAME=FILE.npy...
At start the worker prints "ready <session creation ms>", then answers on stdin: "run" -> "ms <wall
ms of one run>"; "save DIR" -> writes the outputs as DIR/<i>_<name>.npy, "saved"; "stats" ->
"rss_mb <peak RSS>"; "quit". A failure prints "error <first line of the message>" and exits 1."""
import os
import sys
import time
import traceback

import numpy as np


def read_feeds(specs):
    """{input name: array} from NAME=FILE.npy arguments (a name may itself contain '=')."""
    feeds = {}
    for spec in specs:
        name, file = spec.rsplit("=", 1)
        feeds[name] = np.load(file)
    return feeds


def peak_rss_mb():
    # VmHWM, not resource.getrusage's ru_maxrss: a forked child starts with its parent's maximum.
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return -1.0


def file_name(i, name):
    return f"{i}_{name.replace('/', '_').replace(':', '_')}.npy"


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def serve(create, run):
    """create() makes the session (timed) and returns the output names; run() runs it once on the
    feeds and returns the outputs in that order."""
    try:
        t0 = time.perf_counter_ns()
        names = create()
        say(f"ready {(time.perf_counter_ns() - t0) / 1e6:.3f}")
        for line in sys.stdin:
            line = line.rstrip("\n")
            if line == "run":
                r0 = time.perf_counter_ns()
                run()
                say(f"ms {(time.perf_counter_ns() - r0) / 1e6:.4f}")
            elif line.startswith("save "):
                folder = line[5:]
                os.makedirs(folder, exist_ok=True)
                for i, (name, value) in enumerate(zip(names, run())):
                    np.save(os.path.join(folder, file_name(i, name)), np.asarray(value))
                say("saved")
            elif line == "stats":
                say(f"rss_mb {peak_rss_mb():.1f}")
            elif line == "quit":
                break
    except Exception as e:  # the driver reads one line; the rest goes to stderr
        traceback.print_exc()
        first = (str(e).strip().splitlines() or [""])[0]
        say(f"error {type(e).__name__}: {first}")
        raise SystemExit(1)
