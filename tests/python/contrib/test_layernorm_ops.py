"""SkipLayerNormalization, SkipSimplifiedLayerNormalization, SimplifiedLayerNormalization and the
pre-opset-17 LayerNormalization (ONNX Runtime's contrib forms), and EmbedLayerNormalization, vs
ONNX Runtime 1.30; types ORT's schemas refuse are checked against numpy."""
import numpy as np
import pytest

from contrib_util import Const, compare, onyx_fails, rng, run_both_fail, run_onyx_only

F32 = np.float32


def ln_inputs(r, shape=(2, 3, 16), dtype=F32):
    H = shape[-1]
    x = r.standard_normal(shape).astype(dtype)
    skip = r.standard_normal(shape).astype(dtype)
    gamma, beta, bias = (r.standard_normal((H,)).astype(dtype) for _ in range(3))
    return x, skip, gamma, beta, bias


def tol(dtype):
    return dict(rtol=1e-2, atol=1e-2) if dtype == np.float16 else dict(rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("dtype", [F32, np.float16])
@pytest.mark.parametrize("beta,bias", [(True, True), (True, False), (False, False), (False, True)])
def test_skip_layer_norm(dtype, beta, bias):
    r = rng(1)
    x, skip, g, b, bi = ln_inputs(r, dtype=dtype)
    inputs = {"x": x, "skip": skip, "gamma": g, "beta": b if beta else None, "bias": bi if bias else None}
    compare("SkipLayerNormalization", inputs, ["y", "mean", "inv_std", "sum"], epsilon=1e-5, **tol(dtype))


@pytest.mark.parametrize("skip_shape", ["same", "batch1", "2d"])
def test_skip_layer_norm_skip_broadcast(skip_shape):
    r = rng(2)
    x, skip, g, b, bi = ln_inputs(r, shape=(3, 4, 32))
    skip = {"same": skip, "batch1": skip[:1], "2d": skip[0]}[skip_shape]
    compare("SkipLayerNormalization", {"x": x, "skip": skip, "gamma": Const(g), "beta": Const(b)}, ["y", "", "", "sum"],
            epsilon=1e-12)


def test_skip_layer_norm_2d_input_and_default_epsilon():
    r = rng(3)
    x, skip, g, b, bi = ln_inputs(r, shape=(7, 24))
    compare("SkipLayerNormalization", {"x": x, "skip": skip, "gamma": g, "beta": b, "bias": bi}, ["y"])


def test_skip_layer_norm_threads_bert_size():
    r = rng(4)
    x, skip, g, b, bi = ln_inputs(r, shape=(2, 128, 768))
    compare("SkipLayerNormalization", {"x": x, "skip": skip, "gamma": g, "beta": b, "bias": bi}, ["y", "", "", "sum"],
            epsilon=1e-12, threads=4)


@pytest.mark.parametrize("dtype", [F32, np.float16])
@pytest.mark.parametrize("bias", [False, True])
def test_skip_simplified_layer_norm(dtype, bias):
    r = rng(5)
    x, skip, g, _, bi = ln_inputs(r, dtype=dtype)
    compare("SkipSimplifiedLayerNormalization", {"x": x, "skip": skip, "gamma": g, "bias": bi if bias else None},
            ["y", "mean", "inv_std", "sum"], epsilon=1e-6, **tol(dtype))


@pytest.mark.parametrize("isa", ["avx512", "avx2", "scalar"])
@pytest.mark.parametrize("width", [1, 15, 37, 192])
def test_float_rows_on_every_vector_isa(isa, width, monkeypatch):
    # float rows run on linalg's vector kernels: every ISA (an unsupported one falls back to the
    # best), widths that leave a partial vector, every optional input and output.
    monkeypatch.setenv("ONYX_VECTOR_ISA", isa)
    r = rng(20 + width)
    x, skip, g, b, bi = ln_inputs(r, shape=(2, 3, width))
    compare("SkipLayerNormalization", {"x": x, "skip": skip, "gamma": g, "beta": b, "bias": bi},
            ["y", "mean", "inv_std", "sum"], epsilon=1e-5)
    compare("SkipLayerNormalization", {"x": x, "skip": skip[0], "gamma": g}, ["y", "", "", "sum"], epsilon=1e-5)
    compare("SkipSimplifiedLayerNormalization", {"x": x, "skip": skip, "gamma": g, "bias": bi},
            ["y", "mean", "inv_std", "sum"], epsilon=1e-6)
    compare("LayerNormalization", {"x": x, "scale": g, "b": b}, ["y", "mean", "inv_std"], domain="", onnx_opset=16,
            epsilon=1e-5)
    compare("SimplifiedLayerNormalization", {"x": x, "scale": g}, ["y", "inv_std"], domain="", epsilon=1e-5)


def test_skip_layer_norm_double_vs_numpy():
    # ONNX Runtime's schema refuses double here; numpy is the reference.
    r = rng(6)
    x, skip, g, b, bi = ln_inputs(r, dtype=np.float64)
    y, s = run_onyx_only("SkipLayerNormalization", {"x": x, "skip": skip, "gamma": g, "beta": b, "bias": bi},
                         ["y", "", "", "sum"], epsilon=1e-5)
    t = x + skip + bi
    ref = (t - t.mean(-1, keepdims=True)) / np.sqrt(t.var(-1, keepdims=True) + 1e-5) * g + b
    np.testing.assert_allclose(y, ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s, t, rtol=1e-12)


def test_skip_layer_norm_rejections():
    r = rng(7)
    x, skip, g, b, bi = ln_inputs(r)
    run_both_fail("SkipLayerNormalization", {"x": x, "skip": skip[:, :2], "gamma": g}, ["y"])
    run_both_fail("SkipLayerNormalization", {"x": x, "skip": skip, "gamma": g[:5]}, ["y"])
    run_both_fail("SkipLayerNormalization", {"x": x, "skip": skip, "gamma": g, "beta": b[:3]}, ["y"])
    onyx_fails("SkipLayerNormalization", {"x": x, "skip": skip, "gamma": g}, ["y"], epsilon=-1.0, match="epsilon")


@pytest.mark.parametrize("dtype", [F32, np.float16, np.float64])
@pytest.mark.parametrize("axis", [-1, 1])
def test_simplified_layer_norm(dtype, axis):
    r = rng(8)
    x = r.standard_normal((2, 3, 16)).astype(dtype)
    scale = r.standard_normal((16,) if axis == -1 else (3, 16)).astype(dtype)
    compare("SimplifiedLayerNormalization", {"x": x, "scale": scale}, ["y", "inv_std"], domain="", axis=axis,
            epsilon=1e-5, **tol(dtype))


@pytest.mark.parametrize("opset", [7, 16])
def test_layer_norm_contrib_opsets(opset):
    r = rng(9)
    x = r.standard_normal((2, 5, 8)).astype(F32)
    s, b = r.standard_normal((8,)).astype(F32), r.standard_normal((8,)).astype(F32)
    compare("LayerNormalization", {"x": x, "scale": s, "b": b}, ["y", "mean", "inv_std"], domain="", onnx_opset=opset,
            epsilon=1e-5)


def test_layer_norm_contrib_without_bias_vs_numpy():
    # ONNX Runtime's opset < 17 kernel fails without B; numpy is the reference.
    r = rng(9)
    x = r.standard_normal((2, 5, 8)).astype(F32)
    s = r.standard_normal((8,)).astype(F32)
    y, mean, inv = run_onyx_only("LayerNormalization", {"x": x, "scale": s}, ["y", "mean", "inv_std"], domain="",
                                 onnx_opset=16, epsilon=1e-5)
    xd = x.astype(np.float64)
    m = xd.mean(-1, keepdims=True)
    iv = 1 / np.sqrt(xd.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, (xd - m) * iv * s, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean, m, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(inv, iv, rtol=1e-4)


def test_layer_norm_contrib_axis_and_fp16():
    r = rng(10)
    x = r.standard_normal((2, 5, 8)).astype(np.float16)
    s, b = r.standard_normal((5, 8)).astype(np.float16), r.standard_normal((5, 8)).astype(np.float16)
    compare("LayerNormalization", {"x": x, "scale": s, "b": b}, ["y", "mean", "inv_std"], domain="", onnx_opset=16,
            axis=1, rtol=1e-2, atol=1e-2)


def test_com_microsoft_layer_norms_are_not_registered():
    # ONNX Runtime registers LayerNormalization and SimplifiedLayerNormalization in the ai.onnx domain only.
    r = rng(11)
    x = r.standard_normal((2, 8)).astype(F32)
    s = r.standard_normal((8,)).astype(F32)
    run_both_fail("SimplifiedLayerNormalization", {"x": x, "scale": s}, ["y"])
    run_both_fail("LayerNormalization", {"x": x, "scale": s}, ["y"])


# ---------------------------------------------------------------- EmbedLayerNormalization
def embed_inputs(r, B=2, S=7, H=16, V=50, P=10):
    ids = r.integers(0, V, (B, S)).astype(np.int32)
    seg = r.integers(0, 2, (B, S)).astype(np.int32)
    we = r.standard_normal((V, H)).astype(F32)
    pe = r.standard_normal((P, H)).astype(F32)
    se = r.standard_normal((2, H)).astype(F32)
    g, b = r.standard_normal((H,)).astype(F32), r.standard_normal((H,)).astype(F32)
    mask = np.array([[1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1]][:B], np.int32)[:, :S]
    return ids, seg, we, pe, se, g, b, mask


@pytest.mark.parametrize("segments", [True, False])
@pytest.mark.parametrize("mask", [True, False])
def test_embed_layer_norm(segments, mask):
    r = rng(12)
    ids, seg, we, pe, se, g, b, m = embed_inputs(r)
    inputs = {"ids": ids, "seg": seg if segments else None, "word": Const(we), "pos": Const(pe),
              "segment": Const(se) if segments else None, "gamma": g, "beta": b, "mask": m if mask else None}
    compare("EmbedLayerNormalization", inputs, ["y", "mask_index", "embedding_sum"], epsilon=1e-5)


@pytest.mark.parametrize("pos_batch", [1, 2])
def test_embed_layer_norm_position_ids(pos_batch):
    r = rng(13)
    ids, seg, we, pe, se, g, b, m = embed_inputs(r)
    pos = r.integers(0, 10, (pos_batch, 7)).astype(np.int32)
    inputs = {"ids": ids, "seg": seg, "word": we, "pos": pe, "segment": se, "gamma": g, "beta": b, "mask": m,
              "position_ids": pos}
    compare("EmbedLayerNormalization", inputs, ["y", "mask_index", "embedding_sum"])


def test_embed_layer_norm_bad_ids():
    r = rng(14)
    ids, seg, we, pe, se, g, b, m = embed_inputs(r)
    for bad_ids, bad_seg in [(ids.copy(), seg), (ids, seg.copy())]:
        (bad_ids if bad_ids is not ids else bad_seg)[0, 0] = 60
        onyx_fails("EmbedLayerNormalization", {"ids": bad_ids, "seg": bad_seg, "word": we, "pos": pe, "segment": se,
                                               "gamma": g, "beta": b}, ["y", "mask_index"], match="out of range")
    long_ids = r.integers(0, 50, (2, 12)).astype(np.int32)  # 12 positions, 10 position embeddings
    onyx_fails("EmbedLayerNormalization", {"ids": long_ids, "seg": None, "word": we, "pos": pe, "segment": None,
                                           "gamma": g, "beta": b}, ["y", "mask_index"], match="out of range")
