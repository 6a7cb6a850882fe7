#!/usr/bin/env bash
# Installs ONNX Runtime 1.30 (the reference for tests and benchmarks) from npm into
# BUILD_DIR/ort-cache. `--ignore-scripts` skips its installer, which tries an unreachable host;
# the package already ships libonnxruntime for linux x64.
set -euo pipefail
build_dir=${1:?usage: install_ort.sh BUILD_DIR}
cache="$build_dir/ort-cache"
if [ -f "$cache/node_modules/onnxruntime-node/package.json" ] &&
   grep -q '"version": "1.30.0"' "$cache/node_modules/onnxruntime-node/package.json"; then
  echo "install_ort: onnxruntime-node 1.30.0 present in $cache"
  exit 0
fi
mkdir -p "$cache"
cd "$cache"
[ -f package.json ] || echo '{"name": "onyx-ort-cache", "private": true}' > package.json
npm install --ignore-scripts --no-audit --no-fund --loglevel=error onnxruntime-node@1.30.0
echo "install_ort: installed onnxruntime-node 1.30.0 into $cache"
