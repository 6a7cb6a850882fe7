"""Calibration: run the float model in Onyx on the reader's feeds, with the tensors to observe
added as graph outputs of a copy of the model, and reduce what they held to one real range each.

MinMax keeps the smallest and largest value seen (or their moving averages). Entropy and
Percentile need a histogram over a range fixed in advance, so they make two passes over the
feeds: the first finds each tensor's absolute maximum, the second fills a histogram on
[0, absmax] (of |x|) or [-absmax, absmax] (of x)."""
import numpy as np

from onyx.quantization._onnx import onnx_module
from onyx.quantization.quant_types import CalibrationMethod


def read_feeds(reader):
    """Every feed of a CalibrationDataReader (or any iterable of dicts), as a list."""
    if reader is None:
        raise ValueError("quantize_static needs a calibration_data_reader")
    if hasattr(reader, "get_next"):
        feeds = []
        while True:
            feed = reader.get_next()
            if feed is None:
                break
            feeds.append(feed)
    else:
        feeds = list(reader)
    if not feeds:
        raise ValueError("the calibration data reader gave no input feed")
    for i, feed in enumerate(feeds):
        if not isinstance(feed, dict):
            raise TypeError(f"calibration feed {i} is a {type(feed).__name__}, expected a dict of input name -> array")
    return feeds


def observe(model, tensor_names, feeds, threads=0):
    """Yields, per feed, a dict tensor name -> numpy array for tensor_names (run by Onyx)."""
    import onyx
    onnx = onnx_module()
    augmented = onnx.ModelProto()
    augmented.CopyFrom(model)
    graph = augmented.graph
    present = {o.name for o in graph.output}
    for name in tensor_names:
        if name not in present:
            graph.output.append(onnx.ValueInfoProto(name=name))
            present.add(name)
    options = onyx.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    session = onyx.InferenceSession(augmented.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = list(tensor_names)
    for feed in feeds:
        values = session.run(names, feed)
        yield dict(zip(names, values))


class _Collector:
    def __init__(self, method, symmetric, moving_average, averaging_constant, num_bins, num_quantized_bins,
                 percentile):
        self.method = method
        self.symmetric = symmetric
        self.moving_average = moving_average
        self.averaging_constant = averaging_constant
        self.num_bins = num_bins
        self.num_quantized_bins = num_quantized_bins
        self.percentile = percentile
        self.lo, self.hi, self.hist = {}, {}, {}

    def minmax(self, values):
        for name, v in values.items():
            v = np.asarray(v)
            if v.size == 0:
                continue
            lo, hi = float(np.nanmin(v)), float(np.nanmax(v))
            if name not in self.lo:
                self.lo[name], self.hi[name] = lo, hi
            elif self.moving_average:
                c = self.averaging_constant
                self.lo[name] += c * (lo - self.lo[name])
                self.hi[name] += c * (hi - self.hi[name])
            else:
                self.lo[name], self.hi[name] = min(self.lo[name], lo), max(self.hi[name], hi)

    def _absolute(self):
        return self.method == CalibrationMethod.Entropy or self.symmetric

    def histogram(self, values):
        for name, v in values.items():
            if name not in self.lo:
                continue
            v = np.asarray(v, dtype=np.float32).ravel()
            v = v[np.isfinite(v)]
            absmax = max(abs(self.lo[name]), abs(self.hi[name])) or 1.0
            if self._absolute():
                h, _ = np.histogram(np.abs(v), bins=self.num_bins, range=(0.0, absmax))
            else:
                h, _ = np.histogram(v, bins=self.num_bins, range=(-absmax, absmax))
            self.hist[name] = self.hist.get(name, 0) + h

    def ranges(self):
        out = {}
        for name in self.lo:
            lo, hi = self.lo[name], self.hi[name]
            if self.method != CalibrationMethod.MinMax and name in self.hist:
                absmax = max(abs(lo), abs(hi)) or 1.0
                if self.method == CalibrationMethod.Entropy:
                    t = entropy_threshold(self.hist[name], absmax, self.num_quantized_bins)
                    lo, hi = max(lo, -t), min(hi, t)
                else:
                    lo, hi = percentile_range(self.hist[name], absmax, self.percentile, self._absolute(), lo, hi)
            if self.symmetric:
                a = max(abs(lo), abs(hi))
                lo, hi = -a, a
            out[name] = (lo, hi)
        return out


def percentile_range(hist, absmax, percentile, absolute, lo, hi):
    """The range holding `percentile` % of the values: of |x| (symmetric) or cutting half of the
    rest on each side; never wider than what was seen."""
    if not 0 <= percentile <= 100:
        raise ValueError(f"CalibPercentile must be in [0, 100], got {percentile}")
    cdf = np.cumsum(hist) / max(hist.sum(), 1)
    n = hist.size
    if absolute:
        edges = np.linspace(0.0, absmax, n + 1)
        t = edges[min(np.searchsorted(cdf, percentile / 100.0) + 1, n)]
        return max(lo, -t), min(hi, t)
    edges = np.linspace(-absmax, absmax, n + 1)
    cut = (100.0 - percentile) / 200.0
    left = edges[np.searchsorted(cdf, cut)]
    right = edges[min(np.searchsorted(cdf, 1.0 - cut) + 1, n)]
    return max(lo, left), min(hi, right)


def entropy_threshold(hist, absmax, num_quantized_bins):
    """The clipping threshold t on |x| whose quantization into num_quantized_bins levels loses the
    least information: minimises KL(P || Q), P the histogram cut at t (the tail folded into its
    last bin), Q that histogram merged into num_quantized_bins groups and spread back evenly over
    the bins that held values. Candidates step through the bins (at most about 256 of them)."""
    hist = np.asarray(hist, dtype=np.float64)
    n = hist.size
    nq = num_quantized_bins
    if n <= nq:
        return absmax
    edges = np.linspace(0.0, absmax, n + 1)
    step = max(1, (n - nq) // 256)
    best_t, best_kl = absmax, np.inf
    tail = np.concatenate([np.cumsum(hist[::-1])[::-1], [0.0]])  # tail[i] = sum(hist[i:])
    for i in list(range(nq, n, step)) + [n]:
        p = hist[:i].copy()
        p[-1] += tail[i]
        if p.sum() == 0:
            continue
        # merge i bins into nq groups (the last group takes the remainder), spread each group's
        # count over its non-empty bins
        group = np.minimum(np.arange(i) * nq // i, nq - 1)
        src = hist[:i]
        nonzero = src != 0
        counts = np.bincount(group, weights=src, minlength=nq)
        nz = np.bincount(group, weights=nonzero.astype(np.float64), minlength=nq)
        q = np.where(nonzero, counts[group] / np.maximum(nz[group], 1), 0.0)
        kl = _kl(p, q)
        if kl < best_kl:
            best_kl, best_t = kl, edges[i]
    return float(best_t)


def _kl(p, q):
    """KL divergence of two histograms (smoothed so that q has no empty bin where p does not)."""
    p = p / p.sum()
    qs = q.sum()
    if qs == 0:
        return np.inf
    q = q / qs
    eps = 1e-4
    zero_q = (q == 0)
    if zero_q.all():
        return np.inf
    q = np.where(zero_q, eps, q * (1 - eps * zero_q.sum() / max((~zero_q).sum(), 1)))
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


def calibrate(model, tensor_names, feeds, method=CalibrationMethod.MinMax, symmetric=False, moving_average=False,
              averaging_constant=0.01, num_bins=None, num_quantized_bins=128, percentile=99.999):
    """{tensor name: (rmin, rmax)} for tensor_names over the feeds."""
    if not isinstance(method, CalibrationMethod):
        raise TypeError(f"calibrate_method must be a CalibrationMethod, got {method!r}")
    if method == CalibrationMethod.Distribution:
        raise ValueError("calibrate_method=CalibrationMethod.Distribution is not supported by onyx.quantization "
                         "(MinMax, Entropy and Percentile are)")
    if num_bins is None:  # ONNX Runtime's defaults: 128 bins for Entropy (no search: 128 quantized
        # bins), 2048 for Percentile
        num_bins = 128 if method == CalibrationMethod.Entropy else 2048
    if moving_average and method != CalibrationMethod.MinMax:
        raise ValueError("CalibMovingAverage applies to CalibrationMethod.MinMax only")
    c = _Collector(method, symmetric, moving_average, averaging_constant, int(num_bins), int(num_quantized_bins),
                   float(percentile))
    names = sorted(set(tensor_names))
    if not names:
        return {}
    for values in observe(model, names, feeds):
        c.minmax(values)
    if method != CalibrationMethod.MinMax:
        for values in observe(model, names, feeds):
            c.histogram(values)
    return c.ranges()
