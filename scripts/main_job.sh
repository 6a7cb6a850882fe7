#!/usr/bin/env bash
# The main job: install what is missing, build and install the onyx package (`pip install .`
# into .venv/), make the default model and run it with the `onyx` command the package installs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# pip runs CMake through scikit-build-core; two compile jobs, as the machines have two cores.
export CMAKE_BUILD_PARALLEL_LEVEL=2
echo "building and installing the onyx package (pip install .)"
.venv/bin/pip install --no-build-isolation --disable-pip-version-check -q .
mkdir -p build/models
.venv/bin/python scripts/make_default_model.py build/models/default.onnx
.venv/bin/onyx run build/models/default.onnx --random --dim batch=1 --runs 20
