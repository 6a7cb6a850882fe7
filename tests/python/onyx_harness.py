"""Helpers for Python tests: run a model in Onyx (the `onyx` command) and in ONNX Runtime (its
Python package, `onnxruntime` 1.31.1 from the checkout's venv, in this process) on the same
inputs, and compare.

Environment (set by ctest): ONYX_BIN, ONYX_SHARED_DIR, ONYX_WORK_DIR."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ONYX_BIN = os.environ.get("ONYX_BIN", os.path.join(REPO, "build", "release", "tools", "onyx", "onyx"))
SHARED_DIR = os.environ.get("ONYX_SHARED_DIR", os.path.join(REPO, "..", "shared"))
# Scratch files live under WORK_ROOT; tests/python/conftest.py gives every test its own folder
# there (SCRATCH) and removes it afterwards, so a full run never holds more than one test's files.
WORK_ROOT = os.environ.get("ONYX_WORK_DIR", os.path.join(REPO, "build", "release", "test-work"))
SCRATCH = None
ORT_VERSION = "1.31.1"  # the reference the tests are written against (requirements-dev.txt)
ORT_OPT_LEVELS = {"disabled": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED",
                  "all": "ORT_ENABLE_ALL"}


def _cpu_has_vnni():
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return True  # not x86 Linux: ORT's u8s8 path saturates only on x86 without VNNI
    return "avx512_vnni" in flags or "avx_vnni" in flags


# ONNX Runtime's u8 x s8 products on x86 without VNNI (AVX2's vpmaddubsw) add the products in
# pairs into int16, which saturates (255 * 127 * 2 > 32767): its quantized results are then not
# the exact ones, which Onyx computes everywhere. Its session.x64quantprecision option turns such
# weights into u8 (the exact u8 x u8 path): the reference sessions set it on those CPUs, so the
# comparisons stay exact. On VNNI CPUs ORT is exact, and left as it is.
_VNNI = _cpu_has_vnni()
ORT_EXACT_INT8_CONFIG = {} if _VNNI else {"session.x64quantprecision": "1"}


# Where x64quantprecision does not reach (weights fed at run time, com.microsoft QLinearConv with
# channels_last, which it leaves u8 x s8), ORT stays exact only while no pair sum can pass int16:
# |w| <= 64 (255 * 64 * 2 < 32768). Tests comparing such nodes with ORT clip their random int8
# weights to it on those CPUs (on VNNI CPUs the weights are left as drawn).
ORT_EXACT_S8_LIMIT = 127 if _VNNI else 64


def ort_exact_s8(codes):
    """int8 codes clipped to what ONNX Runtime multiplies exactly on this CPU (ORT_EXACT_S8_LIMIT)."""
    return np.clip(codes, -ORT_EXACT_S8_LIMIT, ORT_EXACT_S8_LIMIT).astype(np.int8)


def ort_session(ort, model_path, configure=None):
    """A reference InferenceSession on CPU; configure(options) sets the test's own options. ORT
    1.31 fails to make some models with x64quantprecision (no kernel for the QLinearConv it makes
    of an int8-activation one, u8 weights with an s8 input; "Attempt to replace the existing
    tensor" on a weight two nodes share): those are made without the option, as ORT makes them by
    default (its s8 x s8 path does not go through vpmaddubsw's int16 pairs)."""
    def make(exact_int8):
        options = ort.SessionOptions()
        for key, value in (ORT_EXACT_INT8_CONFIG.items() if exact_int8 else ()):
            options.add_session_config_entry(key, value)
        if configure is not None:
            configure(options)
        return ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])

    if not ORT_EXACT_INT8_CONFIG:
        return make(False)
    try:
        return make(True)
    except Exception:
        return make(False)  # fails again, with ORT's own message, when the option was not the cause


def require_shared(*parts):
    """Path under ../shared, or skip the test saying it is absent."""
    path = os.path.join(SHARED_DIR, *parts)
    if not os.path.exists(path):
        pytest.skip(f"{path} is absent (../shared not beside the checkout)")
    return path


def require_ort():
    """The onnxruntime module; a missing or wrong reference fails the test (never skips it)."""
    try:
        import onnxruntime
    except ImportError as e:
        pytest.fail(f"ONNX Runtime reference missing ({e}): run scripts/install_deps.sh and test with .venv/bin/python")
    if onnxruntime.__version__ != ORT_VERSION:
        pytest.fail(f"ONNX Runtime {onnxruntime.__version__} found, the reference is {ORT_VERSION}")
    return onnxruntime


def _write_inputs(folder, inputs):
    args = []
    for i, (name, array) in enumerate(inputs.items()):
        if hasattr(array, "SerializeToString"):  # an onnx MapProto / SequenceProto / TensorProto
            path = os.path.join(folder, f"in_{i}.pb")
            with open(path, "wb") as f:
                f.write(array.SerializeToString())
        else:
            path = os.path.join(folder, f"in_{i}.npy")
            np.save(path, array)
        args += ["--input", f"{name}={path}"]
    return args


def _read_outputs(folder):
    files = sorted((f for f in os.listdir(folder) if f.endswith(".npy")), key=lambda f: int(f.split("_", 1)[0]))
    return [np.load(os.path.join(folder, f), allow_pickle=False) for f in files]


def run_onyx(model_path, inputs, threads=1, extra_args=()):
    """Outputs of `onyx run` as numpy arrays, in model order."""
    with tempfile.TemporaryDirectory(dir=_work_dir()) as tmp:
        out = os.path.join(tmp, "out")
        cmd = [ONYX_BIN, "run", model_path, "--output-dir", out, "--threads", str(threads)]
        cmd += _write_inputs(tmp, inputs) + list(extra_args)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"onyx failed ({proc.returncode}): {proc.stderr.strip()}")
        return _read_outputs(out)


def _json_value(v):
    """A value `onyx run` wrote as JSON: tensors become arrays, maps dicts, sequences lists."""
    if v is None:
        return None
    if isinstance(v, list):
        return [_json_value(e) for e in v]
    if "keys" in v:
        return dict(zip(_json_value(v["keys"]).tolist(), _json_value(v["values"]).tolist()))
    if v["dtype"] == "string":
        return np.array(v["data"], dtype=object).reshape(v["shape"])
    data = [float(d) if isinstance(d, str) else d for d in v["data"]]
    return np.array(data, dtype=np.dtype(v["dtype"])).reshape(v["shape"])


def run_onyx_values(model_path, inputs, threads=1):
    """Every output of `onyx run` in model order: tensors as numpy arrays, sequences as lists,
    maps as dicts. Inputs may be numpy arrays or onnx protos (e.g. a MapProto)."""
    import json
    with tempfile.TemporaryDirectory(dir=_work_dir()) as tmp:
        out = os.path.join(tmp, "out")
        cmd = [ONYX_BIN, "run", model_path, "--output-dir", out, "--threads", str(threads)]
        cmd += _write_inputs(tmp, inputs)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"onyx failed ({proc.returncode}): {proc.stderr.strip()}")
        files = sorted(os.listdir(out), key=lambda f: int(f.split("_", 1)[0]))
        values = []
        for f in files:
            path = os.path.join(out, f)
            if f.endswith(".npy"):
                values.append(np.load(path, allow_pickle=False))
            else:
                with open(path) as fh:
                    values.append(_json_value(json.load(fh)))
        return values


def _ort_feed(value):
    """A feed as onnxruntime takes it: onnx protos become arrays, lists (sequences) and dicts (maps)."""
    if not hasattr(value, "SerializeToString"):
        return value
    from onnx import numpy_helper
    type_name = type(value).__name__
    if type_name == "TensorProto":
        return numpy_helper.to_array(value)
    if type_name == "SequenceProto":
        return numpy_helper.to_list(value)
    if type_name == "MapProto":  # ONNX Runtime takes plain Python keys and values
        return {(k.decode() if isinstance(k, bytes) else k): _python_scalar(v)
                for k, v in numpy_helper.to_dict(value).items()}
    if type_name == "OptionalProto":
        return numpy_helper.to_optional(value)
    raise TypeError(f"cannot feed a {type_name} to ONNX Runtime")


def _python_scalar(v):
    v = v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v
    return v.decode() if isinstance(v, bytes) else v


def _as_saved(value):
    """ONNX Runtime's output in the form `onyx run --output-dir` files take when read back: string
    tensors as fixed-width unicode arrays (as .npy stores them), other values unchanged."""
    if isinstance(value, np.ndarray) and value.dtype == object:
        return value.astype(str)
    return value


def run_ort(model_path, inputs, threads=1, opt_level="all"):
    """Outputs of ONNX Runtime on the same inputs, in model order (tensors as numpy arrays,
    sequences as lists, maps as dicts)."""
    ort = require_ort()

    def configure(options):
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, ORT_OPT_LEVELS[opt_level])
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL

    try:
        session = ort_session(ort, model_path, configure)
        results = session.run(None, {name: _ort_feed(v) for name, v in inputs.items()})
    except Exception as e:  # the reference's own failure, with its message
        raise RuntimeError(f"ONNX Runtime failed: {str(e).strip()}") from None
    return [_as_saved(r) for r in results]


def assert_outputs_close(expected, got, rtol=1e-3, atol=1e-4, names=None):
    assert len(expected) == len(got), f"{len(got)} outputs, expected {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        label = names[i] if names else f"output {i}"
        assert e.shape == g.shape, f"{label}: shape {g.shape}, expected {e.shape}"
        assert e.dtype == g.dtype, f"{label}: dtype {g.dtype}, expected {e.dtype}"
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=label)
        else:
            np.testing.assert_array_equal(g, e, err_msg=label)


def save_model(model, name):
    """Writes an onnx ModelProto under the work folder and returns its path."""
    import onnx
    path = os.path.join(_work_dir(), name)
    onnx.save(model, path)
    return path


def _work_dir():
    """The running test's scratch folder (WORK_ROOT outside a test, e.g. during collection)."""
    folder = SCRATCH or WORK_ROOT
    os.makedirs(folder, exist_ok=True)
    return folder


def build_dir():
    """The build folder beside WORK_ROOT, where generated models are kept between runs."""
    return os.path.dirname(os.path.abspath(WORK_ROOT))


def run_onnx_and_ort(model_path, inputs, threads=1):
    """(ONNX Runtime's outputs, Onyx's outputs) for the same inputs."""
    return run_ort(model_path, inputs, threads=threads), run_onyx(model_path, inputs, threads=threads)


def bench_models_dir():
    """The benchmark models of ../shared/models/bench, generated once into the build folder
    (the generator is deterministic, so an existing complete set is reused)."""
    import fcntl
    import json
    generator = require_shared("models", "bench", "generate.sh")
    out = os.path.join(build_dir(), "bench-models")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent tests wait for one generation
        manifest = os.path.join(out, "manifest.json")
        complete = os.path.exists(manifest) and all(
            os.path.exists(os.path.join(out, m["file"])) for m in json.load(open(manifest))["models"])
        if not complete:
            run_bench_generator(generator, out)
    return out


def run_bench_generator(generator, out, *names):
    """../shared's generate.sh into `out` (the named extra models, or the stored set). It needs a
    Python with onnx and numpy: this one, the venv's."""
    subprocess.run(["bash", generator, out, *names], check=True, capture_output=True,
                   env={**os.environ, "PYTHON": sys.executable})


def bench_manifest():
    import json
    folder = bench_models_dir()
    return folder, {m["name"]: m for m in json.load(open(os.path.join(folder, "manifest.json")))["models"]}


def bench_feeds(model_entry, seed=0, shape_override=None):
    """Inputs as MANIFEST.md describes: images N(0,1), token ids uniform, token types 0/1, the
    attention mask ones except its last 8 positions (so the padding path is exercised)."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for spec in model_entry["inputs"]:
        shape = list(shape_override.get(spec["name"], spec["bench_shape"]) if shape_override else spec["bench_shape"])
        fill = spec["fill"]
        if fill == "normal":
            feeds[spec["name"]] = rng.standard_normal(shape, dtype=np.float32)
        elif fill == "ones":
            mask = np.ones(shape, np.int64)
            if shape[-1] > 16:
                mask[..., -8:] = 0
            feeds[spec["name"]] = mask
        else:
            _, low, high = fill
            feeds[spec["name"]] = rng.integers(low, high, size=shape, dtype=np.int64)
    return feeds
