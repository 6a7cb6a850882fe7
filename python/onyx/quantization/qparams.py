"""Scale and zero point from a real range, and quantization of constant arrays with them."""
import numpy as np

from onyx.quantization.quant_types import np_dtype, qtype_range


class QParams:
    """Quantization parameters of one tensor: scale (float32), zero point (int8/uint8), both
    scalars, or 1-D along `axis` for a per-channel weight."""

    def __init__(self, scale, zero_point, tensor_type, axis=None, qmin=None, qmax=None):
        self.scale = np.asarray(scale, dtype=np.float32)
        self.zero_point = np.asarray(zero_point, dtype=np_dtype(tensor_type))
        self.tensor_type = tensor_type
        self.axis = axis
        self.qmin, self.qmax = qmin, qmax

    def same_as(self, other):
        return (other is not None and self.tensor_type == other.tensor_type and self.axis == other.axis
                and np.array_equal(self.scale, other.scale) and np.array_equal(self.zero_point, other.zero_point))

    def __repr__(self):
        return f"QParams(scale={self.scale}, zero_point={self.zero_point}, axis={self.axis})"


def compute_qparams(rmin, rmax, tensor_type, symmetric=False, reduce_range=False, min_real_range=None, axis=None):
    """r = scale * (q - zero_point) covering [rmin, rmax] widened to hold 0 (so zero is exact);
    symmetric makes the range [-absmax, absmax] with the zero point in the middle of the type."""
    qmin, qmax = qtype_range(tensor_type, reduce_range, symmetric)
    rmin = np.minimum(np.asarray(rmin, dtype=np.float64), 0.0)
    rmax = np.maximum(np.asarray(rmax, dtype=np.float64), 0.0)
    if min_real_range is not None:
        rmax = np.maximum(rmax, rmin + float(min_real_range))
    if symmetric:
        absmax = np.maximum(-rmin, rmax)
        rmin, rmax = -absmax, absmax
    scale = (rmax - rmin) / (qmax - qmin)
    degenerate = ~(scale >= np.finfo(np.float32).tiny)  # also NaN
    safe = np.where(degenerate, 1.0, scale)
    if symmetric:
        zero_point = np.full(scale.shape, np.round((qmin + qmax) / 2.0))
    else:
        zero_point = np.round(qmin - rmin / safe)
    zero_point = np.where(degenerate, 0.0 if qmin <= 0 else qmin, np.clip(zero_point, qmin, qmax))
    return QParams(safe.astype(np.float32), zero_point, tensor_type, axis=axis, qmin=qmin, qmax=qmax)


def quantize_array(x, qp):
    """QuantizeLinear on a constant: saturate(round_half_even(x / scale) + zero_point)."""
    x = np.asarray(x, dtype=np.float32)
    scale, zp = qp.scale, qp.zero_point.astype(np.float32)
    if qp.axis is not None:
        shape = [1] * x.ndim
        shape[qp.axis] = -1
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    info = np.iinfo(np_dtype(qp.tensor_type))
    lo = info.min if qp.qmin is None else qp.qmin
    hi = info.max if qp.qmax is None else qp.qmax
    return np.clip(np.rint(x / scale) + zp, lo, hi).astype(np_dtype(qp.tensor_type))


def weight_qparams(w, tensor_type, symmetric, reduce_range, axis=None):
    """Parameters for a constant weight: from its own min and max, per tensor or per channel."""
    w = np.asarray(w, dtype=np.float32)
    if axis is None:
        lo, hi = (float(w.min()), float(w.max())) if w.size else (0.0, 0.0)
        return compute_qparams(lo, hi, tensor_type, symmetric, reduce_range)
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    return compute_qparams(moved.min(axis=1), moved.max(axis=1), tensor_type, symmetric, reduce_range, axis=axis)


def quantize_bias(bias, input_scale, weight_scale):
    """An int32 bias in units of input_scale * weight_scale (per channel when the weight is)."""
    scale = (np.float64(input_scale) * np.asarray(weight_scale, dtype=np.float64)).astype(np.float32)
    scale = np.where(scale == 0, np.float32(1.0), scale)
    bias = np.asarray(bias, dtype=np.float64)
    q = np.rint(bias / scale.astype(np.float64))
    info = np.iinfo(np.int32)
    return np.clip(q, info.min, info.max).astype(np.int32), scale
