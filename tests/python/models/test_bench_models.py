"""The benchmark architectures (../shared/models/bench, generated into the build folder) give the
same outputs as ONNX Runtime 1.30 on identical inputs, at the suggested shapes and, for the
small models, at a second shape of their symbolic dims."""
import os

import pytest

from onyx_harness import assert_outputs_close, bench_feeds, bench_manifest, run_onnx_and_ort

DEFAULT_SET = ["resnet50", "mobilenetv2", "efficientnet_b0", "bert_base", "bert_tiny", "gpt2_small", "vit_tiny",
               "yolo_like"]
SECOND_SHAPES = {
    "bert_tiny": {"input_ids": [2, 64], "attention_mask": [2, 64], "token_type_ids": [2, 64]},
    "mobilenetv2": {"input": [2, 3, 160, 160]},
}


@pytest.mark.parametrize("name", DEFAULT_SET)
def test_bench_model_matches_onnx_runtime(name):
    folder, manifest = bench_manifest()
    entry = manifest[name]
    inputs = bench_feeds(entry)
    expected, got = run_onnx_and_ort(os.path.join(folder, entry["file"]), inputs, threads=2)
    assert_outputs_close(expected, got, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", sorted(SECOND_SHAPES))
def test_bench_model_at_another_shape(name):
    folder, manifest = bench_manifest()
    entry = manifest[name]
    inputs = bench_feeds(entry, seed=1, shape_override=SECOND_SHAPES[name])
    expected, got = run_onnx_and_ort(os.path.join(folder, entry["file"]), inputs, threads=2)
    assert_outputs_close(expected, got, rtol=1e-3, atol=1e-4)
