#!/usr/bin/env bash
# Installs the Debian packages Onyx needs to build and test, by name, and nothing else.
# Idempotent: packages already present are skipped; `apt-get update` runs once, only when
# something is missing. ONNX Runtime (the test/benchmark reference) comes from npm and is
# installed into the build tree by scripts/install_ort.sh, not here.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libhwy-dev
  libjpeg-dev libpng-dev libopenjp2-7-dev libwebp-dev
  python3 python3-dev python3-numpy python3-onnx python3-pytest pybind11-dev
  libonnx-testdata
  nodejs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come with a nodejs build that is not Debian's; only ask apt when the command is absent.
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all packages present"
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "install_deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
