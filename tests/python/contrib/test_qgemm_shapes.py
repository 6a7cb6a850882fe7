"""com.microsoft QGemm on the int8 GEMM against ONNX Runtime, exactly: the classifier shape
(M = 1, K = 2048, N = 1000), small M, B given per call (packed per call) and constant (packed
once), uint8 and int8 B with per-column zero points, C per column and per element, uint8 /
int8 / float outputs. int8 weights stay within [-64, 64) so ONNX Runtime's u8s8 AVX2 kernels
cannot saturate."""
import numpy as np
import pytest

from contrib_util import Const, compare, rng

F32 = np.float32


@pytest.mark.parametrize("out", ["uint8", "int8", "float"])
@pytest.mark.parametrize("mkn", [(1, 2048, 1000), (1, 3, 5), (3, 100, 70), (9, 64, 33)], ids=str)
@pytest.mark.parametrize("b_const", [True, False], ids=["const_b", "fed_b"])
def test_qgemm_matches_ort(out, mkn, b_const):
    M, K, N = mkn
    r = rng(31)
    a_type = np.uint8 if out != "int8" else np.int8
    a = (r.integers(0, 256, (M, K)) if a_type == np.uint8 else r.integers(-128, 128, (M, K))).astype(a_type)
    b = r.integers(-64, 64, (N, K)).astype(np.int8)
    b_wrap = Const(b) if b_const else b
    ins = {"A": a, "a_scale": np.array(0.02, F32), "a_zero_point": np.array(117 if a_type == np.uint8 else 3, a_type),
           "B": b_wrap, "b_scale": Const((r.random(N) * 0.01 + 0.001).astype(F32)),
           "b_zero_point": Const(r.integers(-3, 4, N).astype(np.int8)),
           "C": Const(r.integers(-3000, 3000, (N,)).astype(np.int32)),
           "y_scale": np.array(0.3, F32) if out != "float" else None,
           "y_zero_point": np.array(121 if out == "uint8" else -5, np.uint8 if out == "uint8" else np.int8)
           if out != "float" else None}
    compare("QGemm", ins, ["y"] if out != "float" else [("y", F32)], stem=f"qgemm_{M}_{K}_{N}", transB=1)


@pytest.mark.parametrize("c_shape", [(4, 24), (4, 1), ()], ids=str)
def test_qgemm_uint8_b_and_c_per_element(c_shape):
    r = rng(32)
    M, K, N = 4, 40, 24
    ins = {"A": r.integers(0, 256, (K, M)).astype(np.uint8), "a_scale": np.array(0.05, F32),
           "a_zero_point": np.array(128, np.uint8), "B": r.integers(0, 256, (K, N)).astype(np.uint8),
           "b_scale": np.array(0.004, F32), "b_zero_point": np.array(131, np.uint8),
           "C": Const(r.integers(-900, 900, c_shape).astype(np.int32)), "y_scale": np.array(0.2, F32),
           "y_zero_point": np.array(100, np.uint8)}
    compare("QGemm", ins, ["y"], stem="qgemm_u8b", transA=1, alpha=0.75)
