"""Model-mutation campaign: edit real models the way a broken exporter or a corrupt file would,
run each mutant with `onyx run --random` under a timeout and a memory cap, and classify it as
ran / error (one clean line of valid UTF-8) / messy (an error that is not one clean line) /
crash (killed by a signal, or a sanitizer report) / hang. Crashing and hanging mutants are kept.

Every mutant is a pure function of (source model, seed, index), so a kept mutant can be
regenerated from its name:  mutate_models.py --replay SOURCE.onnx:SEED:INDEX

Usage:
  mutate_models.py --onyx BIN [--models M.onnx ...] [--bench-dir DIR] [--count N] [--seed S]
                   [--jobs J] [--timeout SEC] [--keep DIR] [--config KEY=VALUE ...]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper, numpy_helper  # noqa: F401  (helper used by callers)

# Extremes chosen to hit overflow, negative-index and huge-allocation paths.
EXTREME_INTS = [0, -1, 1, 2, -2, 2**31 - 1, -2**31, 2**40, -2**40, 2**62, -2**63, 2**63 - 1, 1000003]
EXTREME_FLOATS = [0.0, -0.0, 1e38, -1e38, float("inf"), float("-inf"), float("nan"), 1e-45]
SWAP_OPS = ["Concat", "Reshape", "Gather", "Slice", "Transpose", "Conv", "MatMul", "Gemm", "Add",
            "Split", "Squeeze", "Unsqueeze", "Expand", "Tile", "Pad", "Resize", "Softmax", "Identity",
            "Shape", "Cast", "ReduceMean", "LayerNormalization", "Loop", "If", "Scan", "NotAnOp"]
OPSETS = [-1, 0, 1, 5, 6, 7, 9, 11, 13, 17, 21, 25, 28, 29, 1000, 2**31 - 1]
BIG_DIMS = [0, 2**40, 2**31, -1, -7, 2**62]
# Protobuf's Python API only takes valid text: names get this marker, and the serialized model
# gets it replaced by invalid UTF-8 of the same length (so no length prefix changes).
BAD_UTF8_MARK = "@@BADUTF8@@"
BAD_UTF8_BYTES = b"\xff\xfe\xc3(bad\x80\x1b[\x00"


def _pick_node(rng, graph, pred=lambda n: True):
    nodes = [n for n in graph.node if pred(n)]
    return rng.choice(nodes) if nodes else None


def mut_attribute_extreme(rng, model):
    node = _pick_node(rng, model.graph, lambda n: len(n.attribute) > 0)
    if node is None:
        return None
    attr = rng.choice(node.attribute)
    if attr.type == onnx.AttributeProto.INT:
        attr.i = rng.choice(EXTREME_INTS)
    elif attr.type == onnx.AttributeProto.INTS:
        if attr.ints and rng.random() < 0.8:
            attr.ints[rng.randrange(len(attr.ints))] = rng.choice(EXTREME_INTS)
        else:
            del attr.ints[:]
            attr.ints.extend(rng.choice(EXTREME_INTS) for _ in range(rng.randrange(0, 9)))
    elif attr.type == onnx.AttributeProto.FLOAT:
        attr.f = rng.choice(EXTREME_FLOATS)
    elif attr.type == onnx.AttributeProto.FLOATS and attr.floats:
        attr.floats[rng.randrange(len(attr.floats))] = rng.choice(EXTREME_FLOATS)
    elif attr.type == onnx.AttributeProto.STRING:
        attr.s = rng.choice([b"", b"\xff\xfe bad", b"NOTAMODE" * 4])
    elif attr.type == onnx.AttributeProto.TENSOR:
        attr.t.dims.append(rng.choice(BIG_DIMS))
    else:
        attr.type = rng.choice([onnx.AttributeProto.INT, onnx.AttributeProto.FLOATS])
    return f"attribute {node.op_type}.{attr.name}"


def _pick_input_slot(rng, graph):
    node = _pick_node(rng, graph, lambda n: len(n.input) > 0)
    if node is None:
        return None, None
    return node, rng.randrange(len(node.input))


def mut_input_missing(rng, model):
    node, k = _pick_input_slot(rng, model.graph)
    if node is None:
        return None
    node.input[k] = rng.choice(["missing_value", "", BAD_UTF8_MARK])
    return f"input missing {node.op_type}[{k}]"


def mut_input_self(rng, model):
    node, k = _pick_input_slot(rng, model.graph)
    if node is None or not node.output:
        return None
    node.input[k] = node.output[0]
    return f"input self-loop {node.op_type}[{k}]"


def mut_input_later(rng, model):
    """An input produced by a node further down the list (a cycle when it is downstream)."""
    nodes = model.graph.node
    if len(nodes) < 3:
        return None
    i = rng.randrange(len(nodes) - 1)
    j = rng.randrange(i + 1, len(nodes))
    if not nodes[i].input or not nodes[j].output:
        return None
    k = rng.randrange(len(nodes[i].input))
    nodes[i].input[k] = nodes[j].output[0]
    return f"input from later node {nodes[i].op_type}[{k}] <- {nodes[j].op_type}"


def mut_op_swap(rng, model):
    node = _pick_node(rng, model.graph)
    if node is None:
        return None
    old = node.op_type
    node.op_type = rng.choice(SWAP_OPS)
    return f"op swap {old} -> {node.op_type}"


def mut_initializer_dims(rng, model):
    inits = model.graph.initializer
    if not inits:
        return None
    t = rng.choice(inits)
    choice = rng.randrange(4)
    if choice == 0 and t.dims:
        t.dims[rng.randrange(len(t.dims))] = rng.choice(BIG_DIMS + [1, 2, 3])
    elif choice == 1:
        t.dims.append(rng.choice([1, 2, 0, 2**40]))
    elif choice == 2 and t.dims:
        del t.dims[-1]
    else:
        t.data_type = rng.choice([0, 1, 2, 7, 10, 16, 17, 21, 22, 23, 99])
    return f"initializer dims/type {t.name}"


def mut_initializer_bytes(rng, model):
    inits = [t for t in model.graph.initializer if t.raw_data]
    if not inits:
        return None
    t = rng.choice(inits)
    raw = bytearray(t.raw_data)
    if rng.random() < 0.5:
        t.raw_data = bytes(raw[: rng.randrange(len(raw))])
    else:
        for _ in range(rng.randrange(1, 9)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        t.raw_data = bytes(raw)
    return f"initializer bytes {t.name}"


def mut_input_dim(rng, model):
    init_names = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in init_names and i.type.tensor_type.shape.dim]
    if not inputs:
        return None
    inp = rng.choice(inputs)
    dims = inp.type.tensor_type.shape.dim
    d = dims[rng.randrange(len(dims))]
    d.dim_value = rng.choice([0, 2**31, 2**40, 2**62])
    return f"graph input dim {inp.name}"


def mut_input_rank(rng, model):
    init_names = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in init_names]
    if not inputs:
        return None
    inp = rng.choice(inputs)
    shape = inp.type.tensor_type.shape
    if rng.random() < 0.5:
        del shape.dim[:]
    extra = rng.choice([1, 3, 40])
    for _ in range(extra):
        # Forty dims of 2 would make --random feed 2^40 elements through symbolic dims the
        # loader cannot bound: the long ranks are all 1s.
        shape.dim.add().dim_value = 1 if extra > 3 else rng.choice([1, 2])
    return f"graph input rank {inp.name}"


def mut_node_delete(rng, model):
    nodes = model.graph.node
    if not nodes:
        return None
    i = rng.randrange(len(nodes))
    op = nodes[i].op_type
    del nodes[i]
    return f"node delete {op}"


def mut_node_swap(rng, model):
    nodes = model.graph.node
    if len(nodes) < 2:
        return None
    i, j = rng.sample(range(len(nodes)), 2)
    a, b = onnx.NodeProto(), onnx.NodeProto()
    a.CopyFrom(nodes[i])
    b.CopyFrom(nodes[j])
    nodes[i].CopyFrom(b)
    nodes[j].CopyFrom(a)
    return f"node swap {a.op_type} <-> {b.op_type}"


def mut_node_shuffle(rng, model):
    """A valid graph with nodes out of topological order (ORT sorts them)."""
    nodes = list(model.graph.node)
    rng.shuffle(nodes)
    copies = []
    for n in nodes:
        c = onnx.NodeProto()
        c.CopyFrom(n)
        copies.append(c)
    del model.graph.node[:]
    model.graph.node.extend(copies)
    return "node shuffle"


def mut_empty_name(rng, model):
    node = _pick_node(rng, model.graph, lambda n: len(n.output) > 0)
    if node is None:
        return None
    k = rng.randrange(len(node.output))
    node.output[k] = ""
    return f"empty output name {node.op_type}[{k}]"


def mut_duplicate_output(rng, model):
    nodes = model.graph.node
    if len(nodes) < 2:
        return None
    i, j = rng.sample(range(len(nodes)), 2)
    if not nodes[i].output or not nodes[j].output:
        return None
    nodes[i].output[0] = nodes[j].output[0]
    return f"duplicate output {nodes[i].op_type}, {nodes[j].op_type}"


def mut_opset(rng, model):
    if not model.opset_import:
        return None
    o = rng.choice(model.opset_import)
    o.version = rng.choice(OPSETS)
    return f"opset {o.domain or 'ai.onnx'} -> {o.version}"


def mut_ir_version(rng, model):
    model.ir_version = rng.choice([0, 1, 3, 13, 14, 2**40, -1])
    return f"ir_version {model.ir_version}"


def mut_bad_name(rng, model):
    """Names with invalid UTF-8: error messages must escape them."""
    node = _pick_node(rng, model.graph)
    if node is None:
        return None
    node.name = BAD_UTF8_MARK
    if rng.random() < 0.5:
        node.op_type = BAD_UTF8_MARK
    return "invalid utf-8 name"


PROTO_MUTATIONS = [mut_attribute_extreme, mut_input_missing, mut_input_self, mut_input_later, mut_op_swap,
                   mut_initializer_dims, mut_initializer_bytes, mut_input_dim, mut_input_rank, mut_node_delete,
                   mut_node_swap, mut_node_shuffle, mut_empty_name, mut_duplicate_output, mut_opset,
                   mut_ir_version, mut_bad_name]


def byte_mutation(rng, data):
    data = bytearray(data)
    if rng.random() < 0.4:
        cut = rng.randrange(len(data))
        return bytes(data[:cut]), f"truncate at {cut}"
    # Flips concentrated in the graph structure (the model's tail holds the nodes after the
    # weights in most exporters' order; the head holds the header).
    flips = rng.randrange(1, 17)
    for _ in range(flips):
        region = rng.random()
        if region < 0.3:
            pos = rng.randrange(min(len(data), 4096))
        elif region < 0.6:
            pos = len(data) - 1 - rng.randrange(min(len(data), 65536))
        else:
            pos = rng.randrange(len(data))
        data[pos] = rng.randrange(256) if rng.random() < 0.5 else data[pos] ^ (1 << rng.randrange(8))
    return bytes(data), f"{flips} byte flips"


def make_mutant(source, base, data, seed, index):
    """The index-th mutant of a source: (bytes, description)."""
    rng = random.Random(f"{os.path.basename(source)}:{seed}:{index}")
    if rng.random() < 0.2:
        return byte_mutation(rng, data)
    model = onnx.ModelProto()
    model.CopyFrom(base)
    steps = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        for _attempt in range(8):
            desc = rng.choice(PROTO_MUTATIONS)(rng, model)
            if desc:
                steps.append(desc)
                break
    blob = model.SerializeToString().replace(BAD_UTF8_MARK.encode(), BAD_UTF8_BYTES)
    return blob, "; ".join(steps) or "none"


# A 64 Mi-element limit refuses mutants that declare huge inputs (a dim set to 2^31, forty extra
# dims) instead of computing on them for minutes; the limit itself is under test too.
DEFAULT_CONFIG = ("onyx.loader.max_elements=67108864",)


def _limit_memory(limit_bytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def _is_clean_line(stderr):
    try:
        text = stderr.decode("utf-8")
    except UnicodeDecodeError:
        return False
    lines = [line for line in text.strip().split("\n") if line.strip()]
    return len(lines) == 1


def run_mutant(onyx, path, dims, timeout, mem_limit, feeds=None, config=()):
    cmd = [onyx, "run", "--random", path]
    for entry in config:
        cmd += ["--config", entry]
    for name, file in (feeds or {}).items():
        cmd += ["--input", f"{name}={file}"]
    for name, value in dims.items():
        cmd += ["--dim", f"{name}={value}"]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout,
                              preexec_fn=_limit_memory(mem_limit))
    except subprocess.TimeoutExpired:
        return "hang", b""
    stderr = proc.stderr[-4000:]
    if proc.returncode < 0 or b"Sanitizer" in proc.stderr or b"runtime error:" in proc.stderr:
        return "crash", stderr
    if proc.returncode == 0:
        return "ran", stderr
    return ("error" if _is_clean_line(proc.stderr) else "messy"), stderr


def symbolic_dims(model, default=1, overrides=None):
    """--dim values for the model's symbolic dims: small but large enough for its convolutions."""
    dims = {}
    for inp in model.graph.input:
        for d in inp.type.tensor_type.shape.dim:
            if d.dim_param:
                dims[d.dim_param] = (overrides or {}).get(d.dim_param, default)
    return dims


# Sizes that let the real models run end to end (the PaddleOCR models downsample by 32).
DIM_OVERRIDES = {"p2o.DynamicDimension.1": 64, "p2o.DynamicDimension.2": 64, "sequence": 16}


def source_feeds(source, folder):
    """Inputs the unmutated model runs on, as .npy files, where --random's values do not fit
    (token ids within the vocabulary, Silero's sample rate): {name: file}."""
    import numpy as np
    arrays = {}
    manifest = os.path.join(os.path.dirname(source), "manifest.json")
    if os.path.exists(manifest):
        for entry in json.load(open(manifest))["models"]:
            if entry["file"] != os.path.basename(source):
                continue
            rng = np.random.default_rng(0)
            for spec in entry["inputs"]:
                shape = [16 if i == len(spec["bench_shape"]) - 1 and spec["fill"] != "normal" else d
                         for i, d in enumerate(spec["bench_shape"])]
                if spec["fill"] == "normal":
                    arrays[spec["name"]] = rng.standard_normal(shape, dtype=np.float32)
                elif spec["fill"] == "ones":
                    arrays[spec["name"]] = np.ones(shape, np.int64)
                else:
                    arrays[spec["name"]] = rng.integers(spec["fill"][1], spec["fill"][2], size=shape, dtype=np.int64)
    if os.path.basename(source).startswith("silero_vad"):
        arrays = {"input": np.zeros([1, 512], np.float32), "state": np.zeros([2, 1, 128], np.float32),
                  "sr": np.array(16000, np.int64)}
    files = {}
    for name, array in arrays.items():
        files[name] = os.path.join(folder, f"feed_{os.path.basename(source)}_{len(files)}.npy")
        np.save(files[name], array)
    return files


def mutate_source(onyx, source, seed, count, work, keep=None, jobs=2, timeout=30.0, mem_limit=6 * 2**30,
                  config=DEFAULT_CONFIG, log=print, kinds=None):
    """Runs `count` mutants of one source model; returns ({verdict: n}, [kept mutant records]).
    Crashing, hanging and messy mutants are moved to `keep` when given. `kinds`, a Counter when
    given, counts the mutants by kind ("protobuf" edits, "bytes" flips and truncations) and the
    slowest run ("max_seconds")."""
    import time
    base = onnx.load(source)
    data = base.SerializeToString()
    dims = symbolic_dims(base, overrides=DIM_OVERRIDES)
    feeds = source_feeds(source, work)
    counts, kept = collections.Counter(), []
    pending = {}

    def drain(wait_all):
        done, _ = concurrent.futures.wait(
            pending, return_when=concurrent.futures.ALL_COMPLETED if wait_all else concurrent.futures.FIRST_COMPLETED)
        for fut in done:
            index, desc, path = pending.pop(fut)
            verdict, stderr, seconds = fut.result()
            counts[verdict] += 1
            if kinds is not None:
                kinds["bytes" if desc.startswith("truncate") or desc.endswith("byte flips") else "protobuf"] += 1
                kinds["max_seconds"] = max(kinds["max_seconds"], round(seconds, 1))
            if verdict in ("crash", "hang", "messy"):
                name = f"{os.path.basename(source)}:{seed}:{index}"
                record = {"id": name, "verdict": verdict, "mutation": desc,
                          "stderr": stderr.decode("utf-8", "backslashreplace")[-600:]}
                if keep:
                    record["file"] = name.replace(":", "_") + ".onnx"
                    shutil.move(path, os.path.join(keep, record["file"]))  # work may be another file system
                kept.append(record)
                log(f"  {verdict}: {name} ({desc}): {record['stderr'][-200:]!r}")
            if os.path.exists(path):
                os.remove(path)

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for index in range(count):
            blob, desc = make_mutant(source, base, data, seed, index)
            path = os.path.join(work, f"m_{os.getpid()}_{index}.onnx")
            with open(path, "wb") as f:
                f.write(blob)
            def timed(*run_args):
                start = time.monotonic()
                verdict, stderr = run_mutant(*run_args)
                return verdict, stderr, time.monotonic() - start
            pending[pool.submit(timed, onyx, path, dims, timeout, mem_limit, feeds, config)] = (index, desc, path)
            if len(pending) >= 2 * jobs:
                drain(False)
        drain(True)
    return counts, kept


def campaign(args):
    os.makedirs(args.keep, exist_ok=True)
    work = tempfile.mkdtemp(prefix="onyx-mutants-", dir=args.work_dir)
    totals = collections.Counter()
    kinds = collections.Counter()
    per_source = {}
    kept = []
    counts_by_name = dict(entry.split("=", 1) for entry in args.counts or [])
    for source in args.models:
        count = int(counts_by_name.get(os.path.basename(source), args.count))
        source_kinds = collections.Counter()
        counts, source_kept = mutate_source(args.onyx, source, args.seed, count, work, args.keep, args.jobs,
                                            args.timeout, args.mem_limit, args.config,
                                            log=lambda line: print(line, flush=True), kinds=source_kinds)
        kept += source_kept
        per_source[os.path.basename(source)] = dict(counts, **source_kinds)
        totals.update(counts)
        kinds["protobuf"] += source_kinds["protobuf"]
        kinds["bytes"] += source_kinds["bytes"]
        kinds["max_seconds"] = max(kinds["max_seconds"], source_kinds["max_seconds"])
        print(f"{os.path.basename(source)}: {dict(counts)} {dict(source_kinds)}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    report = {"seed": args.seed, "count_per_model": args.count, "totals": dict(totals), "kinds": dict(kinds),
              "per_model": per_source, "kept": kept}
    with open(os.path.join(args.keep, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps({"totals": dict(totals), "kinds": dict(kinds)}))
    return 1 if totals["crash"] or totals["hang"] or totals["messy"] else 0


def default_models(bench_dir, max_mb):
    here = os.path.dirname(os.path.abspath(__file__))
    shared = os.environ.get("ONYX_SHARED_DIR", os.path.join(here, "..", "..", "..", "shared"))
    real = os.path.join(shared, "models", "real")
    models = sorted(os.path.join(real, f) for f in os.listdir(real) if f.endswith(".onnx")) if os.path.isdir(real) else []
    if bench_dir and os.path.isdir(bench_dir):
        models += sorted(os.path.join(bench_dir, f) for f in os.listdir(bench_dir) if f.endswith(".onnx"))
    return [m for m in models if os.path.getsize(m) <= max_mb * 2**20]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--onyx", required=True, help="the onyx CLI")
    parser.add_argument("--models", nargs="*", help="source models (default: ../shared/models/real + --bench-dir)")
    parser.add_argument("--bench-dir", help="folder of the generated bench models")
    parser.add_argument("--max-mb", type=float, default=128, help="skip default models larger than this")
    parser.add_argument("--count", type=int, default=100, help="mutants per source model")
    parser.add_argument("--counts", nargs="*", help="FILE_NAME=N: another count for a source (small models get more)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds before a run counts as a hang")
    parser.add_argument("--mem-limit", type=int, default=6 * 2**30, help="address-space cap per run (bytes)")
    parser.add_argument("--keep", default="mutants-kept", help="where crashing/hanging mutants go")
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--config", nargs="*", default=list(DEFAULT_CONFIG),
                        help="KEY=VALUE session config entries for every run")
    parser.add_argument("--replay", help="SOURCE.onnx:SEED:INDEX: write that mutant to --keep and run it once")
    args = parser.parse_args()
    if args.replay:
        source, seed, index = args.replay.rsplit(":", 2)
        base = onnx.load(source)
        blob, desc = make_mutant(source, base, base.SerializeToString(), int(seed), int(index))
        os.makedirs(args.keep, exist_ok=True)
        path = os.path.join(args.keep, f"replay_{os.path.basename(source)}_{seed}_{index}.onnx")
        with open(path, "wb") as f:
            f.write(blob)
        verdict, stderr = run_mutant(args.onyx, path, symbolic_dims(base, overrides=DIM_OVERRIDES),
                                     args.timeout, args.mem_limit, source_feeds(source, args.keep), args.config)
        print(f"{desc}\n{verdict}: {path}\n{stderr.decode('utf-8', 'backslashreplace')}")
        return 0 if verdict in ("ran", "error") else 1
    args.models = args.models or default_models(args.bench_dir, args.max_mb)
    if not args.models:
        parser.error("no source models")
    return campaign(args)


if __name__ == "__main__":
    sys.exit(main())
