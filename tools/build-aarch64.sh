#!/usr/bin/env bash
# Cross-builds rung for Linux aarch64 into ./build-aarch64 on an x86-64 Debian 12 machine:
# the engine, the CLI, the workers, the simulated accelerator and the test subset that
# runs under qemu (tools/aarch64-run), against the arm64 ONNX Runtime builds.
#
#   tools/build-aarch64.sh                       fetch what is missing, configure, build
#   tools/aarch64-run build-aarch64/rung doctor  run what it built
#   ctest --test-dir build-aarch64               the subset, under emulation
#
# Needs g++-aarch64-linux-gnu and qemu-user-static (tools/bootstrap.sh --tests installs
# them); the arm64 libraries and runtimes come from tools/fetch-deps.sh --aarch64 into the
# deps cache, nothing is installed for arm64 system-wide. Set RUNG_AARCH64_TESTS to a
# list of tests/<name>.cc to build another subset ("all" builds every test).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in aarch64-linux-gnu-g++ qemu-aarch64-static; do
  command -v "$tool" >/dev/null || {
    echo "build-aarch64: $tool not found (apt-get install g++-aarch64-linux-gnu qemu-user-static, or tools/bootstrap.sh --tests)" >&2; exit 1; }
done
tools/fetch-deps.sh --aarch64 >&2

# What the emulated run covers: finding and negotiating with the arm64 runtimes, hardware
# detection on the ARM fixture trees, the probe on the CPU and the simulated accelerator,
# the engine serving jobs (its workers emulated too), bench and parity end to end.
default_tests="runtime-test;library-files-test;hardware-test;ladder-test;doctor-cli-test;version-cli-test;probe-cli-test;sim-ep-test;engine-test;bench-cli-test;parity-cli-test;parity-record-cli-test"
tests="${RUNG_AARCH64_TESTS:-$default_tests}"
[ "$tests" = all ] && tests=""

. tools/cross-build.sh
cmake -S . -B build-aarch64 --toolchain cmake/toolchains/aarch64-linux-gnu.cmake "${cross_flags[@]}" \
      -DRUNG_BUILD_TESTS=ON -DRUNG_BUILD_BENCHMARKS=OFF -DRUNG_BUILD_FUZZERS=OFF "-DRUNG_TEST_SUBSET=$tests" >/dev/null
cmake --build build-aarch64 -j"$jobs"
echo "build-aarch64: built in build-aarch64/ (Linux aarch64); run its programs with tools/aarch64-run" >&2
