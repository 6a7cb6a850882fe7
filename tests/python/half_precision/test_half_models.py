"""float16 conversions of bench models (onnxruntime.transformers.float16, with float32 and with
float16 inputs and outputs): Onyx computes their float16 bodies in float32 (HalfBodyToFloat),
so its outputs must agree with ONNX Runtime's on the float16 model within float16 rounding, and
be at least as close as ONNX Runtime's to the float32 model's outputs."""
import os

import numpy as np
import pytest

import onyx_harness
from onyx_harness import bench_feeds, bench_manifest, run_onyx, run_ort, save_model

# Small models only (CI has two cores): a CNN and a transformer.
MODELS = ["mobilenetv2", "bert_tiny"]


def _half_model(name, keep_io_types):
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16
    folder, manifest = bench_manifest()
    path = os.path.join(folder, manifest[name]["file"])
    half = convert_float_to_float16(onnx.load(path), keep_io_types=keep_io_types)
    return path, save_model(half, f"{name}_fp16_{'io32' if keep_io_types else 'io16'}.onnx"), manifest[name]


def _relative_errors(got, ref):
    got, ref = got.astype(np.float32), ref.astype(np.float32)
    scale = max(float(np.abs(ref).max()), 1e-6)
    return float(np.abs(got - ref).max()) / scale, float(np.abs(got - ref).mean()) / scale


@pytest.mark.parametrize("keep_io_types", [True, False], ids=["float32_io", "float16_io"])
@pytest.mark.parametrize("name", MODELS)
def test_float16_model_matches_onnx_runtime_and_float32(name, keep_io_types):
    onyx_harness.require_ort()
    float_path, half_path, entry = _half_model(name, keep_io_types)
    feeds = bench_feeds(entry)
    half_feeds = {k: (v.astype(np.float16) if v.dtype == np.float32 and not keep_io_types else v)
                  for k, v in feeds.items()}
    got = run_onyx(half_path, half_feeds, threads=2)
    ort_half = run_ort(half_path, half_feeds, threads=2)
    ort_float = run_ort(float_path, feeds, threads=2)
    assert len(got) == len(ort_half) == len(ort_float)
    for g, h, f in zip(got, ort_half, ort_float):
        assert g.dtype == h.dtype, (g.dtype, h.dtype)  # float16 outputs stay float16
        assert g.shape == h.shape == f.shape
        max_vs_ort, _ = _relative_errors(g, h)
        assert max_vs_ort <= 3e-2, f"Onyx vs ONNX Runtime on the float16 model: {max_vs_ort:.3g} of the range"
        onyx_max, onyx_mean = _relative_errors(g, f)
        ort_max, ort_mean = _relative_errors(h, f)
        assert onyx_max <= 3e-2, f"Onyx's float16 model vs the float32 model: {onyx_max:.3g} of the range"
        # Computing the body in float32 rounds less than ONNX Runtime's float16 values between nodes.
        assert onyx_mean <= 1.1 * ort_mean, (onyx_mean, ort_mean)
