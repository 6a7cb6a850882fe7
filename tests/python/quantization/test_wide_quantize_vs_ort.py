"""QuantizeLinear / DequantizeLinear (opset 21) on int4, uint4, int16, uint16, float8e4m3fn and
float8e5m2 (int8 / uint8 alongside) against ONNX Runtime 1.31.1, bit for bit, through graphs whose
inputs and outputs are float (int4 and float8 cannot be fed to or read from ONNX Runtime's Python
API): x -> QuantizeLinear -> DequantizeLinear -> y, and int4 / 16-bit / float8 initializers (odd
element counts, int4 packed two per byte in raw_data or int32_data) -> DequantizeLinear -> y.
Per tensor, per axis (0, 1, -1) and blocked (ragged last blocks), zero points at the type's
extremes, scales 0.01..1e3, exact ties, -0.0, NaN, +-inf and values far out of range.

ONNX Runtime and ONNX's reference ignore a float8 zero point in QuantizeLinear (the spec's
formula would add it, and adding even 0 turns -0.0 into +0.0) and reject a nonzero one in
DequantizeLinear; Onyx added and subtracted it before.

Left unmatched, where ONNX Runtime contradicts the spec (Onyx gives the spec's value there, and the
tests check that instead):
- Where a quotient does not fit int32 (NaN, +-inf, |x / scale| >= 2^31), ONNX Runtime's blocked
  kernel along a non-last axis (every integer type) and its int4 kernel for an element without a
  pair partner in its scale run (an odd run's last element, every element of a per-axis run of 1)
  convert to int32 before clamping: C++ undefined behaviour, INT32_MIN on x86, plus the zero point
  with wrap-around: +inf or 1e30 give the lowest code where the zero point is >= 0, NaN or -inf
  the highest where it is negative. It depends on the element's position; ONNX says saturate.
  Onyx saturates (a NaN gives the lowest code, as ONNX Runtime's other quantize loops give it).
- float8 with saturate=0: ONNX Runtime's conversion gives +-448 for e4m3fn |x / scale| in [480, 496)
  (NaN in ONNX's Cast table: it rounds to 480, out of range) and NaN for e5m2 in [61440, 65536)
  (+-inf in the table). Onyx's Cast gives the table's values too."""
import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import onyx
from onyx_harness import require_ort

T = TensorProto
INT_RANGES = {T.INT4: (-8, 7), T.UINT4: (0, 15), T.INT16: (-32768, 32767), T.UINT16: (0, 65535),
              T.INT8: (-128, 127), T.UINT8: (0, 255)}
F8_MAX = {T.FLOAT8E4M3FN: 448.0, T.FLOAT8E5M2: 57344.0}
# Where ONNX Runtime's non-saturating float8 conversion leaves ONNX's table: |q| range, the table's value.
F8_ORT_UNSAT_BUG = {T.FLOAT8E4M3FN: (480.0, 496.0, np.nan), T.FLOAT8E5M2: (61440.0, 65536.0, np.inf)}
NAMES = {T.INT4: "int4", T.UINT4: "uint4", T.INT16: "int16", T.UINT16: "uint16", T.INT8: "int8", T.UINT8: "uint8",
         T.FLOAT8E4M3FN: "e4m3fn", T.FLOAT8E5M2: "e5m2"}
READABLE = (T.INT16, T.UINT16, T.INT8, T.UINT8)  # codes numpy holds: the Q output is compared too
SCALES = [0.01, 0.0625, 0.37, 1.0, 3.3, 256.0, 1000.0]
SPECIALS = [-0.0, 0.0, np.nan, np.inf, -np.inf, 1e30, -1e30, 3.4e38, -3.4e38, 1e-40, -1e-40]
SHAPE = (3, 5, 7)
MODES = {"tensor": (None, None), "axis0": (0, None), "axis1": (1, None), "axis-1": (-1, None),
         "block0_2": (0, 2), "block1_2": (1, 2), "block1_3": (1, 3), "block-1_3": (-1, 3), "block-1_4": (-1, 4),
         "block2_7": (2, 7), "block0_1": (0, 1)}
LEVELS = ["ORT_DISABLE_ALL", "ORT_ENABLE_ALL"]


def _tensor(name, dtype, values, shape, raw=False):
    """An initializer; int4 codes packed two per byte (low nibble first) in raw_data or int32_data."""
    values = np.asarray(values).ravel()
    if raw and dtype in (T.INT4, T.UINT4):
        nibbles = np.append(values.astype(np.int64) & 0xF, [0] * (values.size % 2)).astype(np.uint8)
        return helper.make_tensor(name, dtype, shape, (nibbles[0::2] | nibbles[1::2] << 4).tobytes(), raw=True)
    return helper.make_tensor(name, dtype, shape, values.tolist())


def _model(nodes, inputs, outputs, inits):
    m = helper.make_model(helper.make_graph(nodes, "wide_q", inputs, outputs, inits),
                          opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m.SerializeToString()


def _layout_attrs(axis, block):
    return {k: v for k, v in (("axis", axis), ("block_size", block)) if v is not None}


def _qdq(dtype, shape, scale, zp, axis, block, output_dtype=False, saturate=None, raw=False):
    inits = [_tensor("s", T.FLOAT, scale, list(scale.shape))]
    if zp is not None:
        inits.append(_tensor("z", dtype, zp, list(scale.shape), raw))
    params = ["s"] + (["z"] if zp is not None else [])
    q_attrs = dict(_layout_attrs(axis, block))
    if output_dtype:
        q_attrs["output_dtype"] = dtype
    if saturate is not None:
        q_attrs["saturate"] = saturate
    nodes = [helper.make_node("QuantizeLinear", ["x"] + params, ["q"], **q_attrs),
             helper.make_node("DequantizeLinear", ["q"] + params, ["y"], **_layout_attrs(axis, block))]
    outputs = [helper.make_tensor_value_info("y", T.FLOAT, list(shape))]
    if dtype in READABLE:
        outputs.append(helper.make_tensor_value_info("q", dtype, list(shape)))
    return _model(nodes, [helper.make_tensor_value_info("x", T.FLOAT, list(shape))], outputs, inits)


def _dq_const(dtype, codes, scale, zp, axis, block, raw=False):
    inits = [_tensor("c", dtype, codes, list(codes.shape), raw), _tensor("s", T.FLOAT, scale, list(scale.shape))]
    if zp is not None:
        inits.append(_tensor("z", dtype, zp, list(scale.shape), raw))
    node = helper.make_node("DequantizeLinear", ["c", "s"] + (["z"] if zp is not None else []), ["y"],
                            **_layout_attrs(axis, block))
    return _model([node], [], [helper.make_tensor_value_info("y", T.FLOAT, list(codes.shape))], inits)


def _run(module, model, feeds, level="ORT_ENABLE_ALL", threads=1):
    options = module.SessionOptions()
    options.graph_optimization_level = getattr(module.GraphOptimizationLevel, level)
    options.intra_op_num_threads = threads
    return module.InferenceSession(model, options, providers=["CPUExecutionProvider"]).run(None, feeds)


def _param_shape(shape, axis, block):
    if axis is None:
        return ()
    if block is None:
        return (shape[axis],)
    p = list(shape)
    p[axis] = -(-shape[axis] // block)
    return tuple(p)


def _expand(p, shape, axis, block):
    """The parameter of every element of x."""
    if axis is None:
        return np.broadcast_to(np.asarray(p).reshape(()), shape)
    axis %= len(shape)
    if block is None:
        view = [1] * len(shape)
        view[axis] = shape[axis]
        return np.broadcast_to(np.asarray(p).reshape(view), shape)
    return np.repeat(p, block, axis=axis).take(range(shape[axis]), axis=axis)


def _inputs(dtype, s, z, rng):
    """Around every code: exact ties, near ties, steps out of range; then +-1e6 and SPECIALS."""
    n = s.size
    s, z = s.ravel().astype(np.float64), z.ravel().astype(np.float64)
    if dtype in INT_RANGES:
        lo, hi = INT_RANGES[dtype]
        k = rng.integers(lo - 3, hi + 4, n) - z
        x = ((k + rng.choice([0.0, 0.5, -0.5, 0.25, 0.49999, 0.50001, 1.5, -1.5], n)) * s).astype(np.float32)
    else:
        top = F8_MAX[dtype]
        x = (np.exp(rng.uniform(np.log(1e-6), np.log(top * 4), n)) * rng.choice([-1, 1], n) * s).astype(np.float32)
        m = n // 4  # exact float8 ties: a half between neighbours in every binade
        mid = (rng.integers(8, 16, m) + 0.5) * 2.0 ** rng.integers(-8, 9, m) * rng.choice([-1, 1], m)
        x[:m] = (mid * s[:m]).astype(np.float32)
    far = rng.choice(n, 6, replace=False)
    x[far] = (rng.choice([-1, 1], 6) * 1e6).astype(np.float32)
    x[rng.choice(n, len(SPECIALS), replace=False)] = np.array(SPECIALS, np.float32)
    return x


def _spec_codes(dtype, x, s, z, saturate=1):
    """(ONNX's codes, where ONNX Runtime may leave them): integer codes saturated (NaN: the lowest)
    and the quotients that do not fit int32; float8 (saturate=0) the Cast table's values and the
    ranges where ONNX Runtime's conversion gives others."""
    with np.errstate(over="ignore", invalid="ignore"):
        q = (x.astype(np.float32) / s.astype(np.float32)).astype(np.float32)
    if dtype in INT_RANGES:
        lo, hi = INT_RANGES[dtype]
        r = np.rint(q.astype(np.float64))
        with np.errstate(invalid="ignore"):  # from 2^31 - 2^16 on, r + zp may wrap in int32
            wide = np.isnan(r) | (np.abs(r) >= 2.0 ** 31 - 2.0 ** 16)
        codes = np.where(np.isnan(r), lo, np.clip(np.nan_to_num(r) + z, lo, hi))
        return codes, wide
    if saturate:
        return q, np.zeros(q.shape, bool)
    low, high, value = F8_ORT_UNSAT_BUG[dtype]
    with np.errstate(invalid="ignore"):
        off = (np.abs(q) >= low) & (np.abs(q) < high)
    return np.copysign(np.float32(value), q), off


def _check(got, expected, exempt=None, spec=None):
    """Bit for bit where ONNX Runtime is defined; where `exempt`, the spec's values `spec`."""
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype and g.shape == e.shape
        ok = g.view(np.uint32) == e.view(np.uint32) if g.dtype == np.float32 else g == e
        if exempt is not None:
            want = spec[i].astype(g.dtype)
            same = (g == want) | (np.isnan(g) & np.isnan(want)) if g.dtype.kind == "f" else g == want
            assert same[exempt].all(), f"output {i}: {g[exempt & ~same][:6]}, ONNX says {want[exempt & ~same][:6]}"
            ok |= exempt
        bad = np.flatnonzero(~ok)
        assert bad.size == 0, f"output {i}: {bad.size} differ, at {bad[:6]}: {g.ravel()[bad[:6]]} {e.ravel()[bad[:6]]}"


def _compare_qdq(dtype, x, scale, zp, axis, block, model, saturate=1):
    s = _expand(scale, x.shape, axis, block)
    z = _expand(zp if zp is not None else np.zeros(scale.shape), x.shape, axis, block)
    codes, exempt = _spec_codes(dtype, x, s, z, saturate)
    if dtype in INT_RANGES:
        spec = [((codes - z).astype(np.float32) * s.astype(np.float32)).astype(np.float32), codes]
    else:
        spec = [codes * s.astype(np.float32)]
    for level in LEVELS:
        _check(_run(onyx, model, {"x": x}, level), _run(onnxruntime, model, {"x": x}, level), exempt, spec)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("dtype", list(INT_RANGES), ids=lambda d: NAMES[d])
def test_integer_quantize_dequantize_matches_ort(dtype, mode):
    require_ort()
    axis, block = MODES[mode]
    lo, hi = INT_RANGES[dtype]
    pshape = _param_shape(SHAPE, axis, block)
    rng = np.random.default_rng([dtype, len(mode), sum(map(ord, mode))])
    extremes = [lo, hi, lo, hi, max(lo, 0), (lo + hi) // 2 + 1]
    zps = [np.full(pshape, lo), np.full(pshape, hi), rng.choice(extremes, pshape), rng.choice(extremes, pshape), None]
    for trial, zp in enumerate(zps):
        scale = rng.choice(SCALES, pshape).astype(np.float32)
        z = zp if zp is not None else np.zeros(pshape, np.int64)
        x = _inputs(dtype, _expand(scale, SHAPE, axis, block), _expand(z, SHAPE, axis, block), rng).reshape(SHAPE)
        model = _qdq(dtype, SHAPE, scale, zp, axis, block, output_dtype=zp is None or trial == 2, raw=trial % 2 == 1)
        _compare_qdq(dtype, x, scale, zp, axis, block, model)


@pytest.mark.parametrize("saturate", [0, 1])
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("dtype", list(F8_MAX), ids=lambda d: NAMES[d])
def test_float8_quantize_dequantize_matches_ort(dtype, mode, saturate):
    require_ort()
    axis, block = MODES[mode]
    pshape = _param_shape(SHAPE, axis, block)
    rng = np.random.default_rng([dtype, saturate, sum(map(ord, mode))])
    for zp in (np.zeros(pshape), None):
        scale = rng.choice(SCALES, pshape).astype(np.float32)
        zeros = _expand(np.zeros(pshape), SHAPE, axis, block)
        x = _inputs(dtype, _expand(scale, SHAPE, axis, block), zeros, rng).reshape(SHAPE)
        model = _qdq(dtype, SHAPE, scale, zp, axis, block, output_dtype=zp is None, saturate=saturate)
        _compare_qdq(dtype, x, scale, zp, axis, block, model, saturate)


def _dq_modes(shape):
    modes = [(None, None)] + [(a, None) for a in range(-1, len(shape))]
    return modes + [(a, b) for a in range(-1, len(shape)) for b in (2, 3) if shape[a] > 1]


@pytest.mark.parametrize("shape", [(7,), (3, 5), (3, 5, 3)], ids=str)
@pytest.mark.parametrize("dtype", list(INT_RANGES) + list(F8_MAX), ids=lambda d: NAMES[d])
def test_dequantize_constants_match_ort(dtype, shape):
    """Odd element counts, so int4's last byte holds one code; every code of the type's range ends
    up in some case, the extremes in all of them."""
    require_ort()
    rng = np.random.default_rng([dtype, len(shape)])
    n = int(np.prod(shape))
    for axis, block in _dq_modes(shape):
        pshape = _param_shape(shape, axis, block)
        for trial in range(3):
            scale = rng.choice(SCALES + [1e-3, 5e-5], pshape).astype(np.float32)
            if dtype in INT_RANGES:
                lo, hi = INT_RANGES[dtype]
                codes = rng.integers(lo, hi + 1, n)
                codes[:2] = [lo, hi]
                zp = rng.choice([lo, hi, max(lo, 0)], pshape) if trial < 2 else None
            else:
                top = F8_MAX[dtype]
                codes = (rng.standard_normal(n) * 10).astype(np.float32)
                codes[:4] = [top, -top, np.nan, -0.0]
                if dtype == T.FLOAT8E5M2:
                    codes[4:6] = [np.inf, -np.inf]
                zp = np.zeros(pshape) if trial < 2 else None
            model = _dq_const(dtype, codes.reshape(shape), scale, zp, axis, block, raw=trial == 1)
            for level in LEVELS:
                _check(_run(onyx, model, {}, level), _run(onnxruntime, model, {}, level))


@pytest.mark.parametrize("dtype", list(F8_MAX), ids=lambda d: NAMES[d])
def test_float8_zero_point_is_ignored_when_quantizing_and_must_be_zero_when_dequantizing(dtype):
    """ONNX Runtime and ONNX's reference: QuantizeLinear ignores it (so -0.0 stays -0.0; Onyx added it
    before), DequantizeLinear rejects a nonzero one (Onyx subtracted it)."""
    require_ort()
    x = np.array([-0.0, 0.0, 1.0, -3.0, np.nan, 300.0], np.float32)
    for zp in (0.0, 1.0, -2.0):
        inits = [_tensor("s", T.FLOAT, [0.5], []), _tensor("z", dtype, [zp], [])]
        model = _model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                        helper.make_node("DequantizeLinear", ["q", "s"], ["y"])],
                       [helper.make_tensor_value_info("x", T.FLOAT, [6])],
                       [helper.make_tensor_value_info("y", T.FLOAT, [6])], inits)
        expected = _run(onnxruntime, model, {"x": x})
        assert np.signbit(expected[0][0])  # -0.0 kept
        _check(_run(onyx, model, {"x": x}), expected)
    inits = [_tensor("c", dtype, [1.0, -0.0, 2.0], [3]), _tensor("s", T.FLOAT, [2.0], []),
             _tensor("z", dtype, [1.0], [])]
    model = _model([helper.make_node("DequantizeLinear", ["c", "s", "z"], ["y"])], [],
                   [helper.make_tensor_value_info("y", T.FLOAT, [3])], inits)
    for module in (onnxruntime, onyx):
        with pytest.raises(Exception, match="zero point"):
            _run(module, model, {})


@pytest.mark.parametrize("dtype", list(INT_RANGES), ids=lambda d: NAMES[d])
def test_exact_ties_round_half_to_even(dtype):
    """x / scale = k + 0.5 exactly in float (power-of-two scales), per tensor, per axis and blocked."""
    require_ort()
    lo, hi = INT_RANGES[dtype]
    rng = np.random.default_rng(dtype)
    for axis, block in [(None, None), (1, None), (0, 2), (-1, 3)]:
        pshape = _param_shape(SHAPE, axis, block)
        scale = rng.choice([0.0625, 0.5, 1.0, 4.0, 256.0], pshape).astype(np.float32)
        zp = rng.choice([lo, hi, max(lo, 0)], pshape)
        s, z = _expand(scale, SHAPE, axis, block), _expand(zp, SHAPE, axis, block)
        k = rng.integers(lo - 2, hi + 2, SHAPE) - z
        x = ((k + 0.5) * s).astype(np.float32)
        assert np.array_equal(x / s, k + 0.5)  # every quotient a tie
        model = _qdq(dtype, SHAPE, scale, zp, axis, block)
        expected = _run(onnxruntime, model, {"x": x})
        even = np.clip(np.where(k % 2 == 0, k, k + 1) + z, lo, hi)  # k + 0.5 rounds to the even of k, k + 1
        np.testing.assert_array_equal((expected[0] / s).round() + z, even)
        _check(_run(onyx, model, {"x": x}), expected)


@pytest.mark.parametrize("saturate", [0, 1])
@pytest.mark.parametrize("dtype", list(F8_MAX), ids=lambda d: NAMES[d])
def test_float8_conversion_of_every_exponent_and_sign(dtype, saturate):
    """Every float32 high half (sign, exponent, 7 mantissa bits) with low halves on and off the ties,
    scale 1: every value ONNX Runtime converts as ONNX's Cast table says matches it bit for bit."""
    require_ort()
    low_halves = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1234, 0xC000, 0x4000], np.uint32)
    x = ((np.arange(65536, dtype=np.uint32) << 16)[:, None] | low_halves).ravel().view(np.float32)
    model = _qdq(dtype, x.shape, np.ones((), np.float32), None, None, None, output_dtype=True, saturate=saturate)
    expected = _run(onnxruntime, model, {"x": x})
    codes, exempt = _spec_codes(dtype, x, np.ones_like(x), np.zeros_like(x), saturate)
    if not saturate:  # the ranges where ONNX Runtime leaves the table, pinned so a fix shows up
        _, _, value = F8_ORT_UNSAT_BUG[dtype]
        wrong = expected[0][exempt]
        assert exempt.sum() > 0 and (np.isnan(wrong).all() if np.isinf(value) else (np.abs(wrong) == 448).all())
    _check(_run(onyx, model, {"x": x}), expected, exempt, [codes])


@pytest.mark.parametrize("dtype,mode", [(T.INT4, "axis-1"), (T.UINT4, "axis-1"), (T.INT4, "block0_2"),
                                        (T.INT8, "block0_2"), (T.INT16, "block0_2"), (T.UINT16, "block0_2")],
                         ids=lambda v: NAMES.get(v, v))
def test_quotients_outside_int32_saturate_as_onnx_says(dtype, mode):
    """Where ONNX Runtime converts a quotient to int32 before clamping (an int4 per-axis run of one
    element; blocked along a non-last axis), +inf gives its lowest code with a zero point >= 0, -inf
    its highest with a negative one. Onyx saturates; ONNX Runtime's value is pinned so a fix shows up."""
    require_ort()
    axis, block = MODES[mode]
    lo, hi = INT_RANGES[dtype]
    x = np.repeat(np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.0 ** 31, 1.0], np.float32), 4).reshape(7, 4)
    for zp_value in sorted({lo, 0, hi}):
        pshape = _param_shape(x.shape, axis, block)
        scale, zp = np.ones(pshape, np.float32), np.full(pshape, zp_value)
        model = _qdq(dtype, x.shape, scale, zp, axis, block)
        expected = _run(onnxruntime, model, {"x": x})[0]
        row, code = (1, lo) if zp_value >= 0 else (2, hi)
        assert (expected[row] == code - zp_value).all()  # the wrong end of the range
        _compare_qdq(dtype, x, scale, zp, axis, block, model)
        got = _run(onyx, model, {"x": x})[0]
        spec = np.clip(np.array([lo, hi, lo, hi, lo, hi, 1 + zp_value]), lo, hi) - zp_value
        np.testing.assert_array_equal(got, np.repeat(spec, 4).reshape(7, 4).astype(np.float32))


@pytest.mark.parametrize("mode", ["tensor", "axis1", "block-1_4", "block1_2"])
@pytest.mark.parametrize("dtype", [T.INT4, T.UINT4, T.INT16], ids=lambda d: NAMES[d])
def test_large_tensor_on_two_threads(dtype, mode):
    """Packed int4 outputs split between threads (no two steps share a byte); no special values,
    which ONNX Runtime's int4 kernel would treat by their position."""
    require_ort()
    axis, block = MODES[mode]
    shape = (5, 33, 41)
    lo, hi = INT_RANGES[dtype]
    rng = np.random.default_rng(dtype)
    pshape = _param_shape(shape, axis, block)
    scale = rng.choice(SCALES, pshape).astype(np.float32)
    zp = rng.choice([lo, hi, max(lo, 0)], pshape)
    s, z = _expand(scale, shape, axis, block), _expand(zp, shape, axis, block)
    x = ((rng.integers(lo - 3, hi + 4, shape) - z + rng.choice([0.0, 0.5, 0.3], shape)) * s).astype(np.float32)
    model = _qdq(dtype, shape, scale, zp, axis, block)
    _check(_run(onyx, model, {"x": x}, threads=2), _run(onnxruntime, model, {"x": x}, threads=2))
