"""The per-layer error report of `onyx quantize --report`.

For each quantized node it measures, against the float model on the calibration feeds:
  local        the error the node adds by itself: the float model's own inputs are quantized and
               dequantized with the node's parameters, its weights dequantized, its output
               quantized and dequantized (a fake-quantized copy of the node, fed from the float
               graph), so one bad layer does not smear over everything after it;
  accumulated  the node's output in the quantized model (all earlier errors included).
The ranking is by the local SNR, worst first; `--keep-float N` excludes the N worst nodes.
SNR = 10 log10(sum f^2 / sum (f - q)^2) over all feeds; rel = ||f - q|| / ||f||."""
import math

import numpy as np

from onyx.quantization._onnx import onnx_module
from onyx.quantization.calibrate import observe
from onyx.quantization.quantizer import bias_quant, weight_quant


class _Err:
    def __init__(self):
        self.signal = 0.0
        self.noise = 0.0
        self.maxabs = 0.0
        self.agree = 0
        self.total = 0

    def add(self, f, q, top1=False):
        f = np.asarray(f, dtype=np.float64)
        q = np.asarray(q, dtype=np.float64)
        if f.shape != q.shape:
            raise ValueError(f"shapes differ: float {f.shape}, quantized {q.shape}")
        d = f - q
        self.signal += float(np.sum(f * f))
        self.noise += float(np.sum(d * d))
        if d.size:
            self.maxabs = max(self.maxabs, float(np.max(np.abs(d))))
        if top1 and f.ndim >= 2 and f.shape[-1] > 1:
            a = np.argmax(f.reshape(-1, f.shape[-1]), axis=1)
            b = np.argmax(q.reshape(-1, q.shape[-1]), axis=1)
            self.agree += int(np.sum(a == b))
            self.total += a.size

    @property
    def snr(self):
        if self.noise == 0:
            return math.inf
        if self.signal == 0:
            return -math.inf
        return 10.0 * math.log10(self.signal / self.noise)

    @property
    def rel(self):
        return math.sqrt(self.noise / self.signal) if self.signal > 0 else (0.0 if self.noise == 0 else math.inf)


class Report:
    def __init__(self, rows, outputs):
        self.rows = rows  # dicts: node, op, local (_Err), accumulated (_Err), sorted worst first
        self.outputs = outputs  # {output name: _Err}

    def worst(self, n):
        return [r["node"] for r in self.rows[:n]]

    def text(self):
        lines = [f"{'node':<32} {'op':<18} {'local SNR dB':>12} {'local rel':>10} "
                 f"{'accum SNR dB':>12} {'accum rel':>10}"]
        for r in self.rows:
            lo, ac = r["local"], r["accumulated"]
            lines.append(f"{r['node'][:32]:<32} {r['op'][:18]:<18} {lo.snr:12.2f} {lo.rel:10.4f} "
                         f"{ac.snr:12.2f} {ac.rel:10.4f}")
        lines.append("")
        lines.append("end to end (model outputs, quantized vs float):")
        for name, e in self.outputs.items():
            top1 = f"  top-1 agreement {100.0 * e.agree / e.total:.2f}% of {e.total}" if e.total else ""
            lines.append(f"  {name}: SNR {e.snr:.2f} dB  rel {e.rel:.4f}  max abs {e.maxabs:.6g}{top1}")
        return "\n".join(lines)

    def as_dict(self):
        def err(e):
            return {"snr_db": e.snr, "rel": e.rel, "max_abs": e.maxabs}
        return {"nodes": [{"node": r["node"], "op": r["op"], "local": err(r["local"]),
                           "accumulated": err(r["accumulated"])} for r in self.rows],
                "outputs": {k: dict(err(e), top1_agree=e.agree, top1_total=e.total) for k, e in self.outputs.items()}}


def _local_model(plan):
    """The float model plus, per quantized node, a fake-quantized copy fed from the float graph;
    returns (model, {node name: (float tensor, local tensor)})."""
    onnx = onnx_module()
    helper, nh = onnx.helper, onnx.numpy_helper
    model = onnx.ModelProto()
    model.CopyFrom(plan.float_model)
    g = model.graph
    names = {t for n in g.node for t in list(n.input) + list(n.output)} | {i.name for i in g.initializer}
    counter = [0]

    def fresh(base):
        counter[0] += 1
        name = f"{base}__report{counter[0]}"
        names.add(name)
        return name

    def const(base, array):
        name = fresh(base)
        g.initializer.append(nh.from_array(np.asarray(array), name))
        return name

    def dq(q, scale, zp, axis=None):
        out = fresh("dq")
        attrs = {"axis": axis} if axis is not None else {}
        g.node.append(helper.make_node("DequantizeLinear", [q, scale, zp], [out], name=fresh("DQ"), **attrs))
        return out

    def fake(t, qp):
        s, z = const(t + "_s", qp.scale), const(t + "_z", qp.zero_point)
        q = fresh("q")
        g.node.append(helper.make_node("QuantizeLinear", [t, s, z], [q], name=fresh("Q")))
        return dq(q, s, z)

    pairs = {}
    for p in plan.nodes:
        node = onnx.NodeProto()
        node.CopyFrom(p.orig)
        node.name = fresh(p.orig.name)
        for i, role in p.inputs.items():
            t = p.orig.input[i]
            if role == "act" and p.kind == "dynamic":
                q, s, z = fresh("dq_x"), fresh("dq_s"), fresh("dq_z")
                g.node.append(helper.make_node("DynamicQuantizeLinear", [t], [q, s, z], name=fresh("DQL")))
                node.input[i] = dq(q, s, z)
            elif role == "act":
                node.input[i] = fake(t, plan.act_params[t])
            elif role in ("weight", "const"):
                qp, qa = weight_quant(plan, p, i)
                node.input[i] = dq(const(t + "_q", qa), const(t + "_s", qp.scale), const(t + "_z", qp.zero_point),
                                   qp.axis)
            elif role == "bias":
                xq = plan.act_params[p.orig.input[0]]
                wqp, _ = weight_quant(plan, p, 1)
                qb, bscale = bias_quant(plan, p, xq.scale, wqp)
                node.input[i] = dq(const(t + "_q", qb), const(t + "_s", bscale),
                                   const(t + "_z", np.zeros(bscale.shape, np.int32)), 0 if bscale.ndim else None)
        y = fresh(p.orig.output[0] + "_local")
        node.output[0] = y
        for k in range(1, len(node.output)):
            if node.output[k]:
                node.output[k] = fresh(node.output[k])
        g.node.append(node)
        if p.outputs:
            target = p.outputs[0]  # the folded Relu/Clip's output where one was folded
            if p.fused is not None:
                fused = onnx.NodeProto()
                fused.CopyFrom(p.fused)
                fused.name = fresh(p.fused.name)
                fused.input[0] = y
                y = fresh(target + "_local")
                fused.output[0] = y
                g.node.append(fused)
            y = fake(y, plan.act_params[target])
        else:
            target = p.orig.output[0]
        pairs[p.name] = (target, y)
    _topo_sort(g)
    return model, pairs


def _topo_sort(g):
    """Appended nodes read tensors defined later in the list: reorder the graph topologically."""
    onnx = onnx_module()
    ready = {i.name for i in g.input} | {i.name for i in g.initializer} | {""}
    pending = list(g.node)
    order = []
    while pending:
        rest = []
        for n in pending:
            if all(t in ready for t in n.input):
                order.append(n)
                ready.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise RuntimeError("report model: nodes left that cannot be ordered: " +
                               ", ".join(n.name for n in rest[:5]))
        pending = rest
    nodes = [onnx.NodeProto() for _ in order]
    for a, b in zip(nodes, order):
        a.CopyFrom(b)
    del g.node[:]
    g.node.extend(nodes)


def _exposed_quantized(result):
    """The quantized model with, for every quantized node, its output as a float graph output;
    returns (model, {node name: tensor})."""
    onnx = onnx_module()
    model = onnx.ModelProto()
    model.CopyFrom(result.model)
    g = model.graph
    produced = {t for n in g.node for t in n.output}
    tensors = {}
    for p in result.plan.nodes:
        t = p.outputs[0] if p.outputs else p.orig.output[0]
        if t not in produced and t in result.plan.qnames:  # QOperator: only the 8-bit tensor exists
            q, s, z = result.plan.qnames[t]
            out = t + "__report_dq"
            g.node.append(onnx.helper.make_node("DequantizeLinear", [q, s, z], [out], name=out))
            t = out
        if t in produced or t.endswith("__report_dq"):
            tensors[p.name] = t
    return model, tensors


def build_report(result, feeds):
    plan = result.plan
    local_model, pairs = _local_model(plan)
    wanted = sorted({t for pair in pairs.values() for t in pair})
    local = {name: _Err() for name in pairs}
    for values in observe(local_model, wanted, feeds):
        for name, (f, q) in pairs.items():
            local[name].add(values[f], values[q])
    qmodel, exposed = _exposed_quantized(result)
    out_names = [o.name for o in plan.float_model.graph.output]
    acc = {name: _Err() for name in pairs}
    ends = {o: _Err() for o in out_names}
    float_tensors = sorted({pairs[n][0] for n in exposed} | set(out_names))
    for fv, qv in zip(observe(plan.float_model, float_tensors, feeds),
                      observe(qmodel, sorted(set(exposed.values()) | set(out_names)), feeds)):
        for name, t in exposed.items():
            acc[name].add(fv[pairs[name][0]], qv[t])
        for o in out_names:
            if np.asarray(fv[o]).dtype.kind == "f":
                ends[o].add(fv[o], qv[o], top1=True)
    ops = {p.name: p.orig.op_type + (f"+{p.fused.op_type}" if p.fused is not None else "") for p in plan.nodes}
    rows = [{"node": n, "op": ops[n], "local": local[n], "accumulated": acc[n]} for n in pairs]
    rows.sort(key=lambda r: (r["local"].snr, r["accumulated"].snr))
    return Report(rows, ends)

