#!/usr/bin/env bash
# The CUDA provider's checks, for a machine with a GPU (CI has none; docs/cuda.md). Builds Onyx with
# CUDA (plain cmake + ninja or make, no tests, no Python package), builds tests/gpu/gpu_checks.cc
# against it, runs it (each CUDA kernel against the CPU provider, the options, the copies per run),
# then tests/gpu/gpu_checks.py recomputes every kernel case with NumPy. Prints a SUMMARY line per
# part and a final one; exits non-zero on any failure. Sized for ~5 minutes on 16 cores.
#   tests/gpu/run_gpu_checks.sh [OUT_DIR]      (default: build/gpu-checks)
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-build/gpu-checks}
BUILD=build/gpu-checks-build
mkdir -p "$OUT" "$BUILD"
JOBS=$(nproc 2>/dev/null || echo 4)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
PY=${PYTHON:-python3}

echo "== machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -4
nvcc --version | tail -1
cmake --version | head -1

GEN="-G Ninja"
command -v ninja >/dev/null || GEN=""
echo "== configure (${GEN:-Unix Makefiles})"
if ! cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DONYX_USE_CUDA=ON -DONYX_BUILD_TESTS=OFF \
     -DONYX_BUILD_BENCH=OFF -DONYX_BUILD_PYTHON=OFF > "$OUT/configure.log" 2>&1; then
  tail -30 "$OUT/configure.log"
  echo "SUMMARY run_gpu_checks: FAIL (configure; $OUT/configure.log)"
  exit 1
fi
echo "== build"
start=$(date +%s)
if ! cmake --build "$BUILD" --target onyx -j "$JOBS" > "$OUT/build.log" 2>&1; then
  grep -m 20 -E "error|Error" "$OUT/build.log"
  echo "SUMMARY run_gpu_checks: FAIL (build; $OUT/build.log)"
  exit 1
fi
echo "built libonyx in $(( $(date +%s) - start )) s"
LIB_DIR=$(dirname "$(find "$BUILD" -name 'libonyx.so' | head -1)")
if ! g++ -std=c++20 -O2 -Isrc -Iinclude -Itests/unit -I"$CUDA_HOME/include" tests/gpu/gpu_checks.cc \
     -L"$LIB_DIR" -lonyx -L"$CUDA_HOME/lib64" -lcudart -Wl,-rpath,"$LIB_DIR" -Wl,-rpath,"$CUDA_HOME/lib64" \
     -o "$BUILD/gpu_checks" > "$OUT/driver_build.log" 2>&1; then
  head -30 "$OUT/driver_build.log"
  echo "SUMMARY run_gpu_checks: FAIL (gpu_checks.cc did not build)"
  exit 1
fi

echo "== CUDA kernels and options against the CPU provider"
timeout 600 "$BUILD/gpu_checks" "$OUT/cases" | tee "$OUT/gpu_checks.log"
driver=${PIPESTATUS[0]}
echo "== CUDA outputs against NumPy"
timeout 300 "$PY" tests/gpu/gpu_checks.py "$OUT/cases" | tee "$OUT/numpy_reference.log"
numpy_rc=${PIPESTATUS[0]}

grep -h "^FAIL" "$OUT/gpu_checks.log" "$OUT/numpy_reference.log" | head -40
if [ "$driver" -eq 0 ] && [ "$numpy_rc" -eq 0 ]; then
  echo "SUMMARY run_gpu_checks: PASS"
  exit 0
fi
echo "SUMMARY run_gpu_checks: FAIL (gpu_checks exit $driver, numpy reference exit $numpy_rc)"
exit 1
