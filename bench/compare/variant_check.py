"""How bench/compare checks a variant's outputs (model_variants.py) against ONNX Runtime's.

  int8       integer outputs must be equal; a float output that comes straight out of a
             DequantizeLinear with one scale must be within one step of that scale (issue 15's
             rule); any other float output within rtol 1e-3 / atol 1e-4, as the float rows
  int8-dynamic  the int8 rule, and a float output outside it still agrees where its mean error
             against ORT on the float32 twin is at most 1.02x ORT's own on the same variant. Each
             DynamicQuantizeLinear turns a last-bit difference in the float op before it into a
             flipped code or a new scale, and the next layers carry it on. yolo_like needed this
             until Onyx's Sigmoid in a quantized graph became ONNX Runtime's logistic (its outputs
             are now ORT's bit for bit); bert_base still does, where ORT's fused float ops (Gelu,
             SkipLayerNormalization, Softmax, the attention's float MatMuls) round otherwise
             (docs/quantization.md, "Where the quantized models part from ONNX Runtime"). Neither
             engine is then the reference; the float32 model is. 1.02: the two engines' errors
             there were 0.987-1.004x of each other. A weak check: yolo_like with its first conv's
             output scale 0.4 % off (one code in 255) is caught (1.20-1.26x), the same fault at
             its 31st conv is not (1.007-1.016x); the kernels' own exact tests and the exact rows
             (integer outputs, QDQ / QOperator, the dynamic CNNs, which agree within rtol 1e-3)
             stay the real guard
  fp16       integer outputs equal; float outputs within 3% of the largest |value| of ORT's (the
             bound of tests/python/half_precision), or, where the engines' float16 roundings differ
             more (ORT rounds to float16 between nodes, Onyx computes the body in float32), a mean
             error against ORT on the float32 twin no larger than 1.1x ORT's own on the float16 model
  bf16       ORT cannot run it (no bfloat16 Conv, MatMul, ...): within 24% of the largest |value| of
             ORT's outputs on the float32 twin, i.e. the float16 bound times 8 for the 3 mantissa
             bits bfloat16 has fewer; the mean error is in the note

The reference is ORT on the same variant; where ORT cannot run it, ORT on the float32 twin, which
the note then says."""
import os

import numpy as np

HALF_SHARE = {"fp16": 3e-2, "bf16": 8 * 3e-2}
DYNAMIC_TWIN_RATIO = 1.02


def wants_float_twin(variant):
    """Whether the check of `variant` needs ORT's outputs on the float32 twin (its second chance)."""
    return variant in ("fp16", "int8-dynamic")


def output_steps(path):
    """{output index: quantization step} of the outputs a DequantizeLinear with a one-element scale
    initializer writes."""
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(path, load_external_data=False).graph
    inits = {t.name: t for t in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    steps = {}
    for i, out in enumerate(graph.output):
        node = producer.get(out.name)
        if node is None or node.op_type != "DequantizeLinear" or node.input[1] not in inits:
            continue
        scale = numpy_helper.to_array(inits[node.input[1]])
        if scale.size == 1:
            steps[i] = float(scale.reshape(()))
    return steps


def _pairs(ref_dir, other_dir):
    """[(index, file, reference array, other array or None)], paired by the leading index."""
    by_index = lambda folder: {int(f.split("_", 1)[0]): f for f in os.listdir(folder) if f.endswith(".npy")}
    ref, other = by_index(ref_dir), by_index(other_dir)
    return [(i, ref[i], np.load(os.path.join(ref_dir, ref[i])),
             np.load(os.path.join(other_dir, other[i])) if i in other else None) for i in sorted(ref)]


def _mean_share(a, b):
    """Mean |a - b| over the largest |a|."""
    return float(np.abs(a.astype(np.float64) - b).mean()) / max(float(np.abs(a).max()), 1e-30) if a.size else 0.0


def agreement(ref_dir, other_dir, family, steps=None, twin=False, float_dir=None, dynamic=False):
    """(agrees, note) of the outputs in other_dir against the reference's in ref_dir. float_dir:
    ORT's outputs on the float32 twin, for the second chance of the fp16 rule and (dynamic: the
    variant is int8-dynamic) of the int8 rule's float outputs without an output step."""
    notes, agree = [], True
    floats = {i: b for i, _, b, _ in _pairs(float_dir, float_dir)} if float_dir else {}
    for i, f, a, b in _pairs(ref_dir, other_dir):
        if b is None or a.shape != b.shape:
            return False, f"{f}: shape {None if b is None else b.shape} vs the reference's {a.shape}"
        if a.dtype.kind not in "fc":
            n = int(np.count_nonzero(a != b))
            agree &= n == 0
            notes.append(f"{f}: {'all' if not n else f'{n} of'} {a.size} {'equal' if not n else 'differ'}")
            continue
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        worst = float(diff.max()) if a.size else 0.0
        if family == "int8" and i in (steps or {}):
            step = steps[i]
            agree &= worst <= step * (1 + 1e-6)
            notes.append(f"{f}: max abs diff {worst:.2e} = {worst / step:.2f} output steps")
        elif family == "int8":
            n = int(np.count_nonzero(~(diff <= 1e-4 + 1e-3 * np.abs(a))))
            note = f"{f}: max abs diff {worst:.2e}" + (f", {n} of {a.size} outside rtol 1e-3/atol 1e-4" if n else "")
            ok = n == 0
            if n and dynamic and i in floats and floats[i].shape == a.shape:
                own, ort = _mean_share(floats[i], b), _mean_share(floats[i], a)
                ok = own <= DYNAMIC_TWIN_RATIO * ort
                note += (f"; mean error vs the float32 twin: this {100 * own:.3f}%, ORT {100 * ort:.3f}% "
                         f"({own / max(ort, 1e-30):.3f}x, at most {DYNAMIC_TWIN_RATIO}x)")
            agree &= ok
            notes.append(note)
        else:
            share = worst / max(float(np.abs(a).max()) if a.size else 0.0, 1e-30)
            ok = share <= HALF_SHARE[family]
            note = f"{f}: max abs diff {worst:.2e} = {100 * share:.2f}% of max |ref|, mean {100 * _mean_share(a, b):.3f}%"
            if i in floats and floats[i].shape == a.shape:
                own, ort = _mean_share(floats[i], b), _mean_share(floats[i], a)
                ok |= own <= 1.1 * ort
                note += f"; mean error vs the float32 twin: this {100 * own:.3f}%, ORT {100 * ort:.3f}%"
            agree &= ok
            notes.append(note)
    prefix = "vs ORT on the float32 twin: " if twin else ""
    return agree, prefix + "; ".join(notes)
