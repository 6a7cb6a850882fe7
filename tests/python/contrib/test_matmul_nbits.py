"""MatMulNBits vs ONNX Runtime 1.30: 2/4/8-bit weights, block sizes, K not a multiple of the block,
packed and float zero points, g_idx, bias, float16, accuracy_level 4 (int8 activations), batched
A and threads. g_idx with packed zero points is checked against numpy: ONNX Runtime 1.30 ignores
the zero points in that combination."""
import numpy as np
import pytest

from contrib_util import Const, compare, onyx_fails, rng, run_onyx_only

F32 = np.float32


def pack_bits(values, bits):
    """values (..., n) of `bits`-bit integers -> bytes, low bits first."""
    per = 8 // bits
    v = values.reshape(*values.shape[:-1], values.shape[-1] // per, per).astype(np.uint8)
    out = np.zeros(v.shape[:-1], np.uint8)
    for i in range(per):
        out |= (v[..., i] << (i * bits)).astype(np.uint8)
    return out


def nbits_case(r, M, K, N, bits=4, block=32, zp=None, bias=False, dtype=F32, g_idx=None, a_shape=None):
    kb = (K + block - 1) // block
    q = r.integers(0, 2 ** bits, (N, kb, block))
    scales = (r.random((N, kb)) * 0.1 + 0.01).astype(dtype)
    a = r.standard_normal(a_shape or (M, K)).astype(dtype)
    ins = {"A": a, "B": Const(pack_bits(q, bits)), "scales": Const(scales)}
    zq = None
    if zp == "packed":
        zq = r.integers(0, 2 ** bits, (N, kb))
        row = (kb * bits + 7) // 8
        z = np.zeros((N, row), np.uint8)
        for j in range(kb):
            z[:, (j * bits) // 8] |= (zq[:, j] << ((j * bits) % 8)).astype(np.uint8)
        ins["zero_points"] = Const(z)
    elif zp == "float":
        zq = (r.random((N, kb)) * 2 ** bits).astype(dtype)
        ins["zero_points"] = Const(zq)
    else:
        ins["zero_points"] = None
    ins["g_idx"] = Const(g_idx) if g_idx is not None else None
    ins["bias"] = Const(r.standard_normal((N,)).astype(dtype)) if bias else None
    return ins, q, zq, scales


CASES = {
    "4bit": dict(M=3, K=64, N=16),
    "4bit_k_not_multiple": dict(M=3, K=72, N=16),
    "4bit_packed_zp": dict(M=3, K=64, N=16, zp="packed"),
    "4bit_packed_zp_odd_blocks": dict(M=3, K=96, N=16, zp="packed"),
    "4bit_float_zp_bias": dict(M=3, K=64, N=16, zp="float", bias=True),
    "4bit_block16": dict(M=2, K=48, N=10, block=16, zp="packed"),
    "4bit_block128_wide": dict(M=5, K=256, N=70, block=128, zp="packed", bias=True),
    "8bit": dict(M=3, K=64, N=16, bits=8),
    "8bit_zp": dict(M=3, K=80, N=16, bits=8, zp="packed"),
    "2bit": dict(M=3, K=64, N=16, bits=2),
    "2bit_zp": dict(M=3, K=64, N=24, bits=2, zp="packed"),
    "batched_a": dict(M=0, K=64, N=16, zp="packed", a_shape=(2, 3, 64)),
    "single_row": dict(M=1, K=128, N=33, zp="packed"),
    # The SIMD decode kernel (4 bits, blocks of 32+, up to 8 rows): K slices, partial last block.
    "decode_8_rows_k_slices": dict(M=8, K=2048, N=24, block=32, zp="packed", bias=True),
    "decode_1_row_partial_block": dict(M=1, K=1000, N=40, block=64, zp="float", bias=True),
    "decode_6_rows_block256": dict(M=6, K=1300, N=9, block=256, zp="packed"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_matmul_nbits(case):
    kw = dict(CASES[case])
    r = rng(1)
    K, N, bits, block = kw["K"], kw["N"], kw.get("bits", 4), kw.get("block", 32)
    ins = nbits_case(r, **kw)[0]
    compare("MatMulNBits", ins, ["y"], K=K, N=N, bits=bits, block_size=block)


@pytest.mark.parametrize("zp", [None, "float"])
def test_matmul_nbits_g_idx(zp):
    r = rng(2)
    g = r.integers(0, 2, (64,)).astype(np.int32)  # act-order: any k may use any block's parameters
    ins = nbits_case(r, 3, 64, 16, zp=zp, g_idx=g)[0]
    compare("MatMulNBits", ins, ["y"], K=64, N=16, bits=4, block_size=32)


def test_matmul_nbits_g_idx_packed_zero_points_vs_numpy():
    r = rng(3)
    K, N, block = 64, 16, 32
    g = r.integers(0, 2, (K,)).astype(np.int32)
    ins, q, zq, scales = nbits_case(r, 3, K, N, zp="packed", g_idx=g)
    got = run_onyx_only("MatMulNBits", ins, ["y"], K=K, N=N, bits=4, block_size=block)[0]
    qk = q.reshape(N, -1)[:, :K].astype(np.float64)
    w = (qk - zq[:, g]) * scales[:, g]  # (N, K)
    np.testing.assert_allclose(got, ins["A"].astype(np.float64) @ w.T, rtol=1e-4, atol=1e-4)


def test_matmul_nbits_float16():
    r = rng(4)
    ins = nbits_case(r, 3, 64, 16, zp="packed", bias=True, dtype=np.float16)[0]
    compare("MatMulNBits", ins, ["y"], K=64, N=16, bits=4, block_size=32, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("bits", [4, 8])
def test_matmul_nbits_accuracy_level_4(bits):
    # ONNX Runtime quantizes A to int8 per block; the result differs from the float path by ~1e-1.
    r = rng(5)
    ins = nbits_case(r, 4, 128, 32, bits=bits, zp="packed")[0]
    compare("MatMulNBits", ins, ["y"], K=128, N=32, bits=bits, block_size=32, accuracy_level=4)
    compare("MatMulNBits", ins, ["y"], K=128, N=32, bits=bits, block_size=32, accuracy_level=1)


def test_matmul_nbits_threads_llm_like():
    r = rng(6)
    ins = nbits_case(r, 7, 512, 300, block=64, zp="packed", bias=True)[0]
    compare("MatMulNBits", ins, ["y"], K=512, N=300, bits=4, block_size=64, threads=4)


def test_matmul_nbits_rejections():
    r = rng(7)
    ins = nbits_case(r, 3, 64, 16)[0]
    onyx_fails("MatMulNBits", ins, ["y"], K=64, N=16, bits=3, block_size=32, match="bits")
    onyx_fails("MatMulNBits", ins, ["y"], K=64, N=16, bits=4, block_size=24, match="block_size")
    onyx_fails("MatMulNBits", ins, ["y"], K=64, N=17, bits=4, block_size=32, match="B must be")
    onyx_fails("MatMulNBits", dict(ins, A=ins["A"][:, :60]), ["y"], K=64, N=16, bits=4, block_size=32, match="K")
    bad_g = dict(ins, g_idx=Const(np.full((64,), 5, np.int32)))
    onyx_fails("MatMulNBits", bad_g, ["y"], K=64, N=16, bits=4, block_size=32, match="g_idx")
