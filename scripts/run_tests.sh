#!/usr/bin/env bash
# Every test suite, in two stages.
# 1. Release: install what is missing (Debian packages; the pinned Python packages, ONNX Runtime
#    1.31.1 as the reference among them, into .venv/), build and install the onyx package with
#    `pip install .` into that venv -- the same CMake build (build/release, Release) also builds
#    the C++ tests and benchmarks -- then run every ctest. ../shared beside the checkout enables
#    the conformance, real-model and benchmark-model tests; without it they skip, saying so.
# 2. Sanitizers: an ASan + UBSan build (the `sanitize` preset, build/sanitize) runs the C++ unit
#    tests, a conformance slice, the fuzz corpora and the soak tests, where any sanitizer report
#    fails its test (docs/testing.md). The Python tests stay in stage 1 only: the interpreter is
#    not instrumented.
# Stage 2 runs even when stage 1's tests fail, so one run shows both; the script fails if either did.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# pip runs CMake through scikit-build-core; two compile jobs, as the machines have two cores.
export CMAKE_BUILD_PARALLEL_LEVEL=2
echo "building and installing the onyx package (pip install .)"
.venv/bin/pip install --no-build-isolation --disable-pip-version-check -q \
  -C build-dir=build/release -C cmake.define.ONYX_BUILD_TESTS=ON -C cmake.define.ONYX_BUILD_BENCH=ON .
release_rc=0
ctest --preset release || release_rc=$?

echo "sanitizer stage: building the ASan + UBSan build (build/sanitize)"
start=$SECONDS
cmake --preset sanitize
cmake --build --preset sanitize
built=$SECONDS
sanitize_rc=0
ctest --preset sanitize || sanitize_rc=$?
echo "sanitizer stage: build $((built - start)) s, tests $((SECONDS - built)) s"

if [ "$release_rc" -ne 0 ] || [ "$sanitize_rc" -ne 0 ]; then
  echo "FAILED: release suite exit $release_rc, sanitizer suite exit $sanitize_rc"
  exit 1
fi
