#!/usr/bin/env bash
# The main job: install what is missing, build (Release), make the default model and run it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake --preset release
cmake --build --preset release
mkdir -p build/release/models
/usr/bin/python3 scripts/make_default_model.py build/release/models/default.onnx
build/release/tools/onyx/onyx run build/release/models/default.onnx --random --dim batch=1 --runs 20
