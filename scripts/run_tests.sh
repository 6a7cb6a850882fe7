#!/usr/bin/env bash
# Every test suite: install what is missing (Debian packages, ONNX Runtime 1.30 from npm into
# the build), build (Release), then run ctest. ../shared beside the checkout enables the
# conformance, real-model and benchmark-model tests; without it they skip, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake --preset release
cmake --build --preset release
scripts/install_ort.sh build/release
ctest --preset release
