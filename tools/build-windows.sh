#!/usr/bin/env bash
# Cross-builds what rung has ported to Windows x64 into ./build-windows with Debian's
# mingw-w64, against the win32 ONNX Runtime 1.30.0; its tests run under wine
# (tools/windows-run) from ctest.
#
#   tools/build-windows.sh                 fetch what is missing, configure, build
#   ctest --test-dir build-windows         the Windows tests, under wine
#
# Needs g++-mingw-w64-x86-64-posix and wine64 (tools/bootstrap.sh --tests installs them);
# the win32 runtimes come from tools/fetch-deps.sh --windows into the deps cache.
# What is ported and what is not yet: docs/windows.md.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in x86_64-w64-mingw32-g++-posix; do
  command -v "$tool" >/dev/null || {
    echo "build-windows: $tool not found (apt-get install g++-mingw-w64-x86-64-posix wine64, or tools/bootstrap.sh --tests)" >&2; exit 1; }
done
[ -x /usr/lib/wine/wine64 ] || command -v wine64 >/dev/null || {
  echo "build-windows: wine64 not found (apt-get install wine64, or tools/bootstrap.sh --tests)" >&2; exit 1; }
tools/fetch-deps.sh --windows >&2

jobs="$(nproc 2>/dev/null || echo 2)"
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build-windows --toolchain cmake/toolchains/x86_64-w64-mingw32.cmake \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
      -DRUNG_BUILD_TESTS=ON "${launcher[@]}" >/dev/null
cmake --build build-windows -j"$jobs"
# wine makes its prefix on its first start (some seconds); done here, not inside a timed test.
tools/windows-run cmd /c exit 0 >/dev/null 2>&1 || true
echo "build-windows: built in build-windows/ (Windows x64); run its programs with tools/windows-run" >&2
