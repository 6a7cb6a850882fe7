"""How bench/compare checks a variant's outputs (model_variants.py) against ONNX Runtime's.

  int8       integer outputs must be equal; a float output that comes straight out of a
             DequantizeLinear with one scale must be within one step of that scale (issue 15's
             rule); any other float output within rtol 1e-3 / atol 1e-4, as the float rows
  fp16/bf16  integer outputs equal, float outputs within a share of the largest |value| of the
             reference: 3e-2 for float16, 5e-2 for bfloat16 (the bounds of the half-precision
             model tests, tests/python/half_precision)

The reference is ORT on the same variant; where ORT cannot run it (the bfloat16 twins), ORT on the
float32 twin, which the note then says."""
import os

import numpy as np

HALF_SHARE = {"fp16": 3e-2, "bf16": 5e-2}


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


def agreement(ref_dir, other_dir, family, steps=None, twin=False):
    """(agrees, note) of the outputs in other_dir against the reference's in ref_dir."""
    notes, agree = [], True
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
            agree &= n == 0
            notes.append(f"{f}: max abs diff {worst:.2e}" + (f", {n} of {a.size} outside rtol 1e-3/atol 1e-4" if n else ""))
        else:
            share = worst / max(float(np.abs(a).max()) if a.size else 0.0, 1e-30)
            agree &= share <= HALF_SHARE[family]
            notes.append(f"{f}: max abs diff {worst:.2e} = {100 * share:.2f}% of max |ref|")
    prefix = "vs ORT on the float32 twin: " if twin else ""
    return agree, prefix + "; ".join(notes)
