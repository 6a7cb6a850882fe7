#!/usr/bin/env python3
"""Checks DESIGN.md's layering: each src/ folder includes only itself and the layers below it."""
import os
import re
import sys

# folder -> folders it may include (besides itself and the public include/onyx headers)
ALLOWED = {
    "base": set(),
    "platform": {"base"},
    "tensor": {"base"},
    "linalg": {"base", "platform"},
    "ir": {"base", "tensor"},
    "onnx": {"base", "platform", "tensor", "ir"},
    "ops": {"base", "tensor", "ir"},
    "providers": {"base", "platform", "tensor", "linalg", "ir", "ops"},
    "optimizer": {"base", "platform", "tensor", "linalg", "ir", "ops", "providers"},
    "runtime": {"base", "platform", "tensor", "linalg", "ir", "onnx", "ops", "providers", "optimizer"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main(root):
    src = os.path.join(root, "src")
    problems = []
    for layer, allowed in ALLOWED.items():
        for dirpath, _, files in os.walk(os.path.join(src, layer)):
            for f in files:
                if not f.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if target in (layer, "onyx") or target in allowed:
                            continue
                        rel = os.path.relpath(path, root)
                        problems.append(f"{rel}:{lineno}: src/{layer} may not include {target}/")
    # The Python bindings see the public API only (DESIGN.md, "The Python package").
    for dirpath, _, files in os.walk(os.path.join(root, "python", "src")):
        for f in files:
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8") as fh:
                for lineno, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if m and m.group(1) != "onyx":
                        rel = os.path.relpath(path, root)
                        problems.append(f"{rel}:{lineno}: python/src may include only onyx/ (include/onyx), not {m.group(1)}/")
    for p in problems:
        print(p)
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
