"""DFT, STFT and the cosine windows against numpy (numpy.fft in double precision) on what the
ONNX conformance data leaves out: radix-2 and Bluestein lengths, dft_length padding and
truncation, complex input, onesided and inverse transforms, axis forms of opsets 17 and 20,
STFT framing options, window flavours and output types."""
import os
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx

ELEM = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16,
        np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}


def run_node(op, inputs, attrs, opset, constants=None):
    """Runs one node; `inputs` maps names (None for an omitted input) to arrays."""
    constants = constants or {}
    node_inputs, graph_inputs, feeds, inits = [], [], {}, []
    for name, arr in inputs:
        if arr is None:
            node_inputs.append("")
            continue
        node_inputs.append(name)
        if name in constants:
            inits.append(numpy_helper.from_array(arr, name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(name, ELEM[arr.dtype.type], arr.shape))
            feeds[name] = arr
    node = helper.make_node(op, node_inputs, ["y"], **attrs)
    graph = helper.make_graph([node], "g", graph_inputs, [helper.make_tensor_value_info("y", 0, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        onnx.save(model, path)
        return run_onyx(path, feeds)[0]


def to_complex(y):
    return y[..., 0] + 1j * y[..., 1]


def dft(x, opset, axis, dft_length=None, inverse=0, onesided=0):
    attrs = {"inverse": inverse, "onesided": onesided}
    inputs = [("x", x), ("dft_length", None if dft_length is None else np.array(dft_length, np.int64))]
    if opset >= 20:
        inputs.append(("axis", np.array(axis, np.int64)))
    else:
        attrs["axis"] = axis
    while inputs[-1][1] is None:
        inputs.pop()
    return run_node("DFT", inputs, attrs, opset)


def signal(shape, complex_input, rng):
    x = rng.standard_normal(shape + (2 if complex_input else 1,))
    return x, (x[..., 0] + 1j * x[..., 1]) if complex_input else x[..., 0]


@pytest.mark.parametrize("n", [1, 2, 7, 12, 16, 97, 100, 128, 243])
@pytest.mark.parametrize("complex_input", [False, True])
@pytest.mark.parametrize("opset", [17, 20])
def test_forward_lengths(n, complex_input, opset):
    rng = np.random.default_rng(n * 7 + complex_input)
    x, xc = signal((2, n), complex_input, rng)
    got = dft(x.astype(np.float32), opset, 1)
    np.testing.assert_allclose(to_complex(got), np.fft.fft(xc, axis=1), rtol=1e-4, atol=1e-4 * np.sqrt(n))


@pytest.mark.parametrize("length", [5, 16, 24, 40])
@pytest.mark.parametrize("onesided", [0, 1])
def test_dft_length_pads_or_truncates(length, onesided):
    rng = np.random.default_rng(length)
    x, xc = signal((3, 20, 2), False, rng)
    got = dft(x, 20, -2, dft_length=length, onesided=onesided)
    want = np.fft.fft(xc, n=length, axis=2)
    if onesided:
        want = want[..., : length // 2 + 1]
    assert got.dtype == np.float64
    np.testing.assert_allclose(to_complex(got), want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("opset,axis", [(17, 1), (17, 2), (17, -2), (20, 1), (20, -3), (20, 2)])
def test_axes(opset, axis):
    rng = np.random.default_rng(abs(axis) + opset)
    x, xc = signal((2, 6, 9), True, rng)
    got = dft(x.astype(np.float32), opset, axis)
    np.testing.assert_allclose(to_complex(got), np.fft.fft(xc, axis=axis % 4), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [8, 11, 30])
def test_inverse(n):
    rng = np.random.default_rng(n)
    x, xc = signal((2, n), True, rng)
    got = dft(x, 20, 1, inverse=1)
    np.testing.assert_allclose(to_complex(got), np.fft.ifft(xc, axis=1), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_in,length", [(6, None), (6, 10), (6, 11), (9, 8), (4, 12)])
def test_inverse_onesided_is_irfft(n_in, length):
    rng = np.random.default_rng(n_in * 13 + (length or 0))
    x, xc = signal((3, n_in), True, rng)
    got = dft(x, 20, 1, dft_length=length, inverse=1, onesided=1)
    want = np.fft.irfft(xc, n=length, axis=1)
    assert got.shape == want.shape + (1,)
    np.testing.assert_allclose(got[..., 0], want, rtol=1e-9, atol=1e-12)


def test_float16_rounds_once():
    rng = np.random.default_rng(3)
    x, xc = signal((2, 12), False, rng)
    got = dft(x.astype(np.float16), 20, 1)
    assert got.dtype == np.float16
    want = np.fft.fft(x.astype(np.float16).astype(np.float64)[..., 0], axis=1)
    np.testing.assert_allclose(to_complex(got.astype(np.float64)), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("with_window", [False, True])
@pytest.mark.parametrize("complex_input", [False, True])
def test_stft(onesided, with_window, complex_input):
    if complex_input and onesided:
        pytest.skip("onesided output needs a real signal")
    rng = np.random.default_rng(onesided * 4 + with_window * 2 + complex_input)
    length, frame, step = 50, 12, 5
    x, xc = signal((2, length), complex_input, rng)
    window = np.hanning(frame) if with_window else np.ones(frame)
    inputs = [("signal", x.astype(np.float32)), ("frame_step", np.array(step, np.int64)),
              ("window", window.astype(np.float32) if with_window else None),
              ("frame_length", np.array(frame, np.int64))]
    got = run_node("STFT", inputs, {"onesided": onesided}, 17)
    frames = 1 + (length - frame) // step
    want = np.stack([np.fft.fft(xc[:, f * step: f * step + frame] * window, axis=1) for f in range(frames)], axis=1)
    if onesided:
        want = want[..., : frame // 2 + 1]
    np.testing.assert_allclose(to_complex(got), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op,a", [("HannWindow", (0.5, 0.5, 0.0)), ("HammingWindow", (25 / 46, 21 / 46, 0.0)),
                                  ("BlackmanWindow", (0.42, 0.5, 0.08))])
@pytest.mark.parametrize("periodic", [0, 1])
@pytest.mark.parametrize("size", [2, 7, 64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_windows(op, a, periodic, size, dtype):
    got = run_node(op, [("size", np.array(size, np.int64))],
                   {"periodic": periodic, "output_datatype": ELEM[dtype]}, 17)
    n = np.arange(size)
    denom = size if periodic else size - 1
    want = a[0] - a[1] * np.cos(2 * np.pi * n / denom) + a[2] * np.cos(4 * np.pi * n / denom)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_bad_inputs_fail_cleanly():
    x = np.zeros((1, 4, 3), np.float32)  # last dimension must be 1 or 2
    with pytest.raises(RuntimeError, match="DFT"):
        dft(x, 20, 1)
    with pytest.raises(RuntimeError, match="axis"):
        dft(np.zeros((1, 4, 1), np.float32), 20, 2)
    with pytest.raises(RuntimeError, match="frame"):
        run_node("STFT", [("signal", np.zeros((1, 4, 1), np.float32)), ("frame_step", np.array(1, np.int64)),
                          ("window", None), ("frame_length", np.array(9, np.int64))], {}, 17)
