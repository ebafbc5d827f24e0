#!/usr/bin/env bash
# Parity across architectures: the PP-OCR classifier recorded by the aarch64 build under
# qemu (tools/aarch64-run), then held to it by this x86-64 build with the classifier's
# decision gate and a tensor gate. Usage: aarch64-parity-test.sh HOST_RUNG AARCH64_RUNG MODEL
set -euo pipefail
host_rung="$1" arm_rung="$2" model="$3"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/gate.json" <<'JSON'
{"gates": [{"decoder": "classification", "output": "softmax_0.tmp_0", "activation": "none", "top_k": 1, "min_top1": 1.0, "min_topk": 1.0},
           {"decoder": "tensor", "atol": 1e-4, "rtol": 1e-3}],
 "inputs": {"dims": {"x:0": 1, "x:2": 48, "x:3": 192}}}
JSON
"$here/../tools/aarch64-run" "$arm_rung" parity --ref "$model,ort=1.30.0" --record "$work/arm" --random 6 --seed 11 --gate "$work/gate.json"
grep -q '"architecture": "aarch64"' "$work/arm/side.json" || { echo "the recording does not say aarch64:"; cat "$work/arm/side.json"; exit 1; }
env -u RUNG_ORT_DIR "$host_rung" parity --ref "expected:$work/arm" --inputs "$work/arm" --cand "$model,ort=1.30.0" --gate "$work/gate.json"
