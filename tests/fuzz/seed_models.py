"""Small models built with onnx's helpers for fast mutation runs (the CI replay and a campaign's
first sources): the shapes-computed-from-shapes pattern exporters write (Shape, Gather, Concat,
Reshape), attention-like MatMul/Softmax, a small CNN with Conv, pools, Resize and Split, and a
quantized (QDQ) block.

Run as a program it writes the seed corpus of every fuzz harness (docs/fuzzing.md), generated
each time from ../shared and never committed:
  seed_models.py --corpus OUT [--shared ../shared] [--bench-dir DIR] [--max-bytes N]
OUT/load_model and OUT/session: these models, the conformance models, and the real and bench
models of at most --max-bytes; OUT/tensor_proto: the conformance test data's .pb files;
OUT/npy: arrays of every dtype and layout the .npy reader meets; OUT/shape_inference: one input
per rule index (the harness reads its first two bytes as the index) with seeded bytes after."""
import argparse
import hashlib
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _model(nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(nodes, "seed", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def attention_block(seq=8, hidden=16, heads=2):
    r = np.random.default_rng(0)
    f = lambda *shape: r.standard_normal(shape).astype(np.float32) * 0.2  # noqa: E731
    inits = [_const("wq", f(hidden, hidden)), _const("wk", f(hidden, hidden)), _const("wv", f(hidden, hidden)),
             _const("gamma", np.ones(hidden, np.float32)), _const("beta", np.zeros(hidden, np.float32)),
             _const("zero", np.array([0], np.int64)), _const("one", np.array([1], np.int64)),
             _const("heads", np.array([heads, hidden // heads], np.int64)), _const("flat", np.array([0, 0, -1], np.int64)),
             _const("scale", np.array(1.0 / np.sqrt(hidden // heads), np.float32)),
             _const("starts", np.array([0], np.int64)), _const("ends", np.array([seq // 2], np.int64)),
             _const("axes", np.array([1], np.int64))]
    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "gamma", "beta"], ["ln"], axis=-1, epsilon=1e-5),
        n("MatMul", ["ln", "wq"], ["q"]), n("MatMul", ["ln", "wk"], ["k"]), n("MatMul", ["ln", "wv"], ["v"]),
        n("Shape", ["x"], ["shape"]),
        n("Gather", ["shape", "zero"], ["batch"], axis=0), n("Gather", ["shape", "one"], ["seq"], axis=0),
        n("Concat", ["batch", "seq", "heads"], ["split_shape"], axis=0),
        n("Reshape", ["q", "split_shape"], ["q4"]), n("Reshape", ["k", "split_shape"], ["k4"]),
        n("Reshape", ["v", "split_shape"], ["v4"]),
        n("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]), n("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        n("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
        n("MatMul", ["qt", "kt"], ["scores"]), n("Mul", ["scores", "scale"], ["scaled"]),
        n("Softmax", ["scaled"], ["probs"], axis=-1), n("MatMul", ["probs", "vt"], ["ctx"]),
        n("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]), n("Reshape", ["ctx_t", "flat"], ["merged"]),
        n("Add", ["merged", "x"], ["y"]),
        n("Slice", ["y", "starts", "ends", "axes"], ["half"]),
        n("ReduceMean", ["half"], ["pooled"], axes=[1], keepdims=0),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", seq, hidden])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", seq, hidden]),
               helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])]
    return _model(nodes, inputs, outputs, inits, opset=17)


def small_cnn(size=16):
    r = np.random.default_rng(1)
    f = lambda *shape: r.standard_normal(shape).astype(np.float32) * 0.3  # noqa: E731
    inits = [_const("w1", f(8, 3, 3, 3)), _const("b1", f(8)), _const("w2", f(8, 4, 3, 3)),
             _const("bn_s", np.ones(8, np.float32)), _const("bn_b", np.zeros(8, np.float32)),
             _const("bn_m", np.zeros(8, np.float32)), _const("bn_v", np.ones(8, np.float32)),
             _const("scales", np.array([1, 1, 2, 2], np.float32)), _const("split", np.array([4, 4], np.int64)),
             _const("fc", f(12, 5))]
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        n("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"]),
        n("Relu", ["bn"], ["r1"]),
        n("Split", ["r1", "split"], ["s1", "s2"], axis=1),
        n("Conv", ["s1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=1),
        n("MaxPool", ["c2"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Resize", ["p1", "", "scales"], ["up"], mode="nearest"),
        n("Concat", ["up", "s2"], ["cat"], axis=1),
        n("GlobalAveragePool", ["cat"], ["g"]),
        n("Flatten", ["g"], ["flat"], axis=1),
        n("Gemm", ["flat", "fc"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, size, size])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 5])]
    return _model(nodes, inputs, outputs, inits, opset=13)


def quantized_block(seq=8, hidden=16):
    """A QDQ chain through the float ops Onyx computes as ONNX Runtime does in a quantized graph
    (LayerNormalization, Sigmoid, Erf, Tanh), an int8 MatMul the QDQ fusion makes QLinearMatMul,
    element-wise chains QLinearLookupFusion turns into one table, and a DynamicQuantizeLinear."""
    r = np.random.default_rng(2)
    scalar = lambda v, dtype=np.float32: np.array(v, dtype)  # noqa: E731
    inits = [_const("xs", scalar(0.05)), _const("xz", scalar(128, np.uint8)), _const("ys", scalar(0.02)),
             _const("yz", scalar(128, np.uint8)), _const("w", r.integers(-60, 60, (hidden, hidden)).astype(np.int8)),
             _const("ws", scalar(0.01)), _const("wz", scalar(0, np.int8)),
             _const("gamma", np.ones(hidden, np.float32)), _const("beta", np.zeros(hidden, np.float32)),
             _const("half", scalar(0.5)), _const("w2", r.standard_normal((hidden, hidden)).astype(np.float32))]
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "xs", "xz"], ["xq"]), n("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        n("LayerNormalization", ["xd", "gamma", "beta"], ["ln"], axis=-1, epsilon=1e-5),
        n("QuantizeLinear", ["ln", "ys", "yz"], ["lnq"]), n("DequantizeLinear", ["lnq", "ys", "yz"], ["lnd"]),
        n("DequantizeLinear", ["w", "ws", "wz"], ["wd"]), n("MatMul", ["lnd", "wd"], ["mm"]),
        n("QuantizeLinear", ["mm", "xs", "xz"], ["mmq"]), n("DequantizeLinear", ["mmq", "xs", "xz"], ["mmd"]),
        n("Sigmoid", ["mmd"], ["sg"]), n("Mul", ["mmd", "sg"], ["silu"]),
        n("QuantizeLinear", ["silu", "ys", "yz"], ["sq"]), n("DequantizeLinear", ["sq", "ys", "yz"], ["sd"]),
        n("Erf", ["sd"], ["er"]), n("Tanh", ["er"], ["th"]), n("Mul", ["th", "half"], ["h"]),
        n("QuantizeLinear", ["h", "ys", "yz"], ["hq"]), n("DequantizeLinear", ["hq", "ys", "yz"], ["hd"]),
        n("DynamicQuantizeLinear", ["hd"], ["dq", "dqs", "dqz"]), n("DequantizeLinear", ["dq", "dqs", "dqz"], ["dd"]),
        n("MatMul", ["dd", "w2"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", seq, hidden])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", seq, hidden])]
    return _model(nodes, inputs, outputs, inits, opset=19)


SEED_MODELS = {"attention_block": attention_block, "small_cnn": small_cnn, "quantized_block": quantized_block}


def write_seed_models(folder):
    """Saves every seed model into folder; returns their paths."""
    import os
    paths = []
    for name, build in SEED_MODELS.items():
        path = os.path.join(folder, f"{name}.onnx")
        onnx.save(build(), path)
        paths.append(path)
    return paths


def _write_unique(folder, blob, seen):
    digest = hashlib.sha1(blob).hexdigest()
    if digest in seen:
        return
    seen.add(digest)
    with open(os.path.join(folder, digest), "wb") as f:
        f.write(blob)


def _files_under(root, suffix, max_bytes):
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if name.endswith(suffix) and os.path.getsize(path) <= max_bytes:
                found.append(path)
    return sorted(found)


def model_seeds(shared, bench_dir, max_bytes):
    """Serialized models: the built-in ones, then the real, bench and conformance models."""
    blobs = [build().SerializeToString() for build in SEED_MODELS.values()]
    roots = [os.path.join(shared, "models", "real")] if shared else []
    if bench_dir:
        roots.append(bench_dir)
    if shared:
        roots.append(os.path.join(shared, "onnx-tests"))
    for root in roots:
        for path in _files_under(root, ".onnx", max_bytes):
            with open(path, "rb") as f:
                blobs.append(f.read())
    return blobs


def npy_seeds():
    """.npy files of every dtype the reader maps, plus the layouts and versions it must refuse
    or handle: 0-d, empty, Fortran order, big-endian, strings, header versions 2 and 3."""
    import io
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 3)).astype(t) for t in ("<f4", "<f8", "<f2")]
    arrays += [rng.integers(-5, 5, (3, 2)).astype(t) for t in ("i1", "<i2", "<i4", "<i8")]
    arrays += [rng.integers(0, 9, (4,)).astype(t) for t in ("u1", "<u2", "<u4", "<u8")]
    arrays += [np.array([True, False]), np.array(1.5, np.float32), np.zeros((0, 3), np.float32),
               np.array(["ab", "\u00e9t\u00e9", ""]), np.array([1 + 2j], np.complex64), np.array([3j], np.complex128),
               np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)), np.arange(4, dtype=">f4"),
               np.ones((1, 1, 1, 1, 1, 1, 1, 1), np.float32)]
    blobs = []
    for a in arrays:
        for version in ((1, 0), (2, 0), (3, 0)):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, a, version=version)
            blobs.append(buf.getvalue())
    return blobs


def shape_inference_seeds(count=512):
    rng = np.random.default_rng(17)
    return [bytes([i >> 8, i & 255]) + rng.integers(0, 256, int(rng.integers(8, 96)), dtype=np.uint8).tobytes()
            for i in range(count)]


def write_corpus(out, shared, bench_dir, max_bytes):
    counts = {}
    models = model_seeds(shared, bench_dir, max_bytes)
    pbs = []
    if shared:
        for path in _files_under(os.path.join(shared, "onnx-tests"), ".pb", 64 * 1024):
            with open(path, "rb") as f:
                pbs.append(f.read())
    for harness, blobs in (("load_model", models), ("session", models), ("tensor_proto", pbs),
                           ("npy", npy_seeds()), ("shape_inference", shape_inference_seeds())):
        folder = os.path.join(out, harness)
        os.makedirs(folder, exist_ok=True)
        seen = set()
        for blob in blobs:
            _write_unique(folder, blob, seen)
        counts[harness] = len(seen)
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, help="folder to write OUT/<harness>/ into")
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--shared", default=os.path.join(here, "..", "..", "..", "shared"),
                        help="the shared data folder (absent: only the built-in and synthetic seeds)")
    parser.add_argument("--bench-dir", help="generated bench models (../shared/models/bench/generate.sh OUT_DIR)")
    parser.add_argument("--max-bytes", type=int, default=1 << 20, help="largest model taken as a seed")
    args = parser.parse_args()
    shared = args.shared if os.path.isdir(args.shared) else None
    counts = write_corpus(args.corpus, shared, args.bench_dir, args.max_bytes)
    print(" ".join(f"{h}={n}" for h, n in counts.items()) + ("" if shared else " (no shared folder)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
