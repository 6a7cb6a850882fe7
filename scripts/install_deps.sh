#!/usr/bin/env bash
# Installs what Onyx needs to build and test, and nothing else:
#  - Debian packages, by name with apt (`apt-get update` once, only when something is missing);
#  - the Python packages of requirements-dev.txt, pinned, into the virtual environment .venv/
#    inside the checkout (git-ignored), made with the `python3` first on PATH.
# Idempotent: when everything is there it installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libhwy-dev
  libjpeg-dev libpng-dev libopenjp2-7-dev libwebp-dev
  libonnx-testdata
  universal-ctags  # scripts/check_unity_batches.py: the sanitize preset's unity_batches test
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all Debian packages present"
else
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "install_deps: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The venv is rebuilt only when requirements-dev.txt changed since it was last filled (its copy
# inside the venv is the stamp).
venv=.venv
stamp="$venv/requirements-dev.txt"
if [ -x "$venv/bin/python" ] && cmp -s requirements-dev.txt "$stamp"; then
  echo "install_deps: Python packages present in $venv"
  exit 0
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
cp requirements-dev.txt "$stamp"
echo "install_deps: Python packages installed into $venv"
