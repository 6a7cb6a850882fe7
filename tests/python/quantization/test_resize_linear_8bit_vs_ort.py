"""Linear Resize / Upsample on uint8 and int8 must give ONNX Runtime 1.31.1's codes exactly. ORT
has three 8-bit linear paths with their own rounding (float weights truncated for NCHW / 2-D and
for 3-D / 5-D, 1/1024 fixed point for NHWC scales [1, h, w, 1]), float coordinates, and copies an
input whose shape the resize keeps; each model below holds many random cases (shapes, scales or
sizes, every coordinate mode, up- and downsampling, roi and extrapolation), one Resize each."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model

MODES = ["half_pixel", "asymmetric", "pytorch_half_pixel", "align_corners", "tf_crop_and_resize",
         "half_pixel_symmetric"]
FACTORS = [0.34, 0.5, 0.6, 0.75, 0.9, 1.0, 1.25, 1.3, 1.5, 1.7, 2.0, 2.5, 3.0]


def _random_codes(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def _compare(name, cases, opset):
    """cases: (x, attrs, roi or None, scales or None, sizes or None, axes or None) per Resize."""
    nodes, inits, inputs, outputs, feed = [], [], [], [], {}
    for i, (x, attrs, roi, scales, sizes, axes) in enumerate(cases):
        elem = TensorProto.UINT8 if x.dtype == np.uint8 else TensorProto.INT8
        ins = [f"x{i}", "", "", ""]
        if roi is not None or opset < 13:  # Resize-11 needs roi and scales, empty when unused
            ins[1] = f"roi{i}"
            inits.append(numpy_helper.from_array(np.array(roi if roi is not None else [], np.float32), ins[1]))
        if scales is not None or opset < 13:
            ins[2] = f"scales{i}"
            inits.append(numpy_helper.from_array(np.array(scales if scales is not None else [], np.float32), ins[2]))
        else:
            ins[3] = f"sizes{i}"
            inits.append(numpy_helper.from_array(np.array(sizes, np.int64), ins[3]))
        while ins[-1] == "":
            ins.pop()
        if axes is not None:
            attrs = dict(attrs, axes=axes)
        nodes.append(helper.make_node("Resize", ins, [f"y{i}"], mode="linear", **attrs))
        inputs.append(helper.make_tensor_value_info(f"x{i}", elem, list(x.shape)))
        outputs.append(helper.make_tensor_value_info(f"y{i}", elem, None))
        feed[f"x{i}"] = x
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), f"{name}.onnx")
    expected = run_ort(path, feed)
    for threads in (1, 2):
        got = run_onyx(path, feed, threads=threads)
        for i, (g, e) in enumerate(zip(got, expected)):
            x, attrs = cases[i][0], cases[i][1]
            assert g.shape == e.shape, (i, x.shape, attrs, cases[i][3], g.shape, e.shape)
            bad = np.argwhere(g != e)
            assert bad.size == 0, (i, x.dtype, x.shape, attrs, cases[i][2:], bad[:4].tolist(), g[g != e][:4], e[g != e][:4])


def _case(rng, rank, resized, opset, dtype=None, use_sizes=False):
    """A random case on `rank` axes resizing the axes in `resized`."""
    dtype = dtype or (np.uint8 if rng.integers(2) else np.int8)
    shape = [int(rng.integers(1, 4)) for _ in range(rank)]
    for d in resized:
        shape[d] = int(rng.integers(1, 10))
    modes = MODES if opset >= 19 else MODES[:-1]
    mode = modes[int(rng.integers(len(modes)))]
    attrs = {"coordinate_transformation_mode": mode}
    roi = None
    if mode == "tf_crop_and_resize":
        start = [0.0] * rank
        end = [1.0] * rank
        for d in resized:
            start[d], end[d] = (float(v) for v in rng.uniform(-0.3, 1.3, 2))
        roi = start + end
        attrs["extrapolation_value"] = float(rng.choice([0.0, 7.6, 100.0, -3.0 if dtype == np.int8 else 250.0]))
    scales = [1.0] * rank
    for d in resized:
        scales[d] = float(rng.choice(FACTORS))
    x = _random_codes(rng, dtype, shape)
    if use_sizes:
        sizes = [int(max(1, round(shape[d] * scales[d] + rng.integers(-1, 2)))) if d in resized else shape[d]
                 for d in range(rank)]
        return x, attrs, roi, None, sizes, None
    return x, attrs, roi, scales, None, None


@pytest.mark.parametrize("opset", [11, 13, 19])
def test_nchw_planes(opset):
    rng = np.random.default_rng(opset)
    sizes_ok = opset >= 13  # ORT 1.31 refuses Resize-11 with sizes and an empty scales
    cases = [_case(rng, 4, (2, 3), opset, use_sizes=sizes_ok and i % 4 == 3) for i in range(40)]
    cases += [_case(rng, 2, (0, 1), opset, use_sizes=sizes_ok and i % 4 == 3) for i in range(20)]
    _compare(f"resize8_planes_{opset}", cases, opset)


@pytest.mark.parametrize("opset", [13, 19])
def test_nhwc_fixed_point(opset):
    # Scales [1, h, w, 1] with h != 1: ORT's integer path (what a channels-last region's Resize runs).
    rng = np.random.default_rng(100 + opset)
    cases = []
    while len(cases) < 50:
        case = _case(rng, 4, (1, 2), opset, use_sizes=len(cases) % 5 == 4)
        cases.append(case)
    cases.append((_random_codes(rng, np.uint8, (1, 6, 6, 16)), {}, None, [1, 2, 2, 1], None, None))
    cases.append((_random_codes(rng, np.int8, (2, 5, 7, 24)), {"coordinate_transformation_mode": "asymmetric"}, None,
                  [1, 2, 2, 1], None, None))
    _compare(f"resize8_nhwc_{opset}", cases, opset)


def test_volumes():
    rng = np.random.default_rng(7)
    cases = [_case(rng, 3, (0, 1, 2), 19) for _ in range(25)]
    cases += [_case(rng, 5, (2, 3, 4), 19, use_sizes=i % 3 == 2) for i in range(20)]
    _compare("resize8_volumes", cases, 19)


def test_axes_and_unchanged_shapes():
    rng = np.random.default_rng(11)
    cases = []
    for i in range(20):  # opset 18's axes: scales / sizes of the resized axes only
        x, attrs, roi, scales, sizes, _ = _case(rng, 4, (2, 3), 19, use_sizes=i % 2 == 1)
        if roi is not None:
            roi = roi[2:4] + roi[6:8]
        cases.append((x, attrs, roi, scales[2:] if scales else None, sizes[2:] if sizes else None, [2, 3]))
    # A scale that keeps the size (3 * 1.3 -> 3): ORT copies the input.
    cases.append((_random_codes(rng, np.uint8, (1, 2, 3, 5)), {}, None, [1, 1, 1.3, 1.1], None, None))
    cases.append((_random_codes(rng, np.int8, (1, 3, 4, 2)), {}, None, [1, 1.3, 1.2, 1], None, None))
    _compare("resize8_axes", cases, 19)


@pytest.mark.parametrize("op,opset", [("Upsample", 9), ("Resize", 10)])
def test_upsample_and_resize10(op, opset):
    rng = np.random.default_rng(opset)
    nodes, inits, inputs, outputs, feed = [], [], [], [], {}
    for i, (shape, scales) in enumerate([((1, 2, 5, 7), [1, 1, 2, 3]), ((1, 4, 3, 8), [1, 1.5, 2.5, 1]),
                                         ((3, 6), [2.0, 1.5]), ((2, 3, 4), [1.0, 2.0, 1.5])]):
        dtype = np.uint8 if i % 2 == 0 else np.int8
        elem = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), f"s{i}"))
        nodes.append(helper.make_node(op, [f"x{i}", f"s{i}"], [f"y{i}"], mode="linear"))
        inputs.append(helper.make_tensor_value_info(f"x{i}", elem, list(shape)))
        outputs.append(helper.make_tensor_value_info(f"y{i}", elem, None))
        feed[f"x{i}"] = _random_codes(rng, dtype, shape)
    graph = helper.make_graph(nodes, f"resize8_{op}", inputs, outputs, inits)
    path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), f"resize8_{op}.onnx")
    expected = run_ort(path, feed)
    got = run_onyx(path, feed)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and np.array_equal(g, e)

