#!/usr/bin/env bash
# Run here (with apt): unpacks the Debian packages gpubench builds with (gloo: headers only, for
# c10d's ProcessGroupGloo; torch carries the library) into .deps/gpu-root, a
# git-ignored folder to carry to a GPU machine that has torch and cmake but no package manager.
# LibTorch itself comes from the torch Python package there.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .deps/gpu-debs .deps/gpu-root
mkdir -p .deps/gpu-debs .deps/gpu-root
(cd .deps/gpu-debs && apt-get download libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libyaml-cpp0.7 \
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libgloo-dev)
for deb in .deps/gpu-debs/*.deb; do dpkg-deb -x "$deb" .deps/gpu-root; done
rm -rf .deps/gpu-debs
du -sh .deps/gpu-root
