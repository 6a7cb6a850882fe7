"""The benchmark architectures (../shared/models/bench, generated into the build folder) give the
same outputs as ONNX Runtime 1.30 on identical inputs, at the suggested shapes and, for the
small models, at a second shape of their symbolic dims."""
import os

import numpy as np

import pytest

from onyx_harness import assert_outputs_close, bench_feeds, bench_manifest, run_onnx_and_ort

DEFAULT_SET = ["resnet50", "mobilenetv2", "efficientnet_b0", "bert_base", "bert_tiny", "gpt2_small", "vit_tiny",
               "yolo_like"]
SECOND_SHAPES = {
    "bert_tiny": {"input_ids": [2, 64], "attention_mask": [2, 64], "token_type_ids": [2, 64]},
    "mobilenetv2": {"input": [2, 3, 224, 224]},
}


# yolo_like's 60 stacked convolutions with random weights amplify float32 rounding so much that
# ONNX Runtime's own optimized and unoptimized outputs break the element-wise rule (rtol 1e-3,
# atol 1e-4) on dozens of elements (max abs diff 3.5e-4 at outputs up to 22). For it, the check
# is against the output's range: max |Onyx - ORT| <= 1e-4 * max |ORT| (Onyx measured 3e-5), and
# the element-wise rule must hold for 99.9% of elements.
RANGE_RELATIVE = {"yolo_like"}


@pytest.mark.parametrize("name", DEFAULT_SET)
def test_bench_model_matches_onnx_runtime(name):
    folder, manifest = bench_manifest()
    entry = manifest[name]
    inputs = bench_feeds(entry)
    expected, got = run_onnx_and_ort(os.path.join(folder, entry["file"]), inputs, threads=2)
    if name in RANGE_RELATIVE:
        for e, g in zip(expected, got):
            assert e.shape == g.shape
            assert np.max(np.abs(g - e)) <= 1e-4 * np.max(np.abs(e))
            assert np.mean(np.abs(g - e) <= 1e-4 + 1e-3 * np.abs(e)) >= 0.999
        return
    assert_outputs_close(expected, got, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", sorted(SECOND_SHAPES))
def test_bench_model_at_another_shape(name):
    folder, manifest = bench_manifest()
    entry = manifest[name]
    inputs = bench_feeds(entry, seed=1, shape_override=SECOND_SHAPES[name])
    expected, got = run_onnx_and_ort(os.path.join(folder, entry["file"]), inputs, threads=2)
    assert_outputs_close(expected, got, rtol=1e-3, atol=1e-4)
