"""com.microsoft.QLinearAdd against ONNX Runtime over every pair of codes, at many random scales and
zero points: results that land on a rounding half depend on how the constant term
zc - (ra za + rb zb) is rounded (ORT's kernel fuses its first product), and on which operand ORT
treats as its kernel's A when one input is constant along a run. Random inputs almost never hit
such a half; every code pair at 100 scale sets does (MobileNetV2 int8 flipped 1 code in 25,088)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model

RNG = np.random.default_rng(2026)
TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}


def add_model(name, qtype, a_shape, b_shape, params):
    sa, za, sb, zb, sc, zc = params
    consts = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("sa", sa), ("sb", sb), ("sc", sc))]
    consts += [numpy_helper.from_array(np.array(v, qtype), n) for n, v in (("za", za), ("zb", zb), ("zc", zc))]
    node = helper.make_node("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["c"], domain="com.microsoft")
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("a", TYPES[qtype], a_shape),
                       helper.make_tensor_value_info("b", TYPES[qtype], b_shape)],
        [helper.make_tensor_value_info("c", TYPES[qtype], None)], consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return save_model(model, f"{name}.onnx")


def random_params(qtype):
    info = np.iinfo(qtype)
    scales = np.exp(RNG.uniform(-5, 0, 3)).astype(np.float32)
    zeros = RNG.integers(info.min, info.max + 1, 3)
    return scales[0], zeros[0], scales[1], zeros[1], scales[2], zeros[2]


# (A's shape, B's shape, how the codes are laid out): both advance (every pair as two 65,536-code
# rows), A constant along each run of B (A [256, 1]), B constant along each run of A (B [256, 1]).
FORMS = {"both_advance": ((65536,), (65536,)), "a_constant_along_runs": ((256, 1), (256, 256)),
         "b_constant_along_runs": ((256, 256), (256, 1))}


@pytest.mark.parametrize("qtype", [np.uint8, np.int8])
@pytest.mark.parametrize("form", list(FORMS))
def test_every_code_pair_matches_ort(qtype, form):
    info = np.iinfo(qtype)
    codes = np.arange(info.min, info.max + 1).astype(qtype)
    a_shape, b_shape = FORMS[form]
    if form == "both_advance":
        a, b = np.repeat(codes, 256), np.tile(codes, 256)
    elif form == "a_constant_along_runs":
        a, b = codes.reshape(256, 1), np.tile(codes, (256, 1))
    else:
        a, b = np.tile(codes, (256, 1)), codes.reshape(256, 1)
    for trial in range(100):
        path = add_model(f"qladd_ties_{form}_{np.dtype(qtype).name}_{trial}", qtype, a_shape, b_shape,
                         random_params(qtype))
        (want,) = run_ort(path, {"a": a, "b": b})
        (got,) = run_onyx(path, {"a": a, "b": b})
        np.testing.assert_array_equal(got, want, err_msg=f"trial {trial}")


def _fma(x, y, z):
    """float32 fma: the float64 product of two floats is exact, so one rounding of the sum."""
    return (x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)).astype(np.float32)


def test_single_element_add_matches_ort():
    """A one-element output: ORT takes a one-element A as its scalar-A case, whose constant term
    puts B's product first. The cases are the rare ones (a few in a million) where the two orders
    of the term round to different codes, found with numpy; ORT is the reference."""
    rng = np.random.default_rng(31)
    n = 2_000_000
    sa, sb, sc = [np.exp(rng.uniform(-5, 0, n)).astype(np.float32) for _ in range(3)]
    za, zb, zc, a, b = [rng.integers(0, 256, n).astype(np.float32) for _ in range(5)]
    ra, rb = sa / sc, sb / sc
    a_first = zc - _fma(ra, za, rb * zb)
    b_first = zc - _fma(rb, zb, ra * za)
    code = lambda v: np.clip(np.rint(v), 0, 255)  # noqa: E731
    differ = np.nonzero(code(_fma(a, ra, _fma(b, rb, a_first))) != code(_fma(b, rb, _fma(a, ra, b_first))))[0]
    assert len(differ) >= 3  # the seed gives cases that tell the two orders apart
    for i in differ[:8]:
        params = (sa[i], int(za[i]), sb[i], int(zb[i]), sc[i], int(zc[i]))
        path = add_model(f"qladd_one_element_{i}", np.uint8, [1], [1], params)
        feeds = {"a": np.array([a[i]], np.uint8), "b": np.array([b[i]], np.uint8)}
        (want,) = run_ort(path, feeds)
        (got,) = run_onyx(path, feeds)
        np.testing.assert_array_equal(got, want, err_msg=f"case {i}: {params}, a={a[i]}, b={b[i]}")
