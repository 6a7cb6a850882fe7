"""GroupQueryAttention and RotaryEmbedding (com.microsoft) vs ONNX Runtime 1.30: prompts (padded or
not, with a preallocated cache), token generation, subsequent prompts, packed QKV, rotary
(interleaved, partial), local windows, softcap, attention bias, head sinks, smooth softmax, the
QK output, float16, and rejections of malformed inputs."""
import numpy as np
import pytest

from contrib_util import compare, onyx_fails, ort_outputs, rng, run_both_fail, run_onyx_only
from onyx_harness import assert_outputs_close

F32 = np.float32


def gqa_inputs(r, B, S, N, Nkv, H, past, seqlens, total, packed=False, dtype=F32, rotary=None):
    ins = {}
    if packed:
        ins["query"] = r.standard_normal((B, S, (N + 2 * Nkv) * H)).astype(dtype)
        ins["key"] = ins["value"] = None
    else:
        ins["query"] = r.standard_normal((B, S, N * H)).astype(dtype)
        ins["key"] = r.standard_normal((B, S, Nkv * H)).astype(dtype)
        ins["value"] = r.standard_normal((B, S, Nkv * H)).astype(dtype)
    if past is None:
        ins["past_key"] = ins["past_value"] = None
    else:
        ins["past_key"] = r.standard_normal((B, Nkv, past, H)).astype(dtype)
        ins["past_value"] = r.standard_normal((B, Nkv, past, H)).astype(dtype)
    ins["seqlens_k"] = np.array(seqlens, np.int32)
    ins["total_sequence_length"] = np.array([total], np.int32)
    if rotary:
        ins["cos_cache"] = r.standard_normal((max(32, total), rotary)).astype(dtype)
        ins["sin_cache"] = r.standard_normal((max(32, total), rotary)).astype(dtype)
    return ins


OUTS = ["output", "present_key", "present_value"]

CASES = {
    # name: (B, S, N, Nkv, H, past, seqlens, total, kwargs)
    "prompt": (2, 4, 4, 2, 16, None, [3, 3], 4, {}),
    "prompt_right_padded": (2, 4, 4, 2, 16, None, [3, 1], 4, {}),
    "prompt_into_larger_cache": (2, 4, 4, 2, 16, 8, [3, 2], 4, {}),
    "token": (2, 1, 4, 2, 16, 5, [5, 3], 6, {}),
    "token_larger_cache": (2, 1, 8, 2, 16, 8, [5, 3], 6, {}),
    "subsequent_prompt": (1, 3, 4, 2, 16, 4, [6], 7, {}),
    "mha_equal_heads": (2, 3, 2, 2, 8, None, [2, 2], 3, {}),
    "packed_prompt": (2, 4, 4, 2, 16, None, [3, 3], 4, {"packed": True}),
    "packed_token": (2, 1, 4, 1, 16, 5, [5, 3], 6, {"packed": True}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_gqa_shapes(case):
    B, S, N, Nkv, H, past, seqlens, total, kw = CASES[case]
    r = rng(1)
    compare("GroupQueryAttention", gqa_inputs(r, B, S, N, Nkv, H, past, seqlens, total, **kw), OUTS, num_heads=N,
            kv_num_heads=Nkv)


@pytest.mark.parametrize("case,interleaved", [("prompt", 0), ("prompt_right_padded", 1), ("token", 0), ("token", 1),
                                              ("packed_token", 0), ("subsequent_prompt", 1)])
def test_gqa_rotary(case, interleaved):
    B, S, N, Nkv, H, past, seqlens, total, kw = CASES[case]
    r = rng(2)
    compare("GroupQueryAttention", gqa_inputs(r, B, S, N, Nkv, H, past, seqlens, total, rotary=H // 2, **kw), OUTS,
            num_heads=N, kv_num_heads=Nkv, do_rotary=1, rotary_interleaved=interleaved)


def test_gqa_partial_rotary_and_position_ids():
    r = rng(3)
    ins = gqa_inputs(r, 2, 1, 4, 2, 32, 5, [5, 3], 6, rotary=8)
    ins["position_ids"] = r.integers(0, 30, (2, 1)).astype(np.int64)
    compare("GroupQueryAttention", ins, OUTS, num_heads=4, kv_num_heads=2, do_rotary=1)


@pytest.mark.parametrize("case,window", [("prompt", 2), ("token_larger_cache", 3), ("subsequent_prompt", 2)])
def test_gqa_local_window(case, window):
    B, S, N, Nkv, H, past, seqlens, total, kw = CASES[case]
    r = rng(4)
    compare("GroupQueryAttention", gqa_inputs(r, B, S, N, Nkv, H, past, seqlens, total, **kw), OUTS, num_heads=N,
            kv_num_heads=Nkv, local_window_size=window)


@pytest.mark.parametrize("attrs", [{"softcap": 1.5}, {"scale": 0.1}, {"smooth_softmax": 1},
                                   {"softcap": 0.7, "scale": 0.3, "local_window_size": 3}])
def test_gqa_score_attributes(attrs):
    r = rng(5)
    compare("GroupQueryAttention", gqa_inputs(r, 2, 6, 4, 2, 16, None, [5, 4], 6), OUTS, num_heads=4, kv_num_heads=2,
            **attrs)


@pytest.mark.parametrize("bias_shape", [(2, 4, 4, 4), (1, 1, 4, 4), (2, 1, 4, 4)])
def test_gqa_attention_bias(bias_shape):
    r = rng(6)
    ins = gqa_inputs(r, 2, 4, 4, 2, 16, None, [3, 3], 4)
    ins.update({"cos_cache": None, "sin_cache": None, "position_ids": None,
                "attention_bias": (r.standard_normal(bias_shape) * 2).astype(F32)})
    compare("GroupQueryAttention", ins, OUTS, num_heads=4, kv_num_heads=2, softcap=2.0)


def test_gqa_attention_bias_token_and_head_sink():
    r = rng(7)
    ins = gqa_inputs(r, 2, 1, 4, 2, 16, 5, [5, 3], 6)
    ins.update({"cos_cache": None, "sin_cache": None, "position_ids": None,
                "attention_bias": r.standard_normal((2, 1, 1, 6)).astype(F32),
                "head_sink": r.standard_normal((4,)).astype(F32)})
    compare("GroupQueryAttention", ins, OUTS, num_heads=4, kv_num_heads=2)


@pytest.mark.parametrize("mode", [1, 2])
def test_gqa_qk_output(mode):
    r = rng(8)
    seqlens_k = [3, 2]
    inputs = gqa_inputs(r, 2, 4, 4, 2, 16, None, seqlens_k, 4)
    outs = OUTS + [("output_qk", F32)]
    expected = ort_outputs("GroupQueryAttention", inputs, outs, num_heads=4, kv_num_heads=2, qk_output=mode)
    got = run_onyx_only("GroupQueryAttention", inputs, outs, num_heads=4, kv_num_heads=2, qk_output=mode)
    # ONNX Runtime leaves output_qk's rows and columns for padding tokens (past seqlens_k + 1)
    # unwritten, so they hold whatever its arena held: only real tokens are compared there.
    for qk in (expected[3], got[3]):
        for b, valid in enumerate(seqlens_k):
            qk[b, :, valid + 1:, :] = 0
            qk[b, :, :, valid + 1:] = 0
    assert_outputs_close(expected, got, names=OUTS + ["output_qk"])


@pytest.mark.parametrize("case", ["prompt_right_padded", "token"])
def test_gqa_float16(case):
    B, S, N, Nkv, H, past, seqlens, total, kw = CASES[case]
    r = rng(9)
    compare("GroupQueryAttention", gqa_inputs(r, B, S, N, Nkv, H, past, seqlens, total, dtype=np.float16, rotary=8),
            OUTS, num_heads=N, kv_num_heads=Nkv, do_rotary=1, rtol=1e-2, atol=1e-2)


def test_gqa_threads_long_prompt():
    r = rng(10)
    compare("GroupQueryAttention", gqa_inputs(r, 2, 40, 8, 2, 32, None, [39, 25], 40, rotary=16), OUTS, num_heads=8,
            kv_num_heads=2, do_rotary=1, threads=4)


def test_gqa_rejections():
    r = rng(11)
    ins = gqa_inputs(r, 2, 4, 4, 2, 16, None, [3, 3], 4)
    run_both_fail("GroupQueryAttention", ins, OUTS, num_heads=4, kv_num_heads=3)  # not a multiple
    bad = dict(ins, key=ins["key"][:, :3])
    run_both_fail("GroupQueryAttention", bad, OUTS, num_heads=4, kv_num_heads=2)
    # seqlens_k beyond total_sequence_length, or a past longer than the cache.
    onyx_fails("GroupQueryAttention", dict(ins, seqlens_k=np.array([9, 3], np.int32)), OUTS, num_heads=4,
               kv_num_heads=2, match="seqlens_k")
    tok = gqa_inputs(r, 2, 1, 4, 2, 16, 2, [5, 3], 6)  # 6 tokens cannot come from a 2-row cache plus 1
    onyx_fails("GroupQueryAttention", tok, OUTS, num_heads=4, kv_num_heads=2, match="total_sequence_length")
    tok = gqa_inputs(r, 2, 1, 4, 2, 16, 5, [5, 9], 6)
    onyx_fails("GroupQueryAttention", tok, OUTS, num_heads=4, kv_num_heads=2, match="seqlens_k")
    onyx_fails("GroupQueryAttention", ins, OUTS, num_heads=4, kv_num_heads=2, do_rotary=1, match="cos_cache")


# ---------------------------------------------------------------- RotaryEmbedding
@pytest.mark.parametrize("layout", ["bsd", "bnsh"])
@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("positions", ["scalar", "per_token"])
def test_rotary_embedding(layout, interleaved, positions):
    r = rng(20)
    B, S, N, H = 2, 5, 2, 16
    x = r.standard_normal((B, S, N * H)).astype(F32)
    if layout == "bnsh":
        x = x.reshape(B, S, N, H).transpose(0, 2, 1, 3).copy()
    pos = np.array([3], np.int64) if positions == "scalar" else r.integers(0, 20, (B, S)).astype(np.int64)
    cos, sin = (r.standard_normal((24, H // 2)).astype(F32) for _ in range(2))
    compare("RotaryEmbedding", {"x": x, "position_ids": pos, "cos": cos, "sin": sin}, ["y"], interleaved=interleaved)


@pytest.mark.parametrize("layout", ["bsd", "bnsh"])
def test_rotary_embedding_partial_dim(layout):
    r = rng(21)
    B, S, N, H, R = 2, 4, 3, 16, 8
    x = r.standard_normal((B, S, N * H)).astype(F32)
    if layout == "bnsh":
        x = x.reshape(B, S, N, H).transpose(0, 2, 1, 3).copy()
    cos, sin = (r.standard_normal((12, R // 2)).astype(F32) for _ in range(2))
    compare("RotaryEmbedding", {"x": x, "position_ids": np.array(2, np.int64), "cos": cos, "sin": sin}, ["y"],
            rotary_embedding_dim=R, num_heads=N, interleaved=1)


def test_rotary_embedding_float16():
    r = rng(22)
    x = r.standard_normal((2, 4, 32)).astype(np.float16)
    cos, sin = (r.standard_normal((10, 8)).astype(np.float16) for _ in range(2))
    compare("RotaryEmbedding", {"x": x, "position_ids": np.array([1], np.int64), "cos": cos, "sin": sin}, ["y"],
            rtol=1e-2, atol=1e-2)


def test_rotary_embedding_rejections():
    r = rng(23)
    x = r.standard_normal((2, 4, 32)).astype(F32)
    cos, sin = (r.standard_normal((10, 8)).astype(F32) for _ in range(2))
    run_both_fail("RotaryEmbedding", {"x": x, "position_ids": np.array([8], np.int64), "cos": cos, "sin": sin}, ["y"])
    run_both_fail("RotaryEmbedding", {"x": x, "position_ids": np.zeros((3, 4), np.int64), "cos": cos, "sin": sin},
                  ["y"])
    onyx_fails("RotaryEmbedding", {"x": x, "position_ids": np.array([-1], np.int64), "cos": cos, "sin": sin}, ["y"],
               match="outside")
    onyx_fails("RotaryEmbedding", {"x": x, "position_ids": np.array([0], np.int64), "cos": cos, "sin": sin}, ["y"],
               rotary_embedding_dim=8, match="num_heads")
