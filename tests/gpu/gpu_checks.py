#!/usr/bin/env python3
"""Independent reference for the CUDA kernel checks: gpu_checks (C++) writes, per case, the inputs
as the kernel saw them and CUDA's output (float32 .npy files) with a manifest line naming the op,
its attributes and tolerance; this recomputes each case in float64 NumPy (rounded to the output
dtype) and compares. Needs only NumPy. Prints PASS/FAIL per case and a summary line."""
import json
import math
import os
import sys

import numpy as np

erf = np.vectorize(math.erf)


def bfloat16_round(x):
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32)


def round_to(x, dtype):
    if dtype == "float16":
        return np.asarray(x, np.float16).astype(np.float64)
    if dtype == "bfloat16":
        return bfloat16_round(x).astype(np.float64)
    if dtype in ("int32", "int64"):
        return np.trunc(x)
    return np.asarray(x, np.float32).astype(np.float64)


def softmax(x, axis, log=False):
    shifted = x - x.max(axis=axis, keepdims=True)
    lse = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return shifted - lse if log else np.exp(shifted - lse)


def reference(case, ins):
    op, a = case["op"], case["attrs"]
    x = ins[0]
    if op in ("Add", "Sub", "Mul", "Div"):
        return {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op](ins[0], ins[1])
    if op == "Relu":
        return np.maximum(x, 0)
    if op == "Sigmoid":
        return 1 / (1 + np.exp(-x))
    if op == "Tanh":
        return np.tanh(x)
    if op == "Erf":
        return erf(x)
    if op == "Gelu":
        if a.get("approximate") == "tanh":
            return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        return 0.5 * x * (1 + erf(x / math.sqrt(2)))
    if op in ("Softmax", "LogSoftmax"):
        axis = a.get("axis", -1) % x.ndim
        if a.get("coerce_2d"):
            flat = x.reshape(int(np.prod(x.shape[:axis])), -1)
            return softmax(flat, 1, op == "LogSoftmax").reshape(x.shape)
        return softmax(x, axis, op == "LogSoftmax")
    if op == "LayerNormalization":
        axis = a.get("axis", -1) % x.ndim
        axes = tuple(range(axis, x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (x - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * ins[1]
        return y + ins[2] if len(ins) > 2 else y
    if op == "Transpose":
        return np.transpose(x, a.get("perm"))
    if op == "Reshape":  # Reshape, Unsqueeze, Squeeze, Flatten: the values keep their order
        return x.reshape(a["shape"])
    if op == "MatMul":
        return np.matmul(ins[0], ins[1])
    if op == "Gemm":
        A = ins[0].T if a.get("transA") else ins[0]
        B = ins[1].T if a.get("transB") else ins[1]
        y = a.get("alpha", 1.0) * (A @ B)
        return y + a.get("beta", 1.0) * ins[2] if len(ins) > 2 else y
    if op == "Cast":
        return x
    raise ValueError(f"no reference for {op}")


def main(folder):
    passed = failed = 0
    with open(os.path.join(folder, "manifest.jsonl")) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    for case in cases:
        d = os.path.join(folder, case["name"])
        ins = [np.load(os.path.join(d, n + ".npy")).astype(np.float64) for n in case["inputs"]]
        got = np.load(os.path.join(d, "y.npy")).astype(np.float64)
        want = round_to(reference(case, ins), case["out_dtype"])
        # Low-precision inputs were rounded by Gpu checks; the reference computes in float64, so a
        # float16/bfloat16 result may differ by its own rounding: the manifest's tolerance allows that.
        ok = got.shape == want.shape and np.allclose(got, want, rtol=case["rtol"], atol=max(case["atol"], 1e-30),
                                                     equal_nan=True)
        if ok:
            passed += 1
            print(f"PASS numpy:{case['name']}")
        else:
            failed += 1
            detail = f"shape {got.shape} vs {want.shape}" if got.shape != want.shape else \
                f"max |diff| {np.max(np.abs(got - want)):.3g}"
            print(f"FAIL numpy:{case['name']}: {detail}")
    print(f"SUMMARY numpy_reference: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "gpu-check-cases"))
