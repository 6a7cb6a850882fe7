#!/usr/bin/env bash
# Every test suite: install what is missing (Debian packages; the pinned Python packages, ONNX
# Runtime 1.31.1 as the reference among them, into .venv/), build and install the onyx package
# with `pip install .` into that venv -- the same CMake build (build/release, Release) also builds
# the C++ tests and benchmarks -- then run ctest. ../shared beside the checkout enables the
# conformance, real-model and benchmark-model tests; without it they skip, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# pip runs CMake through scikit-build-core; two compile jobs, as the machines have two cores.
export CMAKE_BUILD_PARALLEL_LEVEL=2
echo "building and installing the onyx package (pip install .)"
.venv/bin/pip install --no-build-isolation --disable-pip-version-check -q \
  -C build-dir=build/release -C cmake.define.ONYX_BUILD_TESTS=ON -C cmake.define.ONYX_BUILD_BENCH=ON .
ctest --preset release
