#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and builds rung in ./build. Two modes:
#
#   tools/bootstrap.sh          the main job: the few Debian packages `rung` itself
#                               needs, the pinned ONNX Runtime builds and sample models
#                               (tools/fetch-deps.sh), then only the CLI, its probe
#                               worker, the engine library an application embeds
#                               (librung_engine) and the simulated accelerator; then the
#                               application kit in build/kit (cmake --install).
#   tools/bootstrap.sh --tests  everything the test suite needs on top: GoogleTest,
#                               Google Benchmark, Chromium, PostgreSQL, clang for the
#                               fuzzers, ONNX's backend test data, fonts and images,
#                               the software GPU, the aarch64 cross compiler and qemu,
#                               mingw-w64 and wine; then the whole tree (tests,
#                               benchmarks, fuzzers), the aarch64 build whose tests run
#                               under qemu (build-aarch64; RUNG_SKIP_AARCH64=1 leaves it
#                               out) and the Windows x64 build whose tests run under wine
#                               (build-windows; RUNG_SKIP_WINDOWS=1 leaves it out); then
#                               the quantised forms the bundled variant manifest makes
#                               on this machine (tools/make-forms.sh, once).
#
# Safe to run again: each step does only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=main
case "${1:-}" in
  "") ;;
  --tests) mode=tests ;;
  -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "bootstrap: unknown argument '$1' (expected nothing or --tests)" >&2; exit 2 ;;
esac
started=$SECONDS

# What the CLI links against, and npm for the fetch.
MAIN_PACKAGES=(g++ cmake make pkg-config ca-certificates
               nlohmann-json3-dev libcli11-dev libfmt-dev libssl-dev libsqlite3-dev
               libonnx-dev libprotobuf-dev protobuf-compiler libstb-dev libpq-dev libre2-dev
               # The kit's Python package: numpy, and pip, wheel and venv to make and install its wheel.
               python3-numpy python3-pip python3-wheel python3-setuptools python3-venv)
# What only the tests, benchmarks and fuzzers need.
TEST_PACKAGES=(libgtest-dev libgmock-dev libbenchmark-dev libpng-dev
               chromium python3-jsonschema python3-skimage
               # The Python binding's tests (Debian's /usr/bin/python3, its numpy and pytest).
               python3-numpy python3-pytest
               imagemagick fonts-dejavu-core fonts-liberation2 fonts-freefont-ttf
               postgresql libonnx-testdata
               # The libFuzzer harnesses (fuzz/): clang and its fuzzer and sanitizer runtimes.
               clang libclang-rt-14-dev
               # The stock Vulkan loader, and what the software GPU adapter (Mesa 25's lavapipe,
               # fetched by tools/fetch-deps.sh into the deps cache, never installed) links against.
               libvulkan1 libllvm15 libelf1 libexpat1 libwayland-client0 libx11-xcb1 libxcb1 libxcb-dri3-0
               libxcb-present0 libxcb-randr0 libxcb-shm0 libxcb-sync1 libxcb-xfixes0 libxshmfence1 libzstd1 zlib1g
               # Linux aarch64: the cross compiler and the user-mode emulator the aarch64 subset
               # runs under (the arm64 libraries come as .debs into a private sysroot, never
               # installed: tools/fetch-deps.sh --aarch64).
               g++-aarch64-linux-gnu qemu-user-static
               # tools/mutate.py rebuilds one test binary per mutant; ccache keeps that to seconds.
               ccache
               # libabigail's abidw and abidiff: the C ABI's types against their baseline (tools/check-abi-types.py).
               abigail-tools)

# Windows x64: the mingw-w64 cross compiler (POSIX threads) and wine, for the Windows
# build's tests. Installed on their own: where they cannot be, the Windows build is
# skipped with a message and everything else goes on.
WINDOWS_PACKAGES=(g++-mingw-w64-x86-64-posix wine64)

packages=("${MAIN_PACKAGES[@]}")
[ "$mode" = tests ] && packages+=("${TEST_PACKAGES[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm fetches the pinned tarballs; a Node.js from elsewhere may already bring it.
command -v npm >/dev/null || missing+=(npm)
# The Rust binding's tests build with cargo, offline (the crates have no dependencies);
# a rustup toolchain already on PATH serves, else Debian's.
[ "$mode" = tests ] && { command -v cargo >/dev/null || missing+=(cargo); }

# Say up front what is about to happen and roughly how long it takes (measured on a
# fresh 2-core machine; see the README's "The two commands").
if [ "$mode" = main ]; then
  echo "bootstrap: the main job: ${#missing[@]} Debian packages to install, the pinned ONNX Runtime builds and sample models to fetch (about 120 MB, once), then the CLI, its worker, the engine library and the simulated accelerator to build; seconds when nothing is missing (how long the rest took where it was measured: docs/performance.md)" >&2
else
  echo "bootstrap: the tests: ${#missing[@]} Debian packages to install (Chromium, PostgreSQL, clang, the aarch64 cross compiler and qemu among them; mingw-w64 and wine after them), the software GPU, the arm64 libraries and runtimes and the win32 runtime to fetch, then the whole tree to build (tests, benchmarks, fuzzers), the aarch64 subset and the Windows build, then the quantised forms the bundled manifest makes on this machine; the longest step of the two commands (how long it took where it was measured: docs/performance.md)" >&2
fi

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "bootstrap: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

windows_dir=""
if [ "$mode" = tests ] && [ "${RUNG_SKIP_WINDOWS:-0}" != 1 ] && [ "$(uname -m)" = x86_64 ]; then
  windows_missing=()
  for p in "${WINDOWS_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || windows_missing+=("$p")
  done
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ ${#windows_missing[@]} -eq 0 ]; then
    windows_dir="$PWD/build-windows"
  elif echo "bootstrap: installing ${windows_missing[*]} (about 1.3 GB, once)" >&2 &&
       { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${windows_missing[@]}" >/dev/null; }; then
    windows_dir="$PWD/build-windows"
  else
    echo "bootstrap: SKIPPING the Windows build and its tests under wine: ${windows_missing[*]} could not be installed" >&2
  fi
fi

# The software GPU (lavapipe) serves only `--software-gpu` and its tests.
if [ "$mode" = main ]; then
  RUNG_SKIP_SOFTWARE_GPU="${RUNG_SKIP_SOFTWARE_GPU:-1}" tools/fetch-deps.sh
else
  tools/fetch-deps.sh
fi
# rung quantise's calibration and holdout sets (real prose rendered by ImageMagick,
# seeded, never committed): the tests make them below, with the forms made from
# them; the main job only when asked (RUNG_MAKE_QUANTISE_SETS=1). Skipped when
# already made.
if [ "$mode" = main ] && [ "${RUNG_MAKE_QUANTISE_SETS:-0}" = 1 ]; then
  DEPS="${RUNG_DEPS_DIR:-$HOME/.cache/rung}"
  tools/make-quantise-sets.py --out "$DEPS/data/ocr" --charset "$DEPS/models/ppocr/ppocr_keys_v1.txt"
fi

jobs="$(nproc 2>/dev/null || echo 2)"
# Line tables only (-g1): a crash's backtrace still names files and lines, and a
# first build takes a quarter less than with full debug information.
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
if [ "$mode" = main ]; then
  # A first configure leaves the tests out (their packages may be missing); a tree the
  # tests command already configured keeps its options, and only the main targets build.
  options=()
  [ -f build/CMakeCache.txt ] || options=(-DRUNG_BUILD_TESTS=OFF -DRUNG_BUILD_BENCHMARKS=OFF -DRUNG_BUILD_FUZZERS=OFF)
  cmake -S . -B build "${flags[@]}" "${options[@]}" >/dev/null
  cmake --build build -j"$jobs" --target rung_cli rung_full rung_probe_worker rung_engine rung_sim_ep rung rung_engine_core
else
  # Linux aarch64: cross-built into build-aarch64, its test subset run under qemu by this
  # tree's ctest (aarch64.emulated_subset). Only from an x86-64 machine, where it is emulated.
  aarch64_dir=""
  if [ "${RUNG_SKIP_AARCH64:-0}" != 1 ] && [ "$(uname -m)" = x86_64 ]; then aarch64_dir="$PWD/build-aarch64"; fi
  # The fuzzers are built too, so the test run smoke-runs each (fuzz.* tests).
  cmake -S . -B build "${flags[@]}" \
        -DRUNG_BUILD_TESTS=ON -DRUNG_BUILD_BENCHMARKS=ON -DRUNG_BUILD_FUZZERS=ON "-DRUNG_AARCH64_BUILD_DIR=$aarch64_dir" \
        "-DRUNG_WINDOWS_BUILD_DIR=$windows_dir" >/dev/null
  cmake --build build -j"$jobs"
  [ -z "$aarch64_dir" ] || tools/build-aarch64.sh
  # Windows x64: cross-built into build-windows, its tests run under wine by this tree's
  # ctest (windows.wine_subset).
  [ -z "$windows_dir" ] || tools/build-windows.sh
  # The quantised forms the bundled manifest declares made on the device (the lint of
  # it in ctest reads them): the sets rendered, then rung quantise on this CPU, once.
  tools/make-forms.sh build/rung
fi
# The application kit (README, "The kit"): the engine, its worker, its libraries, a runtime,
# headers, pkg-config, CMake config and the bindings, laid out relocatably in build/kit.
rm -rf build/kit
cmake --install build --prefix "$PWD/build/kit" >/dev/null
elapsed=$((SECONDS - started))
echo "bootstrap: $mode ready in $((elapsed / 60)) min $((elapsed % 60)) s" >&2
