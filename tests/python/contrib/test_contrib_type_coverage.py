"""Every (op, float type) that ONNX Runtime 1.31's CPU provider accepts, Onyx accepts and computes
to ORT's values: the com.microsoft ops Onyx registers on CPU and the ONNX-domain ops whose float16
and bfloat16 matter to exported models, in float, double, float16 and bfloat16.

Which pairs ORT accepts was found by probe_ort_contrib_types.py (single-node models, an ORT CPU
session created and run) and stored in ort_contrib_types.json; test_table_matches_ort re-probes
ORT so the table cannot go stale. Every accepted pair is then run in ORT and Onyx on the same
inputs (bfloat16 ones fed to both as the same bits).

Tolerances, relative to each type's precision (eps: the distance from 1 to the next value):
ORT computes float16 nodes in float (its float16 kernels widen, or it wraps a float kernel in
Casts) and rounds once, as Onyx does, so the two differ by a few roundings of the output;
allowed: |got - expected| <= k * eps * (|expected| + max(1, max|expected|) / 4) with k = 4 (a few
ulps, plus room for cancellation in sums relative to the output's scale). float32 allows for
different summation orders (k = 64: ~8e-6 relative). float64 is held to the same tolerance as
float32: ORT computes several double kernels in float precision (FastGelu 2e-5, ONNX Attention
6e-6, Gelu's tanh form and GroupNormalization 1e-7 from a float64 numpy evaluation, where Onyx
is within 1e-12)."""
import json

import ml_dtypes
import numpy as np
import pytest

from onyx_harness import ORT_VERSION, run_onyx, save_model
from probe_ort_contrib_types import CASES, TABLE, TYPES, from_onyx, onyx_feed, probe, run_ort


with open(TABLE) as f:
    ACCEPTED = json.load(f)
PAIRS = [(name, dtype) for name, dtypes in ACCEPTED["accepted"].items() for dtype in dtypes]
EPS = {"float32": 2.0 ** -23, "float64": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}
ULPS = {"float32": 64, "float64": 64, "float16": 4, "bfloat16": 4}


def test_table_matches_ort():
    """The stored table is ORT 1.31.1's answer for every case, re-asked now."""
    assert ACCEPTED["onnxruntime"] == ORT_VERSION
    assert sorted(ACCEPTED["accepted"]) == sorted(CASES)
    stale = []
    for name, case in CASES.items():
        for dtype in TYPES:
            if (probe(case, dtype) is None) != (dtype in ACCEPTED["accepted"][name]):
                stale.append(f"{name}/{dtype}")
    assert not stale, f"rerun probe_ort_contrib_types.py --write: ORT's answer changed for {stale}"


def assert_close(expected, got, dtype, label):
    assert got.shape == expected.shape, f"{label}: shape {got.shape}, expected {expected.shape}"
    if expected.dtype.kind in "iub":
        np.testing.assert_array_equal(got, expected, err_msg=label)
        return
    assert got.dtype == expected.dtype, f"{label}: dtype {got.dtype}, expected {expected.dtype}"
    e, g = expected.astype(np.float64), got.astype(np.float64)
    # Outputs in float (e.g. SkipLayerNormalization's mean) keep float's tolerance.
    kind = dtype if expected.dtype == ml_dtypes.bfloat16 or expected.dtype == np.dtype(dtype) else "float32"
    k = ULPS[kind] * EPS[kind]
    scale = max(1.0, float(np.abs(e).max(initial=0.0)))
    np.testing.assert_allclose(g, e, rtol=k, atol=k * scale / 4, err_msg=f"{label} ({kind})")


@pytest.mark.parametrize("name,dtype", PAIRS, ids=[f"{n}-{t}" for n, t in PAIRS])
def test_onyx_runs_what_ort_runs(name, dtype):
    case = CASES[name]
    model, feeds, outputs = case.instance(dtype, seed=len(name))
    path = save_model(model, f"types_{name}_{dtype}.onnx")
    expected = run_ort(model, feeds)
    got = run_onyx(path, {n: onyx_feed(n, a) for n, a in feeds.items()})
    assert len(got) == len(expected), f"{len(got)} outputs, expected {len(expected)}"
    for out, e, g in zip(outputs, expected, got):
        assert_close(e, from_onyx(g, e), dtype, f"{case.op} {dtype} output {out}")


# ---------------------------------------------------------------- beyond ORT
# Pairs ORT refuses (its float type is float only, or it lacks the kernel) that Onyx refuses too,
# with a named error: double where ORT's schema has no double, and the quantized ops whose only
# float inputs are scales.
_NO_DOUBLE = ["Attention", "Attention_past", "MultiHeadAttention", "MultiHeadAttention_bias_past",
              "GroupQueryAttention", "GroupQueryAttention_past_rotary", "GroupQueryAttention_packed",
              "RotaryEmbedding", "RotaryEmbedding_interleaved_bnsh", "EmbedLayerNormalization",
              "EmbedLayerNormalization_sum", "MatMulNBits", "MatMulNBits_zero_points_bias",
              "MatMulNBits_8bit_zero_points", "MatMulNBits_float_zero_points", "MatMulIntegerToFloat",
              "DynamicQuantizeMatMul", "QuantizeLinear", "DequantizeLinear"]
_FLOAT_SCALES_ONLY = ["QGemm", "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax",
                      "QLinearConcat", "QLinearAveragePool", "QLinearGlobalAveragePool"]
ONYX_REFUSES = {**{n: {"float64"} for n in _NO_DOUBLE},
                **{n: {"float64", "float16", "bfloat16"} for n in _FLOAT_SCALES_ONLY}}
BEYOND = [(name, dtype) for name, dtypes in ACCEPTED["accepted"].items() if "float32" in dtypes
          for dtype in TYPES if dtype not in dtypes]


def test_refusal_list_names_cases():
    assert set(ONYX_REFUSES) <= set(CASES)
    for name, dtypes in ONYX_REFUSES.items():
        assert not dtypes & set(ACCEPTED["accepted"][name]), f"{name}: ORT accepts {dtypes}, Onyx must too"


@pytest.mark.parametrize("name,dtype", BEYOND, ids=[f"{n}-{t}" for n, t in BEYOND])
def test_onyx_beyond_ort(name, dtype):
    """Where ORT refuses a type it runs in float, Onyx either refuses it as listed above, or
    matches ORT's float result on the same values (rounded to the type once)."""
    case = CASES[name]
    seed = len(name)
    model, feeds, outputs = case.instance(dtype, seed=seed)
    path = save_model(model, f"beyond_{name}_{dtype}.onnx")
    onyx_feeds = {n: onyx_feed(n, a) for n, a in feeds.items()}
    if dtype in ONYX_REFUSES.get(name, ()):
        with pytest.raises(RuntimeError, match=case.op):
            run_onyx(path, onyx_feeds)
        return
    ref_model, ref_feeds, _ = case.instance("float32", seed=seed, rounded_through=dtype)
    expected = run_ort(ref_model, ref_feeds)
    got = run_onyx(path, onyx_feeds)
    assert len(got) == len(expected), f"{len(got)} outputs, expected {len(expected)}"
    for out, e, g in zip(outputs, expected, got):
        if dtype == "bfloat16" and g.dtype == np.uint16:  # onyx writes bfloat16 as its bits
            g = g.view(ml_dtypes.bfloat16)
        if e.dtype == np.float32 and g.dtype != np.float32:  # ORT's float, rounded once to Onyx's type
            e = e.astype(g.dtype)
        assert_close(e, g, dtype, f"{case.op} {dtype} (ORT refuses; vs its float) output {out}")
