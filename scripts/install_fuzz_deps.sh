#!/bin/sh
# clang and its runtimes (libFuzzer, ASan, UBSan) for the `fuzz` CMake preset, from Debian.
set -e
apt-get update
apt-get install -y --no-install-recommends clang-14 libclang-rt-14-dev
