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

. tools/cross-build.sh
cmake -S . -B build-windows --toolchain cmake/toolchains/x86_64-w64-mingw32.cmake "${cross_flags[@]}" -DRUNG_BUILD_TESTS=ON >/dev/null
cmake --build build-windows -j"$jobs"
# wine makes its prefix on its first start (some seconds); done here, not inside a timed test.
tools/windows-run cmd /c exit 0 >/dev/null 2>&1 || true
echo "build-windows: built in build-windows/ (Windows x64); run its programs with tools/windows-run" >&2
