"""com.microsoft Attention and MultiHeadAttention vs ONNX Runtime 1.30 (CPU). Configurations
ORT's CPU kernels reject (4-D Megatron masks, packed QKV/KV, Attention without bias) are checked
against a numpy reference or against ORT on the equivalent unpacked inputs."""
import numpy as np
import pytest

from contrib_util import Const, compare, onyx_fails, rng, run_both_fail, run_onyx_only
from onyx_harness import run_ort

F32 = np.float32


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def ref_attention(q, k, v, scale, add=None):
    """q (B, N, S, H), k/v (B, N, T, H); add broadcast to (B, N, S, T)."""
    s = np.einsum("bnsh,bnth->bnst", q.astype(np.float64), k.astype(np.float64)) * scale
    if add is not None:
        s = s + add
    p = softmax(s)
    o = np.einsum("bnst,bnth->bnsh", p, v.astype(np.float64))
    b, n, sq, h = o.shape
    return o.transpose(0, 2, 1, 3).reshape(b, sq, n * h).astype(F32)


def attention_inputs(r, B=2, S=5, Din=16, N=2, qkv=(16, 16, 16)):
    x = r.standard_normal((B, S, Din)).astype(F32)
    w = (r.standard_normal((Din, sum(qkv))) * 0.3).astype(F32)
    b = r.standard_normal((sum(qkv),)).astype(F32)
    return x, w, b


# ---------------------------------------------------------------- Attention
MASKS = {
    "none": lambda r, B, S: None,
    "lengths": lambda r, B, S: np.array([3, S][:B], np.int32),
    "end_start": lambda r, B, S: np.array([4, S, 1, 2][: 2 * B], np.int32),
    "key_padding_2d": lambda r, B, S: np.array([[1, 1, 0, 1, 0], [1, 1, 1, 1, 1]][:B], np.int32),
    "fully_masked_row": lambda r, B, S: np.array([[1, 1, 0, 1, 0], [0, 0, 0, 0, 0]][:B], np.int32),
    "mask_3d": lambda r, B, S: (r.random((B, S, S)) > 0.4).astype(np.int32),
    "dummy_b1": lambda r, B, S: np.ones((B, 1), np.int32),
    # 0/1 masks without a 0 mask nothing (Onyx then builds no mask)
    "all_ones_2d": lambda r, B, S: np.ones((B, S), np.int32),
    "all_ones_3d": lambda r, B, S: np.ones((B, S, S), np.int32),
}


@pytest.mark.parametrize("mask_kind", list(MASKS))
@pytest.mark.parametrize("unidirectional", [0, 1])
def test_attention_masks(mask_kind, unidirectional):
    r = rng(1)
    x, w, b = attention_inputs(r)
    inputs = {"input": x, "weights": w, "bias": b, "mask_index": MASKS[mask_kind](r, 2, 5)}
    compare("Attention", inputs, ["y"], num_heads=2, unidirectional=unidirectional)


def test_attention_mask_filter_value_and_scale():
    r = rng(2)
    x, w, b = attention_inputs(r)
    mask = np.array([[1, 1, 0, 1, 0], [0, 0, 0, 0, 0]], np.int32)
    compare("Attention", {"input": x, "weights": w, "bias": b, "mask_index": mask}, ["y"], num_heads=2,
            unidirectional=1, mask_filter_value=-2.0, scale=0.3)


@pytest.mark.parametrize("with_mask", [False, True])
def test_attention_past_present(with_mask):
    r = rng(3)
    B, S, N, P = 2, 5, 2, 3
    x, w, b = attention_inputs(r, B=B, S=S)
    past = r.standard_normal((2, B, N, P, 8)).astype(F32)
    mask = (r.random((B, P + S)) > 0.3).astype(np.int32) if with_mask else None
    compare("Attention", {"input": x, "weights": w, "bias": b, "mask_index": mask, "past": past}, ["y", "present"],
            num_heads=N, unidirectional=1)


def test_attention_present_without_past():
    r = rng(4)
    x, w, b = attention_inputs(r)
    compare("Attention", {"input": x, "weights": w, "bias": b}, ["y", "present"], num_heads=2)


def test_attention_single_token_decode():
    r = rng(5)
    B, N, P = 2, 4, 6
    x, w, b = attention_inputs(r, B=B, S=1, Din=32, qkv=(32, 32, 32))
    past = r.standard_normal((2, B, N, P, 8)).astype(F32)
    compare("Attention", {"input": x, "weights": w, "bias": b, "mask_index": np.array([7, 5], np.int32), "past": past},
            ["y", "present"], num_heads=N, unidirectional=1)


@pytest.mark.parametrize("shape", [(2, 2, 5, 5), (1, 2, 5, 5), (2, 1, 5, 5), (1, 1, 5, 5)])
def test_attention_bias_broadcast(shape):
    r = rng(6)
    x, w, b = attention_inputs(r)
    ab = r.standard_normal(shape).astype(F32)
    compare("Attention", {"input": x, "weights": w, "bias": b, "mask_index": np.array([4, 5], np.int32), "past": None,
                          "attention_bias": ab}, ["y"], num_heads=2)


def test_attention_qkv_hidden_sizes_and_constant_weights():
    r = rng(7)
    x, w, b = attention_inputs(r, Din=12, qkv=(16, 16, 8))
    compare("Attention", {"input": x, "weights": Const(w), "bias": Const(b)}, ["y"], num_heads=2,
            qkv_hidden_sizes=[16, 16, 8])


@pytest.mark.parametrize("mask_kind", ["none", "lengths", "key_padding_2d"])
@pytest.mark.parametrize("unidirectional", [0, 1])
def test_attention_constant_weights_masks(mask_kind, unidirectional):
    # Constant weights are packed at session creation, the constant bias goes to the GEMM epilogue.
    r = rng(12)
    B, S = 2, 5
    x, w, b = attention_inputs(r, B=B, S=S)
    compare("Attention", {"input": x, "weights": Const(w), "bias": Const(b), "mask_index": MASKS[mask_kind](r, B, S)},
            ["y"], num_heads=2, unidirectional=unidirectional)


def test_attention_constant_weights_fed_bias_past_and_threads():
    r = rng(13)
    B, S, P, N, H = 2, 3, 4, 2, 8
    x, w, b = attention_inputs(r, B=B, S=S)
    past = r.standard_normal((2, B, N, P, H)).astype(F32)
    compare("Attention", {"input": x, "weights": Const(w), "bias": b, "mask_index": None, "past": past},
            ["y", "present"], num_heads=N, unidirectional=1)
    x, w, b = attention_inputs(r, B=3, S=40, Din=96, N=4, qkv=(64, 64, 64))
    compare("Attention", {"input": x, "weights": Const(w), "bias": Const(b)}, ["y"], num_heads=4, threads=4)


def test_attention_constant_weights_without_bias_vs_numpy():
    r = rng(14)
    B, S, N, H = 2, 5, 2, 8
    x, w, _ = attention_inputs(r)
    got = run_onyx_only("Attention", {"input": x, "weights": Const(w)}, ["y"], num_heads=N)[0]
    qkv = x @ w
    q, k, v = (_split_heads(qkv[..., i * 16:(i + 1) * 16], B, S, N, H) for i in range(3))
    np.testing.assert_allclose(got, ref_attention(q, k, v, 1 / np.sqrt(H)), rtol=1e-3, atol=1e-4)


def test_attention_constant_weights_rejections():
    r = rng(15)
    x, w, b = attention_inputs(r)
    onyx_fails("Attention", {"input": x[:, :, :12], "weights": Const(w), "bias": Const(b)}, ["y"], num_heads=2,
               match="dim 0 equal to the input's hidden size")
    onyx_fails("Attention", {"input": x, "weights": Const(w), "bias": Const(b[:40])}, ["y"], num_heads=2,
               match="input 'bias' must have shape (48)")


def test_attention_threads():
    r = rng(8)
    x, w, b = attention_inputs(r, B=3, S=17, Din=64, N=4, qkv=(64, 64, 64))
    compare("Attention", {"input": x, "weights": w, "bias": b, "mask_index": np.array([17, 9, 1], np.int32)}, ["y"],
            num_heads=4, threads=4)


@pytest.mark.parametrize("threads", [2, 4])
@pytest.mark.parametrize("mask_kind", ["none", "mask_3d", "lengths"])
@pytest.mark.parametrize("unidirectional", [0, 1])
def test_attention_splits_query_rows_across_threads(threads, mask_kind, unidirectional):
    # 3 heads do not divide among 2 or 4 threads: the query rows go in blocks too (ViT-tiny).
    r = rng(9)
    B, S, N = 1, 70, 3
    x, w, b = attention_inputs(r, B=B, S=S, Din=48, N=N, qkv=(48, 48, 48))
    mask = {"none": None, "mask_3d": (r.random((B, S, S)) > 0.3).astype(np.int32),
            "lengths": np.array([61], np.int32)}[mask_kind]
    ab = r.standard_normal((B, N, S, S)).astype(F32)
    compare("Attention", {"input": x, "weights": w, "bias": b, "mask_index": mask, "past": None,
                          "attention_bias": ab}, ["y"], num_heads=N, unidirectional=unidirectional, threads=threads)


def _split_heads(t, B, S, N, H):
    return t.reshape(B, S, N, H).transpose(0, 2, 1, 3)


def test_attention_4d_megatron_mask_vs_numpy():
    # ONNX Runtime's CPU kernel rejects 4-D masks; row past + s of (B, 1, M, M) applies to query s.
    r = rng(9)
    B, S, N, H, M = 2, 5, 2, 8, 8
    x, w, b = attention_inputs(r)
    mask = (r.random((B, 1, M, M)) > 0.3).astype(np.int32)
    got = run_onyx_only("Attention", {"input": x, "weights": w, "bias": b, "mask_index": mask}, ["y"], num_heads=N)[0]
    qkv = x @ w + b
    q, k, v = (_split_heads(qkv[..., i * 16:(i + 1) * 16], B, S, N, H) for i in range(3))
    add = np.where(mask[:, :, :S, :S] == 0, -10000.0, 0.0)
    np.testing.assert_allclose(got, ref_attention(q, k, v, 1 / np.sqrt(H), add), rtol=1e-3, atol=1e-4)


def test_attention_without_bias_vs_numpy():
    # bias is optional in the schema; ONNX Runtime's CPU kernel needs it, so numpy is the reference.
    r = rng(10)
    B, S, N, H = 2, 5, 2, 8
    x, w, _ = attention_inputs(r)
    got = run_onyx_only("Attention", {"input": x, "weights": w}, ["y"], num_heads=N)[0]
    qkv = x @ w
    q, k, v = (_split_heads(qkv[..., i * 16:(i + 1) * 16], B, S, N, H) for i in range(3))
    np.testing.assert_allclose(got, ref_attention(q, k, v, 1 / np.sqrt(H)), rtol=1e-3, atol=1e-4)


def test_attention_rejections():
    r = rng(11)
    x, w, b = attention_inputs(r)
    # do_rotary: ONNX Runtime's CPU kernel refuses it, and so does Onyx.
    run_both_fail("Attention", {"input": x, "weights": w, "bias": b}, ["y"], num_heads=2, do_rotary=1)
    # Shapes that do not fit.
    run_both_fail("Attention", {"input": x, "weights": w, "bias": b[:-1]}, ["y"], num_heads=2)
    run_both_fail("Attention", {"input": x, "weights": w, "bias": b, "mask_index": np.ones((2, 3), np.int32)}, ["y"],
                  num_heads=2)
    run_both_fail("Attention", {"input": x, "weights": w, "bias": b}, ["y"], num_heads=3)
    onyx_fails("Attention", {"input": x, "weights": w, "bias": b}, ["y"], num_heads=0, match="num_heads")


# ---------------------------------------------------------------- MultiHeadAttention
def mha_inputs(r, B=2, S=4, L=6, N=2, H=8, Hv=8):
    D = N * H
    q = r.standard_normal((B, S, D)).astype(F32)
    k = r.standard_normal((B, L, D)).astype(F32)
    v = r.standard_normal((B, L, N * Hv)).astype(F32)
    bias = r.standard_normal((2 * D + N * Hv,)).astype(F32)
    return q, k, v, bias


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("mask_kind", ["none", "lengths", "2d", "3d"])
def test_mha_cross_attention_masks(with_bias, mask_kind):
    r = rng(20)
    B, S, L = 2, 4, 6
    q, k, v, bias = mha_inputs(r, B=B, S=S, L=L)
    mask = {"none": None, "lengths": np.array([3, 6], np.int32),
            "2d": (r.random((B, L)) > 0.3).astype(np.int32), "3d": (r.random((B, S, L)) > 0.3).astype(np.int32)}[mask_kind]
    compare("MultiHeadAttention", {"q": q, "k": k, "v": v, "bias": bias if with_bias else None, "mask": mask}, ["y"],
            num_heads=2)


def test_mha_attention_bias_scale_and_value_head_size():
    r = rng(21)
    q, k, v, bias = mha_inputs(r, Hv=4)
    ab = r.standard_normal((2, 2, 4, 6)).astype(F32)
    compare("MultiHeadAttention", {"q": q, "k": k, "v": v, "bias": bias, "mask": None, "attention_bias": ab}, ["y"],
            num_heads=2, scale=0.25)


@pytest.mark.parametrize("mask", [None, "total"])
def test_mha_past_present_unidirectional(mask):
    r = rng(22)
    B, S, N, H, P = 2, 4, 2, 8, 3
    q, k, v, bias = mha_inputs(r, B=B, S=S, L=S)
    pk = r.standard_normal((B, N, P, H)).astype(F32)
    pv = r.standard_normal((B, N, P, H)).astype(F32)
    m = (r.random((B, P + S)) > 0.3).astype(np.int32) if mask else None
    compare("MultiHeadAttention", {"q": q, "k": k, "v": v, "bias": bias, "mask": m, "attention_bias": None,
                                   "past_key": pk, "past_value": pv},
            ["y", "present_key", "present_value"], num_heads=N, unidirectional=1)


def test_mha_present_without_past_and_qk_output():
    r = rng(23)
    q, k, v, bias = mha_inputs(r, S=4, L=4)
    ab = r.standard_normal((1, 2, 4, 4)).astype(F32)
    compare("MultiHeadAttention", {"q": q, "k": k, "v": v, "bias": bias, "mask": np.array([3, 4], np.int32),
                                   "attention_bias": ab},
            ["y", "present_key", "present_value", ("qk", F32)], num_heads=2, unidirectional=1,
            mask_filter_value=-50.0)


def test_mha_bnsh_key_value():
    # Cross attention with cached, already transposed K/V: the K/V part of bias is not applied.
    r = rng(24)
    B, S, L, N, H = 2, 4, 6, 2, 8
    q, _, _, bias = mha_inputs(r)
    k4 = r.standard_normal((B, N, L, H)).astype(F32)
    v4 = r.standard_normal((B, N, L, H)).astype(F32)
    compare("MultiHeadAttention", {"q": q, "k": k4, "v": v4, "bias": bias}, ["y"], num_heads=N)


def _ort_unpacked(q, k, v, bias, **attrs):
    from contrib_util import feeds_of, model, save
    inputs = {"q": q, "k": k, "v": v, "bias": bias}
    path = save(model("MultiHeadAttention", inputs, ["y"], **attrs), "mha_unpacked")
    return run_ort(path, feeds_of(inputs))[0]


@pytest.mark.parametrize("with_bias", [False, True])
def test_mha_packed_qkv_vs_unpacked(with_bias):
    # ONNX Runtime's CPU kernel has no packed layouts; ORT on the unpacked tensors is the reference.
    r = rng(25)
    B, S, N, H = 2, 5, 2, 8
    qkv = r.standard_normal((B, S, N, 3, H)).astype(F32)
    bias = r.standard_normal((3 * N * H,)).astype(F32) if with_bias else None
    got = run_onyx_only("MultiHeadAttention", {"q": qkv, "k": None, "v": None, "bias": bias}, ["y"], num_heads=N)[0]
    q, k, v = (qkv[:, :, :, i, :].reshape(B, S, N * H) for i in range(3))
    np.testing.assert_allclose(got, _ort_unpacked(q, k, v, bias, num_heads=N), rtol=1e-3, atol=1e-4)


def test_mha_packed_kv_vs_unpacked():
    r = rng(26)
    B, S, L, N, H = 2, 3, 5, 2, 8
    q = r.standard_normal((B, S, N * H)).astype(F32)
    kv = r.standard_normal((B, L, N, 2, H)).astype(F32)
    bias = r.standard_normal((3 * N * H,)).astype(F32)
    got = run_onyx_only("MultiHeadAttention", {"q": q, "k": kv, "v": None, "bias": bias}, ["y"], num_heads=N)[0]
    k, v = (kv[:, :, :, i, :].reshape(B, L, N * H) for i in range(2))
    np.testing.assert_allclose(got, _ort_unpacked(q, k, v, bias, num_heads=N), rtol=1e-3, atol=1e-4)


def test_mha_threads_longer_sequence():
    r = rng(27)
    q, k, v, bias = mha_inputs(r, B=2, S=33, L=33, N=4, H=16, Hv=16)
    compare("MultiHeadAttention", {"q": q, "k": k, "v": v, "bias": bias, "mask": (r.random((2, 33)) > 0.2).astype(np.int32)},
            ["y"], num_heads=4, unidirectional=1, threads=4)


def test_mha_rejections():
    r = rng(28)
    q, k, v, bias = mha_inputs(r)
    run_both_fail("MultiHeadAttention", {"q": q, "k": k, "v": v[:, :3]}, ["y"], num_heads=2)
    run_both_fail("MultiHeadAttention", {"q": q, "k": k, "v": v}, ["y"], num_heads=3)
    run_both_fail("MultiHeadAttention", {"q": q, "k": k, "v": v, "bias": bias[:5]}, ["y"], num_heads=2)
    onyx_fails("MultiHeadAttention", {"q": q, "k": k, "v": v, "bias": None, "mask": np.ones((2, 7), np.int32)}, ["y"],
               num_heads=2, match="key_padding_mask")


def test_attention_long_causal_prompt_with_past():
    # Causal rows are processed in blocks of 32 keys; 70 rows cross several block edges.
    r = rng(29)
    B, S, N, P = 2, 70, 2, 5
    x, w, b = attention_inputs(r, B=B, S=S, Din=32, qkv=(32, 32, 32))
    past = r.standard_normal((2, B, N, P, 16)).astype(F32)
    mask = (r.random((B, P + S)) > 0.2).astype(np.int32)
    compare("Attention", {"input": x, "weights": w, "bias": b, "mask_index": mask, "past": past}, ["y", "present"],
            num_heads=N, unidirectional=1, threads=2)
