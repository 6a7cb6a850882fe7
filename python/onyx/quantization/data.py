"""Calibration data from a folder, for `onyx quantize --calibration-data DIR`.

Three layouts (docs/quantization.md):
  DIR/test_data_set_*/input_*.pb   ONNX's test-data layout: one feed per set, TensorProto files
                                   (matched to inputs by the proto's name, else by the file's index)
  DIR/<input>.npy                  one array per input; samples along axis 0 (an array of the
                                   input's rank + 1 holds one sample per row; one of the input's
                                   rank is cut into batches of the input's fixed batch size, else 1)
  DIR/<sample>/<input>.npy         one folder per feed, one array per input
An input name with characters other than letters, digits, '.', '-' and '_' may be written with
'_' in their place; `input_<k>.npy` names the k-th input."""
import glob
import os
import re

import numpy as np

from onyx.quantization._onnx import onnx_module
from onyx.quantization.quant_types import CalibrationDataReader


def model_inputs(model):
    """[(name, dims)] of the graph inputs that are not initializers; dims hold ints or None."""
    inits = {i.name for i in model.graph.initializer}
    out = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
        out.append((vi.name, dims))
    return out


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _npy_for(folder, k, name):
    for candidate in (name, _safe(name), f"input_{k}"):
        path = os.path.join(folder, candidate + ".npy")
        if os.path.isfile(path):
            return path
    return None


def read_folder(folder, model, max_samples=None):
    """The list of feeds the folder holds for the model."""
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"calibration data folder {folder!r} does not exist")
    inputs = model_inputs(model)
    names = [n for n, _ in inputs]
    sets = sorted(glob.glob(os.path.join(folder, "test_data_set_*")), key=_natural)
    if sets:
        feeds = [_read_pb_set(s, names) for s in sets]
    elif all(_npy_for(folder, k, n) for k, (n, _) in enumerate(inputs)):
        feeds = _split_arrays(folder, inputs)
    else:
        subdirs = sorted((d for d in glob.glob(os.path.join(folder, "*")) if os.path.isdir(d)), key=_natural)
        feeds = []
        for d in subdirs:
            paths = [_npy_for(d, k, n) for k, (n, _) in enumerate(inputs)]
            if all(paths):
                feeds.append({n: np.load(p, allow_pickle=False) for n, p in zip(names, paths)})
        if not feeds:
            raise ValueError(f"calibration data folder {folder!r} holds none of the layouts onyx quantize reads "
                             f"(test_data_set_*/input_*.pb, <input>.npy, <sample>/<input>.npy) for the inputs {names}")
    if max_samples is not None:
        feeds = feeds[:max_samples]
    return feeds


def _natural(path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path)]


def _read_pb_set(folder, names):
    onnx = onnx_module()
    feed = {}
    files = sorted(glob.glob(os.path.join(folder, "input_*.pb")), key=_natural)
    for k, path in enumerate(files):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        name = t.name if t.name in names else (names[k] if k < len(names) else None)
        if name is None:
            raise ValueError(f"{path}: more input files than the model has inputs ({names})")
        feed[name] = onnx.numpy_helper.to_array(t)
    missing = [n for n in names if n not in feed]
    if missing:
        raise ValueError(f"{folder}: no data for inputs {missing}")
    return feed


def _split_arrays(folder, inputs):
    per_input = []
    for k, (name, dims) in enumerate(inputs):
        a = np.load(_npy_for(folder, k, name), allow_pickle=False)
        if a.ndim == len(dims) + 1:
            samples = [a[i] for i in range(a.shape[0])]
        elif a.ndim == len(dims):
            batch = dims[0] if dims and dims[0] else 1
            if a.shape[0] % batch:
                raise ValueError(f"{name}.npy: {a.shape[0]} rows do not split into batches of {batch}")
            samples = [a[i:i + batch] for i in range(0, a.shape[0], batch)]
        else:
            raise ValueError(f"{name}.npy has rank {a.ndim}; the input {name!r} has rank {len(dims)} "
                             f"(the file takes rank {len(dims)} or {len(dims) + 1})")
        per_input.append(samples)
    counts = {len(s) for s in per_input}
    if len(counts) != 1:
        raise ValueError(f"calibration arrays in {folder!r} hold different numbers of samples: "
                         f"{dict(zip([n for n, _ in inputs], [len(s) for s in per_input]))}")
    return [{inputs[k][0]: per_input[k][i] for k in range(len(inputs))} for i in range(counts.pop())]


class FolderDataReader(CalibrationDataReader):
    """A CalibrationDataReader over a folder (any layout above)."""

    def __init__(self, folder, model, max_samples=None):
        self.feeds = read_folder(folder, model, max_samples)
        self._i = 0

    def get_next(self):
        if self._i >= len(self.feeds):
            return None
        self._i += 1
        return self.feeds[self._i - 1]

    def rewind(self):
        self._i = 0
