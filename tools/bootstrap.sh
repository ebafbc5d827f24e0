#!/usr/bin/env bash
# Everything a fresh Debian 12 machine needs before `rung` runs: the Debian
# packages that are missing, the pinned ONNX Runtime builds and sample models
# (tools/fetch-deps.sh), then a configure and build in ./build.
# Safe to run again: each step does only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(g++ cmake make pkg-config ca-certificates
          nlohmann-json3-dev libcli11-dev libfmt-dev libssl-dev libsqlite3-dev
          libonnx-dev libprotobuf-dev protobuf-compiler
          libgtest-dev libgmock-dev libbenchmark-dev
          chromium python3-jsonschema libpng-dev libstb-dev python3-skimage
          imagemagick fonts-dejavu-core fonts-liberation2 fonts-freefont-ttf
          libpq-dev postgresql
          libonnx-testdata
          # The libFuzzer harnesses (fuzz/): clang and its fuzzer and sanitizer runtimes.
          clang libclang-rt-14-dev
          # The stock Vulkan loader, and what the software GPU adapter (Mesa 25's lavapipe,
          # fetched by tools/fetch-deps.sh into the deps cache, never installed) links against.
          libvulkan1 libllvm15 libelf1 libexpat1 libwayland-client0 libx11-xcb1 libxcb1 libxcb-dri3-0
          libxcb-present0 libxcb-randr0 libxcb-shm0 libxcb-sync1 libxcb-xfixes0 libxshmfence1 libzstd1 zlib1g)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm fetches the pinned tarballs; a Node.js from elsewhere may already bring it.
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "bootstrap: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

tools/fetch-deps.sh
# rung quantise's calibration and holdout sets (real prose rendered by ImageMagick,
# seeded, never committed) take minutes to render and no test needs them: made
# only when asked (RUNG_MAKE_QUANTISE_SETS=1), skipped when already made.
if [ "${RUNG_MAKE_QUANTISE_SETS:-0}" = 1 ]; then
  DEPS="${RUNG_DEPS_DIR:-$HOME/.cache/rung}"
  tools/make-quantise-sets.py --out "$DEPS/data/ocr" --charset "$DEPS/models/ppocr/ppocr_keys_v1.txt"
fi

jobs="$(nproc 2>/dev/null || echo 2)"
# The fuzzers are built too, so the test run smoke-runs each (fuzz.* tests).
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRUNG_BUILD_FUZZERS=ON >/dev/null
cmake --build build -j"$jobs"
