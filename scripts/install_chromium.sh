#!/usr/bin/env bash
# Installs Debian's headless-capable `chromium` for the HTML report tests (onyx profile -o), only
# when it is absent; prints the browser's path. Needs root or sudo for apt.
set -euo pipefail

find_browser() {
  for name in chromium chromium-browser; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

if browser=$(find_browser); then
  echo "$browser"
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "install_chromium: installing chromium" >&2
"${sudo_cmd[@]}" apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
find_browser
